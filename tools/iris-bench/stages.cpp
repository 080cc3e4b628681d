// iris-bench stages (stages.hpp says what it measures).
#include "stages.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "common.hpp"
#include "iris/iris.hpp"
#include "iris/jit.hpp"
#include "iris/size.hpp"

namespace iris::bench {
namespace {

// The two kernels, stage by stage. STAGE selects how much of the call runs; the full
// stage is the library's kernel (its reduction a sum).
constexpr const char* kSource = R"IRIS(
import "ccl/common.iris";

// one_shot_push. STAGE 8: nothing (a launch alone); 0: the epoch; 1: + load src, store dst; 2: + store into the
// peers' scratch; 3: + fence; 4: + tell (fence, flags); 5: + hear, reduce (the whole
// call, without call words); 6: the epoch, tell and hear alone (a flag round, no data);
// 7: the whole call with its call words (announce; agree between tell and hear, as the
// library places it).
kernel push<T: type = bf16, A: type = f32, B: int = 2048, P: int = 2, PMAX: int = 2, STAGE: int = 0>(
    src: tensor<T>[N],
    dst: tensor<T>[N],
    call: int,
    scratch: symmetric tensor<T>[PMAX * 2 * world, M],
    state: tensor<u64>[S],
    flags: symmetric tensor<u64>[F],
) {
    role work(programs: P) {
        let e = 1 as u64;
        if STAGE != 8 { e = program_epoch(state); }
        let row = program * 2 * world + ((e % 2) as int) * world;
        if STAGE == 7 { announce(flags, PMAX * world, program, e, call); }
        if (STAGE >= 1 && STAGE <= 5) || STAGE == 7 {
            for i in blocks(N, B) {
                let j = i - (start(i) / B - start(i) / B / P) * B;
                let v = load(src[i]);
                if STAGE == 1 { store(dst[i], v); }
                if STAGE >= 2 {
                    for k in range(0, world) { store(scratch[row + rank, j], v, to: (rank + k) % world); }
                }
            }
        }
        if STAGE == 3 { fence(); }
        if STAGE >= 4 { tell(flags, 0, e); }
        if STAGE == 7 { agree(flags, PMAX * world, program, e, call); }
        if STAGE >= 5 { hear(flags, 0, e); }
        if STAGE == 5 || STAGE == 7 {
            for i in blocks(N, B) {
                let j = i - (start(i) / B - start(i) / B / P) * B;
                let acc = load(scratch[row, j]) as A;
                for r in range(1, world) { acc = acc + load(scratch[row + r, j]) as A; }
                store(dst[i], acc as T);
            }
        }
    }
}

// one_shot_ll. STAGE 0: the epoch and the words' stores; 1: + poll this rank's own row;
// 2: + poll the peers' rows instead; 3: the whole call without call words (poll every
// row, sum); 4: the whole call with them (announce, agree).
kernel ll<T: type = bf16, A: type = f32, B: int = 512, P: int = 2, PMAX: int = 2, STAGE: int = 0>(
    src: tensor<T>[N],
    dst: tensor<T>[N],
    call: int,
    words: symmetric tensor<u64>[PMAX * 2 * world, M],
    state: tensor<u64>[S],
    flags: symmetric tensor<u64>[F],
) {
    role work(programs: P) {
        let e = program_epoch(state);
        let row = program * 2 * world + ((e % 2) as int) * world;
        if STAGE == 4 { announce(flags, PMAX * world, program, e, call); }
        for i in blocks(N, B) {
            let j = i - (start(i) / B - start(i) / B / P) * B;
            let v = load(src[i]);
            for k in range(0, world) { store(words[row + rank, j], v, to: (rank + k) % world, flag: e); }
        }
        if STAGE == 4 { agree(flags, PMAX * world, program, e, call); }
        if STAGE == 1 {
            for i in blocks(N, B) {
                let j = i - (start(i) / B - start(i) / B / P) * B;
                store(dst[i], load<T>(words[row + rank, j], flag: e));
            }
        }
        if STAGE == 2 {
            for i in blocks(N, B) {
                let j = i - (start(i) / B - start(i) / B / P) * B;
                for r in range(1, world) { store(dst[i], load<T>(words[row + (rank + r) % world, j], flag: e)); }
            }
        }
        if STAGE == 3 || STAGE == 4 {
            for i in blocks(N, B) {
                let j = i - (start(i) / B - start(i) / B / P) * B;
                let acc = load<T>(words[row, j], flag: e) as A;
                for r in range(1, world) { acc = acc + load<T>(words[row + r, j], flag: e) as A; }
                store(dst[i], acc as T);
            }
        }
    }
}
)IRIS";

// A call descriptor (any value; the same on every rank).
constexpr std::int64_t kCall = 0x5240e2f;

struct Stage {
  const char* kernel;
  int stage;
  const char* what;
};
constexpr Stage kStages[] = {
    {"push", 8, "a launch alone (no epoch)"},
    {"push", 0, "one_shot_push: the epoch alone"},
    {"push", 1, "  + load src, store dst"},
    {"push", 2, "  + store into the peers' scratch"},
    {"push", 3, "  + fence"},
    {"push", 4, "  + flags (tell)"},
    {"push", 5, "  + wait (hear), sum: the call"},
    {"push", 6, "  a flag round alone (tell, hear)"},
    {"push", 7, "  the call with its call words"},
    {"ll", 0, "one_shot_ll: the words' stores"},
    {"ll", 1, "  + poll this rank's own row"},
    {"ll", 2, "  + poll the peers' rows instead"},
    {"ll", 3, "  + poll every row, sum: the call"},
    {"ll", 4, "  the call with its call words"},
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int run_stages(const StagesBenchOptions& o) {
  return iris::run(o.options, [&](Context& ctx) {
    if (ctx.on_host()) throw Error("iris-bench stages times CUDA graph replays: run it on GPUs, not the host backend");
    const bool lead = ctx.rank() == 0;
    const std::int64_t W = ctx.world();
    const std::int64_t pmax = std::max(1, ctx.multiprocessors() * 2);
    if (lead) {
      std::printf("# iris-bench stages: one_shot_push and one_shot_ll at %d ranks, bf16, the library's blocks\n"
                  "# (4 KiB of data for push, 512 elements for ll) and programs; per call, the slowest rank's\n"
                  "# median of %d batches of %d calls, eager and replayed from a CUDA graph; 'adds': the graph\n"
                  "# time over the line before\n",
                  ctx.world(), o.iters, o.batch);
    }
    for (std::size_t bytes : o.sizes) {
      const std::int64_t n = static_cast<std::int64_t>(std::max<std::size_t>(bytes / 2, 1));
      auto x = ctx.rand<bfloat16>(static_cast<std::size_t>(n), 7);
      auto y = ctx.zeros<bfloat16>(static_cast<std::size_t>(n));
      if (lead) std::printf("#\n# %s (%lld elements)\n#%-38s %9s %9s %9s\n", format_bytes(bytes).c_str(), static_cast<long long>(n), " stage", "eager us", "graph us", "adds");
      double before = 0;
      for (const Stage& st : kStages) {
        const bool ll = std::string(st.kernel) == "ll";
        const std::int64_t B = ll ? 512 : 2048;
        std::int64_t P = 1;
        while (P < (n + B - 1) / B && P < pmax) P *= 2;
        const std::int64_t M = (n + P * B - 1) / (P * B) * B;
        JitOptions jo;
        jo.defines = {{"STAGE", st.stage}, {"B", B}, {"P", P}, {"PMAX", P}};
        jo.types = {{"T", DType::bf16}, {"A", DType::f32}};
        Program prog = jit_program(ctx, kSource, "stages.iris", jo);
        auto rows = ctx.zeros<std::uint64_t>(Shape{P * 2 * W, ll ? M : (M + 3) / 4});
        auto state = ctx.zeros<std::uint64_t>(static_cast<std::size_t>(P));
        // Six points of P world flags, as a library channel's: the call words at 3, 4, 5.
        auto flags = ctx.zeros<std::uint64_t>(static_cast<std::size_t>(6 * P * W));
        const Arg xs = Arg::device_buffer(x.data(), DType::bf16, Shape{n});
        const Arg ys = Arg::device_buffer(y.data(), DType::bf16, Shape{n});
        const Arg scratch = Arg::heap_buffer(rows.data(), DType::bf16, Shape{P * 2 * W, M}, rows.bytes());
        auto launch = [&] {
          if (ll) prog.launch("ll", {xs, ys, kCall, rows, state, flags});
          else prog.launch("push", {xs, ys, kCall, scratch, state, flags});
        };
        // batch_us and graph_batch_us (common.hpp) give the slowest rank's time; the
        // median of `iters` such batches smooths a noisy one.
        std::vector<double> eager, graph;
        for (int it = 0; it < o.iters; ++it) eager.push_back(batch_us(ctx, launch, it == 0 ? 3 : 0, o.batch));
        for (int it = 0; it < o.iters; ++it) graph.push_back(graph_batch_us(ctx, launch, 1, o.batch));
        const double e = median(eager), g = median(graph);
        if (lead) {
          const bool first = st.stage == 8 || (ll && st.stage == 0) || (!ll && st.stage == 6);
          std::printf(" %-38s %9.2f %9.2f", st.what, e, g);
          if (!first) std::printf(" %+9.2f", g - before);
          std::printf("\n");
          std::fflush(stdout);
        }
        // Stage 6 is timed apart: the push call with words adds to the call without.
        if (ll || st.stage != 6) before = g;
      }
    }
  });
}

}  // namespace iris::bench
