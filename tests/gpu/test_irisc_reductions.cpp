// irisc's tile reductions on GPUs, on a size that is not a multiple of the tile: masked
// elements read `other:` (so a max over negative data is not 0), and u64 max/min
// compare unsigned through the block's shared scratch.
#include <algorithm>
#include <cmath>
#include <random>

#include "gpu_harness.hpp"

namespace iris::test {
namespace {

class IriscReductions : public GpuTest {};

const char* kReduceTiles = R"(
kernel reduce_tiles<B: int = 256>(
    x: tensor<f32>[N],
    u: tensor<u64>[N],
    out: tensor<f32>[T, 2],
    uout: tensor<u64>[T, 2],
) {
    for i in blocks(N, B) {
        let k = start(i) / B;
        store(out[k, 0], max(load(x[i], other: -3.0e38)));
        store(out[k, 1], min(load(x[i], other: 3.0e38)));
        store(uout[k, 0], max(load(u[i])));
        store(uout[k, 1], min(load(u[i], other: 18446744073709551615)));
    }
}
)";

TEST_P(IriscReductions, MaskedTailsUseOtherAndU64ComparesUnsigned) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    constexpr std::int64_t B = 256, N = 1000, T = (N + B - 1) / B;  // the last tile holds 232
    Program p = jit_program(ctx, kReduceTiles, "reduce_tiles.iris");
    std::mt19937_64 rng(1234 + static_cast<unsigned>(ctx.rank()));
    std::vector<float> x(N);
    std::vector<std::uint64_t> u(N);
    for (std::int64_t e = 0; e < N; ++e) {
      x[static_cast<std::size_t>(e)] = -1.0f - static_cast<float>(rng() % 1000) / 10.0f;  // all < 0
      u[static_cast<std::size_t>(e)] = (1ull << 63) + rng() % 1000000;                  // all >= 2^63
    }
    auto xt = ctx.empty<float>(static_cast<std::size_t>(N));
    auto ut = ctx.empty<std::uint64_t>(static_cast<std::size_t>(N));
    xt.copy_from_host(x);
    ut.copy_from_host(u);
    auto out = ctx.full<float>({T, 2}, 7.0);
    auto uout = ctx.zeros<std::uint64_t>({T, 2});
    p.launch("reduce_tiles", {xt, ut, out, uout});
    ctx.synchronize();
    const std::vector<float> got = out.to_host();
    const std::vector<std::uint64_t> ugot = uout.to_host();
    for (std::int64_t k = 0; k < T; ++k) {
      const auto lo = static_cast<std::size_t>(k * B), hi = static_cast<std::size_t>(std::min(N, (k + 1) * B));
      const float mx = *std::max_element(x.begin() + lo, x.begin() + hi);
      const float mn = *std::min_element(x.begin() + lo, x.begin() + hi);
      const std::uint64_t umx = *std::max_element(u.begin() + lo, u.begin() + hi);
      const std::uint64_t umn = *std::min_element(u.begin() + lo, u.begin() + hi);
      const std::string at = "tile " + std::to_string(k) + " on rank " + std::to_string(ctx.rank());
      require(got[static_cast<std::size_t>(2 * k)] == mx, "f32 max of " + at + ": got " +
                                                              std::to_string(got[static_cast<std::size_t>(2 * k)]) +
                                                              ", want " + std::to_string(mx));
      require(got[static_cast<std::size_t>(2 * k + 1)] == mn, "f32 min of " + at);
      require(ugot[static_cast<std::size_t>(2 * k)] == umx, "u64 max of " + at);
      require(ugot[static_cast<std::size_t>(2 * k + 1)] == umn, "u64 min of " + at);
    }
  });
}

// Reductions of 2-D tiles along an axis, broadcasts back, select, and the loops that
// walk their own work: range(program, n, programs) and chunks(lo, hi, B). Each program
// takes a band of R rows and walks its C-column chunks in order. Per chunk c it stores
// the row sums, row maxima and i32 row minima (axis 1) and the column sums (axis 0) of
// x, and y = select(x > 0, row sum + column maximum, -1). Rows of 16 (narrower than a
// warp) have a kernel of their own: a column reduction of them would be a 1-D tile of 16.
const char* kAxes = R"(
kernel along_axes<R: int = 64, C: int = 128>(
    x: tensor<f32>[M, N],
    xi: tensor<i32>[M, N],
    rsum: tensor<f32>[NC, M],
    rmax: tensor<f32>[NC, M],
    rmin: tensor<i32>[NC, M],
    csum: tensor<f32>[MB, N],
    y: tensor<f32>[M, N],
) {
    for band in range(program, (M + R - 1) / R, programs) {
        for j in chunks(band * R, min(M, band * R + R), R) {
            for n in chunks(0, N, C) {
                let c = start(n) / C;
                let t = load(x[j, n]);
                let rs = sum(t, axis: 1);
                store(rsum[c, j], rs);
                store(rmax[c, j], max(load(x[j, n], other: -3.0e38), axis: 1));
                store(rmin[c, j], min(load(xi[j, n], other: 2147483647), axis: 1));
                store(csum[band, n], sum(t, axis: 0));
                let cm = broadcast(max(load(x[j, n], other: -3.0e38), axis: 0), rows: R);
                store(y[j, n], select(t > 0.0, broadcast(rs, cols: C) + cm, -1.0));
            }
        }
    }
}
)";

TEST_P(IriscReductions, AlongAnAxisBroadcastAndSelect) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    // (R, C): threads = the smallest 1-D tile, raised to 128 so that the 8192-element
    // 2-D tile holds 64 slots a thread: the row sums (and column sums of 32) then take
    // partial layouts, and these cover a row wider than the threads and several rows per
    // slot.
    struct Shape2 { std::int64_t r, c; };
    for (const Shape2 sh : {Shape2{64, 128}, Shape2{32, 256}, Shape2{128, 64}, Shape2{256, 32}}) {
      const std::int64_t R = sh.r, C = sh.c, M = 3 * R - 5, N = 2 * C + 7;  // ragged in both
      const std::int64_t NC = (N + C - 1) / C, MB = (M + R - 1) / R;
      JitOptions jo;
      jo.defines = {{"R", R}, {"C", C}};
      Program p = jit_program(ctx, kAxes, "along_axes.iris", jo);
      std::mt19937 rng(77 + static_cast<unsigned>(ctx.rank()) + static_cast<unsigned>(R));
      std::vector<float> x(static_cast<std::size_t>(M * N));
      std::vector<std::int32_t> xi(x.size());
      for (std::size_t e = 0; e < x.size(); ++e) {
        x[e] = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 64.0f;  // exact sums in f32
        xi[e] = static_cast<std::int32_t>(rng() % 200001) - 100000;
      }
      auto xt = ctx.empty<float>({M, N});
      auto xit = ctx.empty<std::int32_t>({M, N});
      xt.copy_from_host(x);
      xit.copy_from_host(xi);
      auto rsum = ctx.full<float>({NC, M}, 9.0), rmax = ctx.full<float>({NC, M}, 9.0);
      auto rmin = ctx.full<std::int32_t>({NC, M}, 9);
      auto csum = ctx.full<float>({MB, N}, 9.0), y = ctx.full<float>({M, N}, 9.0);
      p.launch("along_axes", {xt, xit, rsum, rmax, rmin, csum, y});
      ctx.synchronize();
      const auto got_rsum = rsum.to_host(), got_rmax = rmax.to_host(), got_csum = csum.to_host(), got_y = y.to_host();
      const auto got_rmin = rmin.to_host();
      const std::string shape = std::to_string(R) + " x " + std::to_string(C) + " on rank " + std::to_string(ctx.rank());
      const auto at = [&](std::int64_t i, std::int64_t j) { return static_cast<std::size_t>(i * N + j); };
      for (std::int64_t c = 0; c < NC; ++c) {
        for (std::int64_t i = 0; i < M; ++i) {
          float s = 0, mx = -3.0e38f;
          std::int32_t mn = 2147483647;
          for (std::int64_t j = c * C; j < std::min(N, c * C + C); ++j) {
            s += x[at(i, j)];
            mx = std::max(mx, x[at(i, j)]);
            mn = std::min(mn, xi[at(i, j)]);
          }
          const std::size_t o = static_cast<std::size_t>(c * M + i);
          require(got_rsum[o] == s, "row sum " + std::to_string(i) + ", chunk " + std::to_string(c) + " of " + shape +
                                        ": got " + std::to_string(got_rsum[o]) + ", want " + std::to_string(s));
          require(got_rmax[o] == mx, "row max " + std::to_string(i) + " of " + shape);
          require(got_rmin[o] == mn, "i32 row min " + std::to_string(i) + " of " + shape);
        }
      }
      for (std::int64_t b = 0; b < MB; ++b) {
        for (std::int64_t j = 0; j < N; ++j) {
          float s = 0;
          for (std::int64_t i = b * R; i < std::min(M, b * R + R); ++i) s += x[at(i, j)];
          require(got_csum[static_cast<std::size_t>(b * N + j)] == s, "column sum " + std::to_string(j) + " of " + shape);
        }
      }
      for (std::int64_t i = 0; i < M; ++i) {
        for (std::int64_t j = 0; j < N; ++j) {
          const std::int64_t c = j / C, b = i / R;
          float cm = -3.0e38f;
          for (std::int64_t k = b * R; k < std::min(M, b * R + R); ++k) cm = std::max(cm, x[at(k, j)]);
          const float want = x[at(i, j)] > 0 ? got_rsum[static_cast<std::size_t>(c * M + i)] + cm : -1.0f;
          require(got_y[at(i, j)] == want, "y[" + std::to_string(i) + ", " + std::to_string(j) + "] of " + shape +
                                               ": got " + std::to_string(got_y[at(i, j)]) + ", want " + std::to_string(want));
        }
      }
    }
  });
}

const char* kRows16 = R"(
kernel rows_of_16(x: tensor<f32>[M, 16], rsum: tensor<f32>[M], y: tensor<f32>[M, 16]) {
    for (m, n) in tiles([M, 16], [256, 16]) {
        let rs = sum(load(x[m, n]), axis: 1);
        store(rsum[m], rs);
        store(y[m, n], broadcast(rs, cols: 16));
    }
}
)";

TEST_P(IriscReductions, AlongRowsNarrowerThanAWarp) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const std::int64_t M = 700;
    Program p = jit_program(ctx, kRows16, "rows_of_16.iris");
    std::mt19937 rng(5 + static_cast<unsigned>(ctx.rank()));
    std::vector<float> x(static_cast<std::size_t>(M * 16));
    for (float& e : x) e = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 64.0f;
    auto xt = ctx.empty<float>({M, 16});
    xt.copy_from_host(x);
    auto rsum = ctx.full<float>({M}, 9.0);
    auto y = ctx.full<float>({M, 16}, 9.0);
    p.launch("rows_of_16", {xt, rsum, y});
    ctx.synchronize();
    const auto got = rsum.to_host(), got_y = y.to_host();
    for (std::int64_t i = 0; i < M; ++i) {
      float s = 0;
      for (std::int64_t j = 0; j < 16; ++j) s += x[static_cast<std::size_t>(i * 16 + j)];
      require(got[static_cast<std::size_t>(i)] == s, "row sum " + std::to_string(i) + ": got " +
                                                          std::to_string(got[static_cast<std::size_t>(i)]) + ", want " +
                                                          std::to_string(s));
      for (std::int64_t j = 0; j < 16; ++j) require(got_y[static_cast<std::size_t>(i * 16 + j)] == s, "broadcast row " + std::to_string(i));
    }
  });
}

// A row's sums beside a large 2-D tile (an RMSNorm over a peer's rows): 64 x 256 f32
// tiles would hold 256 slots a thread over the 64 threads of the 64-element row sums, so
// the program takes 256 threads and the row sums a partial layout (three of four threads
// hold no row). Checked: the normalized rows, the row sums stored through a 1-D view
// (with sentinels past each tile's rows), and a scalar max over the partial tile, whose
// empty slots must not count (every row's -sum is below 0).
const char* kRmsRows = R"(
kernel rms_rows<BM: int = 64, BN: int = 256>(
    x: symmetric tensor<f32>[M, N],
    y: tensor<f32>[M, N],
    ss: tensor<f32>[NC, M],
    top: tensor<f32>[T],
) {
    for t, (m, n) in tiles([M, N], [BM, BN]) {
        let v = load(x[m, n], from: (rank + 1) % world);
        let s = sum(v * v, axis: 1);
        store(y[m, n], v / sqrt(broadcast(s, cols: BN) + 1.0));
        store(ss[start(n) / BN, m], s);
        store(top[t], max(0.0 - s));
    }
}
)";

TEST_P(IriscReductions, RowSumsBesideALargeTileTakeMoreThreads) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const std::int64_t BM = 64, BN = 256, M = 3 * BM, N = 2 * BN + 7, NC = (N + BN - 1) / BN, T = (M / BM) * NC;
    JitOptions jo;
    jo.defines = {{"BM", BM}, {"BN", BN}};
    Program p = jit_program(ctx, kRmsRows, "rms_rows.iris", jo);
    const auto value = [](int r, std::int64_t i, std::int64_t j) {  // k / 64, |k| <= 30: sums of squares are exact
      return static_cast<float>(static_cast<int>((i * 7 + j * 13 + r * 5) % 61) - 30) / 64.0f;
    };
    std::vector<float> x(static_cast<std::size_t>(M * N));
    for (std::int64_t i = 0; i < M; ++i) {
      for (std::int64_t j = 0; j < N; ++j) x[static_cast<std::size_t>(i * N + j)] = value(ctx.rank(), i, j);
    }
    auto xt = ctx.empty<float>({M, N});
    xt.copy_from_host(x);
    auto y = ctx.full<float>({M, N}, 9.0);
    auto ss = ctx.full<float>({NC, M}, 9.0);
    auto top = ctx.full<float>({T}, 9.0);
    ctx.barrier();
    p.launch("rms_rows", {xt, y, ss, top});
    ctx.synchronize();
    ctx.barrier();
    const int peer = (ctx.rank() + 1) % ctx.world();
    const auto got_y = y.to_host(), got_ss = ss.to_host(), got_top = top.to_host();
    for (std::int64_t c = 0; c < NC; ++c) {
      for (std::int64_t b = 0; b < M / BM; ++b) {
        float most = -3.0e38f;
        for (std::int64_t i = b * BM; i < b * BM + BM; ++i) {
          float sum = 0;
          for (std::int64_t j = c * BN; j < std::min(N, c * BN + BN); ++j) sum += value(peer, i, j) * value(peer, i, j);
          const float got = got_ss[static_cast<std::size_t>(c * M + i)];
          require(got == sum, "row sum " + std::to_string(i) + ", chunk " + std::to_string(c) + ": got " +
                                  std::to_string(got) + ", want " + std::to_string(sum));
          most = std::max(most, -sum);
          for (std::int64_t j = c * BN; j < std::min(N, c * BN + BN); ++j) {
            const float want = value(peer, i, j) / std::sqrt(sum + 1.0f);
            const float g = got_y[static_cast<std::size_t>(i * N + j)];
            require(std::abs(g - want) <= 1e-6f * std::max(1.0f, std::abs(want)),
                    "y[" + std::to_string(i) + ", " + std::to_string(j) + "]: got " + std::to_string(g) + ", want " +
                        std::to_string(want));
          }
        }
        const float got = got_top[static_cast<std::size_t>(b * NC + c)];
        require(got == most, "the max over tile (" + std::to_string(b) + ", " + std::to_string(c) + ")'s row sums: got " +
                                 std::to_string(got) + ", want " + std::to_string(most) + " (an empty slot counted?)");
      }
    }
  });
}

IRIS_GPU_SUITE(IriscReductions);

}  // namespace
}  // namespace iris::test
