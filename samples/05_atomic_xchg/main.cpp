// 05_atomic_xchg: (1) every rank swaps its id into one slot on rank 0; the old values
// plus the final slot value must be exactly {0, 1, ..., world}: each exchange saw the
// previous one. (2) every rank swaps tags into all slots of the next rank; the next
// rank finds the tags, the old values are the ones before. Both checked for the
// hand-written CUDA kernels and atomic_xchg.iris through the CLI, the JIT and the
// embedded header; (2) is timed.
#include <algorithm>

#include "atomic_xchg.iris.hpp"
#include "iris/embedded.hpp"
#include "sample.hpp"

IRIS_DECLARE_EMBEDDED(sample_kernels)

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  // 64 MiB: a timed launch then lasts about 0.4 ms. At 4 MiB it lasts about 35 us and
  // launch cost and rank start-up skew weigh in (see 04_atomic_add).
  SampleSpec spec{"05_atomic_xchg", "remote atomic exchange: a token chain and slot swaps", 64u << 20};
  return sample_main(argc, argv, spec, [](Context& ctx, const SampleArgs& args) {
    const std::size_t n = args.bytes / sizeof(std::uint32_t);
    if (n > (std::size_t{1} << 24)) throw Error("--size: at most 64 MiB here (tags keep the rank in their top 8 bits)");
    const int to = (ctx.rank() + 1) % ctx.world();
    const int from = (ctx.rank() + ctx.world() - 1) % ctx.world();
    const std::uint32_t tag = static_cast<std::uint32_t>(ctx.rank()) << 24;
    auto slot = ctx.zeros<std::uint32_t>(1);
    auto old1 = ctx.zeros<std::uint32_t>(1);
    auto slots = ctx.full<std::uint32_t>(n, 0xFFFFFFFFu);
    auto prev = ctx.zeros<std::uint32_t>(n);
    Kernel token = cuda_kernel(ctx, args, embedded::sample_kernels(), "05_atomic_xchg kernels", "xchg_token");
    Kernel swap = cuda_kernel(ctx, args, embedded::sample_kernels(), "05_atomic_xchg kernels", "xchg_slots");
    const LaunchConfig cfg{grid_for(ctx, n, 256), 256};
    IrisPaths<iris_kernels::atomic_xchg::Kernels> irisc_paths(ctx, args, "atomic_xchg");
    const std::int64_t to64 = to;
    struct Path {
      std::string name;
      std::function<void()> token, swap;
    };
    std::vector<Path> paths{
        {"cuda", [&] { ctx.launch(token, LaunchConfig{1, 32}, slot.data(), old1.data()); },
         [&] { ctx.launch(swap, cfg, slots.data(), prev.data(), static_cast<unsigned long long>(n), to, tag); }},
        {"cli", [&] { irisc_paths.cli->launch("xchg_token", {slot, old1}); }, [&] { irisc_paths.cli->launch("xchg_slots", {slots, prev, to64, tag}); }},
        {"jit", [&] { irisc_paths.jit->launch("xchg_token", {slot, old1}); }, [&] { irisc_paths.jit->launch("xchg_slots", {slots, prev, to64, tag}); }},
        {"embedded", [&] { irisc_paths.embedded->xchg_token(slot, old1); }, [&] { irisc_paths.embedded->xchg_slots(slots, prev, to64, tag); }},
    };
    std::vector<Variant> variants;
    for (Path& p : paths) {
      if (!args.runs(p.name)) continue;
      // (1) the token chain through rank 0's slot, once per path.
      ctx.barrier();
      slot = ctx.zeros<std::uint32_t>(1);
      ctx.barrier();
      p.token();
      ctx.barrier();
      auto olds = ctx.all_gather(old1.to_host()[0]);
      std::uint32_t final_value = 0;
      ctx.copy_to_host(&final_value, slot.on_rank(0), sizeof final_value);
      olds.push_back(final_value);
      std::sort(olds.begin(), olds.end());
      std::vector<std::uint32_t> chain(olds.size());
      for (std::size_t i = 0; i < chain.size(); ++i) chain[i] = static_cast<std::uint32_t>(i);
      expect_equal(olds, chain, p.name + ": token chain (old values + final value)");
      variants.push_back({p.name, p.swap});
    }
    // (2) slot swaps into the next rank.
    Measure m;
    m.reset = [&] {
      ctx.barrier();
      slots = ctx.full<std::uint32_t>(n, 0xFFFFFFFFu);
      ctx.barrier();
    };
    std::vector<std::uint32_t> want_slots(n), want_first(n, 0xFFFFFFFFu), want_later(n);
    for (std::size_t i = 0; i < n; ++i) {
      want_slots[i] = (static_cast<std::uint32_t>(from) << 24) + static_cast<std::uint32_t>(i);
      want_later[i] = tag + static_cast<std::uint32_t>(i);  // the next rank's slots hold my tags after launch 1
    }
    m.validate = [&](int launches) {
      expect_equal(slots.to_host(), want_slots, "slots written by rank " + std::to_string(from));
      expect_equal(prev.to_host(), launches > 1 ? want_later : want_first, "old values of the last swap");
    };
    m.work_per_launch = static_cast<double>(n);
    m.unit = "G exchanges/s";
    run_variants(ctx, args, variants, m);
  });
}
