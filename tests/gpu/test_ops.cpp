// The fused ops of iris/ops.hpp (dsl/ops/) against a host reference in f64: every op
// and schedule, bf16 and f16, ragged tiles, calls back to back without a reset, and
// (CUDA) replays of a captured producer-consumer call. Inputs are small integers; the
// partial products are rounded to the element type before they are summed, so results
// are checked within that rounding.
#include <cmath>
#include <string>

#include "gpu_harness.hpp"
#include "iris/ops.hpp"
#include "iris/timing.hpp"

namespace iris::test {
namespace {

class Ops : public GpuTest {};

constexpr std::int64_t kK = 136, kN = 264, kRowsPerRank = 100;

// Rank r's A [m, K] and B [K, N] for call `call`: integers in [-2, 2].
double a_val(int r, std::int64_t i, std::int64_t k, int call) { return static_cast<double>((r * 5 + i * 3 + k * 7 + call) % 5 - 2); }
double b_val(int r, std::int64_t k, std::int64_t j, int call) { return static_cast<double>((r * 3 + k * 11 + j * 5 + call * 2) % 5 - 2); }

template <class T>
void set(Tensor<T>& t, const std::function<double(std::int64_t, std::int64_t)>& f) {
  const std::int64_t rows = t.shape()[0], cols = t.shape()[1];
  std::vector<T> h(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) h[static_cast<std::size_t>(i * cols + j)] = static_cast<T>(static_cast<float>(f(i, j)));
  }
  t.copy_from_host(h);
}

template <class T>
Tensor<T> make(Context& ctx, std::int64_t rows, std::int64_t cols, const std::function<double(std::int64_t, std::int64_t)>& f) {
  auto t = ctx.empty<T>(Shape{rows, cols});
  set(t, f);
  return t;
}

// Rank r's partial (A_r B_r)[i, j], and the sum over ranks with its rounding bound.
double partial(int r, std::int64_t i, std::int64_t j, int call) {
  double s = 0;
  for (std::int64_t k = 0; k < kK; ++k) s += a_val(r, i, k, call) * b_val(r, k, j, call);
  return s;
}

template <class T>
double eps() {
  return std::is_same_v<T, bfloat16> ? 1.0 / 256 : 1.0 / 2048;
}

template <class T>
void expect_near(const Tensor<T>& t, const std::function<double(std::int64_t, std::int64_t)>& want,
                 const std::function<double(std::int64_t, std::int64_t)>& bound, const std::string& what) {
  const std::vector<T> got = t.to_host();
  const std::int64_t cols = t.shape()[1];
  for (std::size_t x = 0; x < got.size(); ++x) {
    const std::int64_t i = static_cast<std::int64_t>(x) / cols, j = static_cast<std::int64_t>(x) % cols;
    const double g = static_cast<double>(static_cast<float>(got[x])), w = want(i, j);
    if (std::abs(g - w) > bound(i, j)) {
      require(false, what + ": C[" + std::to_string(i) + ", " + std::to_string(j) + "] is " + std::to_string(g) +
                         ", expected " + std::to_string(w));
    }
  }
}

template <class T>
void all_reduce_like(Context& ctx, bool scatter, ops::Schedule s, ccl::Algorithm a, int call) {
  const int w = ctx.world(), r = ctx.rank();
  const std::int64_t m = kRowsPerRank * w;
  auto A = make<T>(ctx, m, kK, [&](auto i, auto k) { return a_val(r, i, k, call); });
  auto B = make<T>(ctx, kK, kN, [&](auto k, auto j) { return b_val(r, k, j, call); });
  const std::int64_t rows = scatter ? m / w : m, row0 = scatter ? r * rows : 0;
  auto C = ctx.zeros<T>(Shape{rows, kN});
  ops::Options o;
  o.schedule = s;
  o.algorithm = a;
  if (scatter) ops::matmul_reduce_scatter(ctx, A, B, C, o); else ops::matmul_all_reduce(ctx, A, B, C, o);
  ctx.synchronize();
  const std::string what = std::string(scatter ? "matmul_reduce_scatter " : "matmul_all_reduce ") + ops::name(s) + " " +
                           ccl::name(a) + " " + std::string(dtype_name(dtype_of_v<T>)) + " call " + std::to_string(call);
  expect_near(C, [&](auto i, auto j) {
    double sum = 0;
    for (int q = 0; q < w; ++q) sum += partial(q, i + row0, j, call);
    return sum;
  }, [&](auto i, auto j) {
    double mag = 0;
    for (int q = 0; q < w; ++q) mag += std::abs(partial(q, i + row0, j, call));
    return eps<T>() * 2 * mag + 1e-9;
  }, what);
}

template <class T>
void every_op(Context& ctx) {
  const int w = ctx.world(), r = ctx.rank();
  using S = ops::Schedule;
  using A = ccl::Algorithm;
  for (auto [s, a] : {std::pair{S::unfused, A::one_shot}, {S::unfused, A::two_shot}, {S::unfused, A::ring},
                      {S::bulk_synchronous, A::one_shot}, {S::bulk_synchronous, A::two_shot},
                      {S::producer_consumer, A::one_shot}, {S::producer_consumer, A::two_shot}}) {
    all_reduce_like<T>(ctx, false, s, a, 0);
  }
  for (auto s : {S::unfused, S::bulk_synchronous, S::producer_consumer}) all_reduce_like<T>(ctx, true, s, A::automatic, 1);

  // matmul_all_scatter: columns q * N.. of C are rank q's A B_q.
  const std::int64_t m = kRowsPerRank * w;
  auto A1 = make<T>(ctx, m, kK, [&](auto i, auto k) { return a_val(0, i, k, 2); });
  auto B1 = make<T>(ctx, kK, kN, [&](auto k, auto j) { return b_val(r, k, j, 2); });
  auto C1 = ctx.zeros<T>(Shape{m, kN * w});
  ops::matmul_all_scatter(ctx, A1, B1, C1);
  ctx.synchronize();
  const auto exact = [&](int q, std::int64_t i, std::int64_t j) {
    double s = 0;
    for (std::int64_t k = 0; k < kK; ++k) s += a_val(0, i, k, 2) * b_val(q, k, j, 2);
    return s;
  };
  expect_near(C1, [&](auto i, auto j) { return exact(static_cast<int>(j / kN), i, j % kN); },
              [&](auto i, auto j) { return eps<T>() * std::abs(exact(static_cast<int>(j / kN), i, j % kN)) + 1e-9; },
              "matmul_all_scatter");

  // all_gather_matmul: rows q * M.. of C are rank q's A_q times this rank's B.
  auto A2 = make<T>(ctx, kRowsPerRank, kK, [&](auto i, auto k) { return a_val(r, i, k, 3); });
  auto B2 = make<T>(ctx, kK, kN, [&](auto k, auto j) { return b_val(0, k, j, 3); });
  auto C2 = ctx.zeros<T>(Shape{kRowsPerRank * w, kN});
  ops::all_gather_matmul(ctx, A2, B2, C2);
  ctx.synchronize();
  const auto gathered = [&](std::int64_t i, std::int64_t j) {
    double s = 0;
    for (std::int64_t k = 0; k < kK; ++k) s += a_val(static_cast<int>(i / kRowsPerRank), i % kRowsPerRank, k, 3) * b_val(0, k, j, 3);
    return s;
  };
  expect_near(C2, gathered, [&](auto i, auto j) { return eps<T>() * std::abs(gathered(i, j)) + 1e-9; }, "all_gather_matmul");
}

TEST_P(Ops, EveryOpAndScheduleBf16) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { every_op<bfloat16>(ctx); });
}

TEST_P(Ops, EveryOpAndScheduleF16) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { every_op<half>(ctx); });
}

TEST_P(Ops, CallsBackToBackWithoutAReset) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    using S = ops::Schedule;
    const S every[] = {S::producer_consumer, S::bulk_synchronous, S::unfused};
    const int calls = on_host_backend() ? 6 : 30;
    for (int call = 0; call < calls; ++call) {
      all_reduce_like<bfloat16>(ctx, call % 2 == 1, every[call % 3], ccl::Algorithm::automatic, call);
    }
  });
}

TEST_P(Ops, RefusesWhatItCannotDo) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    auto A = ctx.zeros<bfloat16>(Shape{64, 32});
    auto B = ctx.zeros<bfloat16>(Shape{32, 64});
    auto C = ctx.zeros<bfloat16>(Shape{64, 65});
    const auto message = [&](const std::function<void()>& f) -> std::string {
      try {
        f();
      } catch (const Error& e) {
        return e.what();
      }
      return "";
    };
    require(message([&] { ops::matmul_all_reduce(ctx, A, B, C); }).find("C is [64, 65], expected [64, 64]") != std::string::npos,
            "a wrong C shape is refused with the shape expected");
    auto C2 = ctx.zeros<bfloat16>(Shape{64, 64 * ctx.world()});
    require(message([&] { ops::matmul_all_scatter(ctx, A, B, C2, {.schedule = ops::Schedule::unfused}); })
                    .find("has no unfused schedule") != std::string::npos,
            "a schedule an op does not have is refused");
    auto C3 = ctx.zeros<bfloat16>(Shape{64, 64});
    require(message([&] { ops::matmul_all_reduce(ctx, A, B, C3, {.block_m = 96}); }).find("96 x 256") != std::string::npos,
            "a tile the GEMM does not have is refused");
  });
}

TEST_P(Ops, ProducerConsumerGraphReplays) {
  IRIS_REQUIRE_CUDA();
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const int w = ctx.world(), r = ctx.rank();
    const std::int64_t m = kRowsPerRank * w;
    auto A = ctx.empty<bfloat16>(Shape{m, kK});
    auto B = ctx.empty<bfloat16>(Shape{kK, kN});
    auto C = ctx.zeros<bfloat16>(Shape{m, kN});
    const auto fill = [&](int call) {
      set(A, [&](auto i, auto k) { return a_val(r, i, k, call); });
      set(B, [&](auto k, auto j) { return b_val(r, k, j, call); });
    };
    ops::Options o;
    o.schedule = ops::Schedule::producer_consumer;
    fill(0);
    ops::matmul_all_reduce(ctx, A, B, C, o);  // the eager first call sets up
    ctx.synchronize();
    Graph g(ctx.stream(), [&] { ops::matmul_all_reduce(ctx, A, B, C, o); });
    for (int call = 1; call <= 5; ++call) {
      fill(call);
      ctx.synchronize();
      ctx.barrier();
      g.launch(ctx.stream());
      ctx.synchronize();
      expect_near(C, [&](auto i, auto j) {
        double s = 0;
        for (int q = 0; q < w; ++q) s += partial(q, i, j, call);
        return s;
      }, [&](auto i, auto j) {
        double mag = 0;
        for (int q = 0; q < w; ++q) mag += std::abs(partial(q, i, j, call));
        return eps<bfloat16>() * 2 * mag + 1e-9;
      }, "graph replay " + std::to_string(call));
      ctx.barrier();
    }
  });
}

IRIS_GPU_SUITE(Ops);

}  // namespace
}  // namespace iris::test
