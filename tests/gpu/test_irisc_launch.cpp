// Launch decisions of irisc kernels on GPUs: a `persistent` loop gets exactly as many
// programs as the GPU holds at once (sms * resident, asked of the driver at load), so its
// programs may wait for each other; a grid of sms * 8 programs of a heavy kernel could
// not promise that.
#include <cstring>

#include "gpu_harness.hpp"

namespace iris::test {
namespace {

class IriscLaunch : public GpuTest {};

const char* kCoResident = R"(
kernel co_resident(arrived: symmetric tensor<u64>[1], seen: tensor<i64>[2], x: tensor<f32>[N]) {
    for i in blocks(N, 256) persistent {
        store(x[i], load(x[i]) + 1.0);
    }
    // Every program arrives, then waits for all of them: this ends only when every
    // program of the grid is resident at the same time.
    atomic_add(arrived[0], 1 as u64);
    wait(arrived[0] >= programs as u64);
    if program == 0 {
        store(seen[0], programs);
        store(seen[1], sms);
    }
}
)";

TEST_P(IriscLaunch, PersistentGridIsOneResidentWave) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    Program p = jit_program(ctx, kCoResident, "co_resident.iris");
    constexpr std::int64_t N = 1 << 20;
    auto arrived = ctx.zeros<std::uint64_t>(1);
    auto seen = ctx.zeros<std::int64_t>(2);
    auto x = ctx.zeros<float>(static_cast<std::size_t>(N));
    ctx.barrier();
    // Ranks that share a GPU would split its multiprocessors between their grids, and
    // neither grid could be resident as a whole: only rank 0 launches.
    if (ctx.rank() == 0) {
      p.launch("co_resident", {arrived, seen, x});
      ctx.synchronize();
      const std::vector<std::int64_t> s = seen.to_host();
      const unsigned grid = p.grid_size("co_resident", {{"N", N}});
      require(s[0] == static_cast<std::int64_t>(grid), "programs seen by the kernel: " + std::to_string(s[0]) +
                                                           ", grid_size says " + std::to_string(grid));
      require(s[1] == ctx.multiprocessors(), "sms");
      require(grid % static_cast<unsigned>(ctx.multiprocessors()) == 0 && grid >= static_cast<unsigned>(ctx.multiprocessors()),
              "a whole number of programs per SM: " + std::to_string(grid));
      require(arrived.to_host()[0] == grid, "every program arrived");
      for (float v : x.to_host()) require(v == 1.0f, "every element incremented once");
    }
    ctx.barrier();
  });
}

// wait(all(flag[r] >= e for r in ranks)): every rank tells every rank its call number,
// then waits for all of them (a loop of waits, polled at once), three calls in a row.
const char* kMeet = R"(
kernel meet(flags: symmetric tensor<u64>[W], seen: tensor<u64>[W], e: u64) {
    for r in ranks { signal(flags[rank], e, to: r); }
    wait(all(flags[r] >= e for r in ranks));
    if program == 0 {
        for r in ranks { store(seen[r], load(flags[r])); }
    }
}
)";

TEST_P(IriscLaunch, WaitForAllOfAComprehension) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    Program p = jit_program(ctx, kMeet, "meet.iris");
    const auto w = static_cast<std::size_t>(ctx.world());
    auto flags = ctx.zeros<std::uint64_t>(w);
    auto seen = ctx.zeros<std::uint64_t>(w);
    ctx.barrier();
    for (std::int64_t e = 1; e <= 3; ++e) {
      p.launch("meet", {flags, seen, e});
      ctx.synchronize();
      for (std::uint64_t v : seen.to_host()) require(v >= static_cast<std::uint64_t>(e), "call " + std::to_string(e) + ": a flag below it");
    }
    ctx.barrier();
  });
}

// Data-and-flag words of 16-bit values go two to a word (value 2w in the low 16 bits of
// word w, 2w + 1 above it): a tile of 2048 (8 a thread, the pairs exchanged between
// lanes) and one of 64 (64 threads: one a thread, pairs formed across neighbouring
// threads), a ragged last tile of each (N odd), three calls in a row; the words that
// arrive are checked bit by bit against that layout, the half past the last value 0
// even where the tile was computed (its registers there hold 1, not 0).
const char* kPairs = R"(
kernel pairs(src: tensor<bf16>[N], dst: tensor<bf16>[N], low: tensor<f16>[N], words: symmetric tensor<u64>[2, M], e: u64) {
    for i in blocks(N, 2048) { store(words[0, i], load(src[i]), to: (rank + 1) % world, flag: e); }
    for i in blocks(N, 64) { store(words[1, i], (load(src[i]) + 1.0) as f16, to: (rank + 1) % world, flag: e); }
    for i in blocks(N, 2048) { store(dst[i], load<bf16>(words[0, i], flag: e)); }
    for i in blocks(N, 64) { store(low[i], load<f16>(words[1, i], flag: e)); }
}
)";

TEST_P(IriscLaunch, SixteenBitValuesGoTwoToAWord) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    Program p = jit_program(ctx, kPairs, "pairs.iris");
    constexpr std::size_t N = 1037, M = (N + 1) / 2;
    const int w = ctx.world(), from = (ctx.rank() + w - 1) % w;
    auto value = [](int rank, int call, std::size_t k) {
      return static_cast<float>(static_cast<int>((k * 7 + static_cast<std::size_t>(rank) * 31 + static_cast<std::size_t>(call) * 5) % 509) - 254);
    };
    auto src = ctx.zeros<bfloat16>(N);
    auto dst = ctx.zeros<bfloat16>(N);
    auto low = ctx.zeros<half>(N);
    auto words = ctx.zeros<std::uint64_t>(Shape{2, static_cast<std::int64_t>(M)});
    ctx.barrier();
    for (int call = 1; call <= 3; ++call) {
      std::vector<bfloat16> h(N);
      for (std::size_t k = 0; k < N; ++k) h[k] = bfloat16(value(ctx.rank(), call, k));
      src.copy_from_host(h);
      p.launch("pairs", {src, dst, low, words, static_cast<std::uint64_t>(call)});
      ctx.synchronize();
      const std::vector<bfloat16> d = dst.to_host();
      const std::vector<half> l = low.to_host();
      const std::vector<std::uint64_t> got = words.to_host();
      for (std::size_t k = 0; k < N; ++k) {
        const float want = value(from, call, k);
        require(static_cast<float>(d[k]) == want, "call " + std::to_string(call) + ": bf16 value " + std::to_string(k) + " is " +
                                                      std::to_string(static_cast<float>(d[k])) + ", expected " + std::to_string(want));
        require(static_cast<float>(l[k]) == want + 1, "call " + std::to_string(call) + ": f16 value " + std::to_string(k));
      }
      for (std::size_t j = 0; j < M; ++j) {
        const std::uint64_t lo = bfloat16(value(from, call, 2 * j)).bits;
        const std::uint64_t hi = 2 * j + 1 < N ? bfloat16(value(from, call, 2 * j + 1)).bits : 0;
        const std::uint64_t want = (static_cast<std::uint64_t>(call) << 32) | (hi << 16) | lo;
        require(got[j] == want, "call " + std::to_string(call) + ": word " + std::to_string(j) + " holds " + std::to_string(got[j]) +
                                    ", expected " + std::to_string(want) + " (flag, value 2w + 1, value 2w)");
        const std::uint64_t lo1 = half(value(from, call, 2 * j) + 1).bits;
        const std::uint64_t hi1 = 2 * j + 1 < N ? half(value(from, call, 2 * j + 1) + 1).bits : 0;
        const std::uint64_t want1 = (static_cast<std::uint64_t>(call) << 32) | (hi1 << 16) | lo1;
        require(got[M + j] == want1, "call " + std::to_string(call) + ": f16 word " + std::to_string(j) + " holds " +
                                         std::to_string(got[M + j]) + ", expected " + std::to_string(want1));
      }
      ctx.barrier();
    }
  });
}

// Slots (`send`, `receive`): every value arrives with its own bits, but a value with
// every bit set, which is an empty slot's, goes with its sign bit clear; the slots are
// empty again after the receive, so the next call sends into them as into fresh ones.
// 16-byte accesses (2048 bf16 over 64 threads, 8 a thread) and one element at a time
// (64 f32 over 64 threads), a ragged last tile of each.
const char* kSlots = R"(
kernel slots(src: tensor<bf16>[N], dst: tensor<bf16>[N], fsrc: tensor<f32>[N], fdst: tensor<f32>[N],
             s: symmetric tensor<bf16>[N], f: symmetric tensor<f32>[N]) {
    for i in blocks(N, 2048) { send(s[i], load(src[i]), to: (rank + 1) % world); }
    for i in blocks(N, 64) { send(f[i], load(fsrc[i]), to: (rank + 1) % world); }
    for i in blocks(N, 2048) { store(dst[i], receive(s[i])); }
    for i in blocks(N, 64) { store(fdst[i], receive(f[i])); }
}
)";

TEST_P(IriscLaunch, SlotsCarryEveryValueAndAreEmptyAfterTheReceive) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    Program p = jit_program(ctx, kSlots, "slots.iris");
    constexpr std::size_t N = 5000;
    const int w = ctx.world(), from = (ctx.rank() + w - 1) % w;
    // Element k's bits: the first few are the edge cases, the rest vary by rank and call.
    const auto bits16 = [](int rank, int call, std::size_t k) -> std::uint16_t {
      constexpr std::uint16_t kEdges[] = {0xffff, 0x8000, 0x7f80, 0xfffe, 0x7fff, 0x0000};
      if (k < 6) return kEdges[k];
      return bfloat16(static_cast<float>(static_cast<int>((k * 7 + static_cast<std::size_t>(rank) * 31 + static_cast<std::size_t>(call) * 5) % 509) - 254)).bits;
    };
    const auto bits32 = [](int rank, int call, std::size_t k) -> std::uint32_t {
      constexpr std::uint32_t kEdges[] = {0xffffffffu, 0x80000000u, 0x7f800000u, 0xfffffffeu, 0x7fffffffu, 0u};
      if (k < 6) return kEdges[k];
      return static_cast<std::uint32_t>(k * 2654435761u) ^ (static_cast<std::uint32_t>(rank) << 24) ^ static_cast<std::uint32_t>(call);
    };
    // What arrives: the bits sent, except that all bits set loses its sign bit.
    const auto arrived16 = [](std::uint16_t b) { return b == 0xffff ? std::uint16_t{0x7fff} : b; };
    const auto arrived32 = [](std::uint32_t b) { return b == 0xffffffffu ? 0x7fffffffu : b; };
    auto src = ctx.zeros<bfloat16>(N), dst = ctx.zeros<bfloat16>(N);
    auto fsrc = ctx.zeros<float>(N), fdst = ctx.zeros<float>(N);
    auto s = ctx.zeros<bfloat16>(N);
    auto f = ctx.zeros<float>(N);
    ctx.set_async(s.data(), 0xff, s.bytes());
    ctx.set_async(f.data(), 0xff, f.bytes());
    ctx.barrier();
    for (int call = 1; call <= 3; ++call) {
      std::vector<bfloat16> h(N);
      std::vector<float> hf(N);
      for (std::size_t k = 0; k < N; ++k) {
        h[k].bits = bits16(ctx.rank(), call, k);
        const std::uint32_t b = bits32(ctx.rank(), call, k);
        std::memcpy(&hf[k], &b, 4);
      }
      src.copy_from_host(h);
      fsrc.copy_from_host(hf);
      ctx.barrier();  // every rank's slots are empty (the last call received) before any sends
      p.launch("slots", {src, dst, fsrc, fdst, s, f});
      ctx.synchronize();
      const std::vector<bfloat16> d = dst.to_host(), left = s.to_host();
      const std::vector<float> df = fdst.to_host(), leftf = f.to_host();
      const std::string c = "call " + std::to_string(call) + ": ";
      for (std::size_t k = 0; k < N; ++k) {
        const std::uint16_t want = arrived16(bits16(from, call, k));
        require(d[k].bits == want, c + "bf16 value " + std::to_string(k) + " has bits " + std::to_string(d[k].bits) + ", expected " +
                                       std::to_string(want));
        std::uint32_t got32 = 0;
        std::memcpy(&got32, &df[k], 4);
        const std::uint32_t want32 = arrived32(bits32(from, call, k));
        require(got32 == want32, c + "f32 value " + std::to_string(k) + " has bits " + std::to_string(got32) + ", expected " +
                                     std::to_string(want32));
        std::uint32_t slot32 = 0;
        std::memcpy(&slot32, &leftf[k], 4);
        require(left[k].bits == 0xffff && slot32 == 0xffffffffu, c + "slot " + std::to_string(k) + " is not empty after its receive");
      }
    }
  });
}

// from_row rotates a plain tiles loop's walk (the GEMM's is the Ops tests'): one program
// visits the tile rows from the one holding row r (modulo M) on, wrapping, every tile
// once, and t stays the tile's row-major number. y[i, j] = the visit number of (i, j)'s
// tile; z = its t. Rows past M and below 0 wrap; the last tile row is partial.
const char* kTilesFromRow = R"(kernel walk(y: tensor<i32>[M, N], z: tensor<i32>[M, N], r: int) {
    role one(programs: 1) {
        let k = 0;
        for t, (m, n) in tiles([M, N], [16, 64], from_row: r) {
            store(y[m, n], fill<i32>(k, 16, 64));
            store(z[m, n], fill<i32>(t as i32, 16, 64));
            k = k + 1;
        }
    }
}
)";

TEST_P(IriscLaunch, TilesFromARowWrapAround) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    Program p = jit_program(ctx, kTilesFromRow, "tiles_from_row.iris");
    constexpr int kM = 40, kN = 100, kDown = 3, kAcross = 2;
    for (const std::int64_t r : {std::int64_t{0}, std::int64_t{ctx.rank()} * 17, std::int64_t{39}, std::int64_t{73},
                                 std::int64_t{-1}, std::int64_t{-40}}) {
      auto y = ctx.zeros<std::int32_t>({kM, kN});
      auto z = ctx.zeros<std::int32_t>({kM, kN});
      p.launch("walk", {y, z, r});
      ctx.synchronize();
      const int first = static_cast<int>(((r % kM) + kM) % kM / 16);
      const std::vector<std::int32_t> gy = y.to_host(), gz = z.to_host();
      for (int i = 0; i < kM; ++i) {
        for (int j = 0; j < kN; ++j) {
          const int tr = i / 16, tc = j / 64, visit = (tr - first + kDown) % kDown * kAcross + tc;
          const auto at = static_cast<std::size_t>(i * kN + j);
          require(gy[at] == visit && gz[at] == tr * kAcross + tc,
                  "from_row " + std::to_string(r) + ": (" + std::to_string(i) + ", " + std::to_string(j) + ") visited " +
                      std::to_string(gy[at]) + "th with t " + std::to_string(gz[at]));
        }
      }
    }
  });
}

IRIS_GPU_SUITE(IriscLaunch);

}  // namespace
}  // namespace iris::test
