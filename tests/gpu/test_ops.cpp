// The fused ops of iris/ops.hpp (dsl/ops/) against a host reference in f64: every op
// and schedule (matmul_all_reduce's atomic form into an f32 C, all_gather_matmul's
// push form), bf16 and f16, ragged tiles, calls back to back without a reset (30
// checked one by one, and 100 of each op queued), operands of 256 MiB, and (CUDA)
// every op replayed from CUDA graphs (flash_decode: test_flash_decode.cpp). Inputs are small integers; the
// partial products are rounded to the element type before they are summed, so results
// are checked within that rounding.
#include <cmath>
#include <optional>
#include <string>

#include "gpu_harness.hpp"
#include "iris/ops.hpp"
#include "iris/timing.hpp"

namespace iris::test {
namespace {

class Ops : public GpuTest {};

constexpr std::int64_t kK = 136, kN = 264, kRowsPerRank = 100;

// Rank r's A [m, K] and B [K, N] for call `call`: integers in [-2, 2].
// Entries in -2 .. 2 that differ between ranks (r's factor is coprime to 5), so that an
// op reading another rank's rows than it should gives another C.
double a_val(int r, std::int64_t i, std::int64_t k, int call) { return static_cast<double>((r * 2 + i * 3 + k * 7 + call) % 5 - 2); }
double b_val(int r, std::int64_t k, std::int64_t j, int call) { return static_cast<double>((r * 3 + k * 11 + j * 5 + call * 2) % 5 - 2); }

// Rank r's partial (A_r B_r)[i, j], and the sum over ranks with its rounding bound.
double partial(int r, std::int64_t i, std::int64_t j, int call) {
  double s = 0;
  for (std::int64_t k = 0; k < kK; ++k) s += a_val(r, i, k, call) * b_val(r, k, j, call);
  return s;
}

template <class T>
double eps() {
  return std::is_same_v<T, bfloat16> ? 1.0 / 256 : std::is_same_v<T, half> ? 1.0 / 2048 : 1.0 / (1 << 23);
}

// C[i, j] of a reduction over `world` ranks' partials, and the bf16 error it may carry.
double partials_sum(int world, std::int64_t i, std::int64_t j, int call) {
  double t = 0;
  for (int q = 0; q < world; ++q) t += partial(q, i, j, call);
  return t;
}
double partials_bound(int world, std::int64_t i, std::int64_t j, int call) {
  double mag = 0;
  for (int q = 0; q < world; ++q) mag += std::abs(partial(q, i, j, call));
  return eps<bfloat16>() * 2 * mag + 1e-9;
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

// CT: C's type (T, or f32 for matmul_all_reduce's fused form, which adds in f32).
template <class T, class CT = T>
void all_reduce_like(Context& ctx, bool scatter, ops::Schedule s, ccl::Algorithm a, int call,
                     std::int64_t rows_per_rank = kRowsPerRank) {
  const int w = ctx.world(), r = ctx.rank();
  const std::int64_t m = rows_per_rank * w;
  auto A = make<T>(ctx, m, kK, [&](auto i, auto k) { return a_val(r, i, k, call); });
  auto B = make<T>(ctx, kK, kN, [&](auto k, auto j) { return b_val(r, k, j, call); });
  const std::int64_t rows = scatter ? m / w : m, row0 = scatter ? r * rows : 0;
  auto C = ctx.zeros<CT>(Shape{rows, kN});
  ops::Options o;
  o.schedule = s;
  o.algorithm = a;
  if constexpr (std::is_same_v<T, CT>) {
    if (scatter) ops::matmul_reduce_scatter(ctx, A, B, C, o); else ops::matmul_all_reduce(ctx, A, B, C, o);
  } else {
    ops::matmul_all_reduce(ctx, A, B, C, o);
  }
  ctx.synchronize();
  const std::string what = std::string(scatter ? "matmul_reduce_scatter " : "matmul_all_reduce ") + ops::name(s) + " " +
                           ccl::name(a) + " " + std::string(dtype_name(dtype_of_v<T>)) + " into " +
                           std::string(dtype_name(dtype_of_v<CT>)) + " call " + std::to_string(call);
  expect_near(C, [&](auto i, auto j) {
    double sum = 0;
    for (int q = 0; q < w; ++q) sum += partial(q, i + row0, j, call);
    return sum;
  }, [&](auto i, auto j) {
    double mag = 0;
    for (int q = 0; q < w; ++q) mag += std::abs(partial(q, i + row0, j, call));
    return eps<CT>() * 2 * mag + 1e-9;
  }, what);
}

// matmul_all_scatter of one A [m, k] (rank 0's values) by each rank's B [k, n] with every
// schedule of `schedules`: columns q * n.. of C must be A B_q.
template <class T>
void all_scatter_case(Context& ctx, std::int64_t m, std::int64_t k, std::int64_t n, int call,
                      std::initializer_list<ops::Schedule> schedules, const std::string& what) {
  const int w = ctx.world(), r = ctx.rank();
  auto A = make<T>(ctx, m, k, [&](auto i, auto kk) { return a_val(0, i, kk, call); });
  auto B = make<T>(ctx, k, n, [&](auto kk, auto j) { return b_val(r, kk, j, call); });
  const auto exact = [&](std::int64_t i, std::int64_t j) {
    double sum = 0;
    for (std::int64_t kk = 0; kk < k; ++kk) sum += a_val(0, i, kk, call) * b_val(static_cast<int>(j / n), kk, j % n, call);
    return sum;
  };
  for (ops::Schedule s : schedules) {
    auto C = ctx.zeros<T>(Shape{m, n * w});
    ops::matmul_all_scatter(ctx, A, B, C, {.schedule = s});
    ctx.synchronize();
    expect_near(C, exact, [&](auto i, auto j) { return eps<T>() * std::abs(exact(i, j)) + 1e-9; },
                "matmul_all_scatter " + what + ops::name(s));
    ctx.barrier();
  }
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
  // The fused reduce-scatter stores each GEMM tile to the rank owning its rows: a rank's
  // rows a multiple of the tile's (64 rows where 128 do not divide them), or refused.
  all_reduce_like<T>(ctx, true, S::fused, A::automatic, 5, 192);
  all_reduce_like<T>(ctx, false, S::fused, A::automatic, 8, 192);
  all_reduce_like<T>(ctx, false, S::fused, A::two_shot, 9, 256);
  // Where a rank's rows take whole tiles the tile-by-tile schedules push too (two_shot
  // for matmul_all_reduce): the owner sums its slabs as they become whole.
  for (auto s : {S::bulk_synchronous, S::producer_consumer}) {
    all_reduce_like<T>(ctx, true, s, A::automatic, 10, 192);
    all_reduce_like<T>(ctx, false, s, A::two_shot, 11, 256);
  }
  // One kernel of two roles: tile rows dealt to the ranks in turn (M a multiple of world
  // times the tile's rows: 64-row tiles at 192 rows a rank, 128 at 256).
  all_reduce_like<T>(ctx, false, S::specialized, A::automatic, 12, 192);
  all_reduce_like<T>(ctx, false, S::specialized, A::two_shot, 13, 256);
  // By the copy engines: one GEMM launch per owner's rows, each copied whole into its
  // owner's slab (64-row tiles at 192 rows a rank).
  all_reduce_like<T>(ctx, true, S::copy_engines, A::automatic, 14, 192);
  all_reduce_like<T>(ctx, false, S::copy_engines, A::automatic, 15, 256);
  all_reduce_like<T>(ctx, true, S::fused, A::automatic, 6, 256);
  {
    bool refused = false;
    try {
      all_reduce_like<T>(ctx, true, S::fused, A::automatic, 7, 100);
    } catch (const Error& e) {
      refused = std::string(e.what()).find("must be a multiple of the tile's 64 rows") != std::string::npos;
    }
    require(refused, "a fused matmul_reduce_scatter of 100 rows a rank is refused with a message");
  }
  all_reduce_like<T, float>(ctx, false, S::fused, A::automatic, 4);

  // matmul_all_scatter: columns q * N.. of C are rank q's A B_q.
  all_scatter_case<T>(ctx, kRowsPerRank * w, kK, kN, 2, {S::fused, S::specialized, S::unfused, S::copy_engines}, "");

  // all_gather_matmul: rows q * M.. of C are rank q's A_q times this rank's B.
  auto A2 = make<T>(ctx, kRowsPerRank, kK, [&](auto i, auto k) { return a_val(r, i, k, 3); });
  auto B2 = make<T>(ctx, kK, kN, [&](auto k, auto j) { return b_val(0, k, j, 3); });
  const auto gathered = [&](std::int64_t i, std::int64_t j) {
    double s = 0;
    for (std::int64_t k = 0; k < kK; ++k) s += a_val(static_cast<int>(i / kRowsPerRank), i % kRowsPerRank, k, 3) * b_val(0, k, j, 3);
    return s;
  };
  for (auto s : {S::unfused, S::fused, S::fused_pull, S::copy_engines}) {
    auto C2 = ctx.zeros<T>(Shape{kRowsPerRank * w, kN});
    ops::all_gather_matmul(ctx, A2, B2, C2, {.schedule = s});
    ctx.synchronize();
    expect_near(C2, gathered, [&](auto i, auto j) { return eps<T>() * std::abs(gathered(i, j)) + 1e-9; },
                std::string("all_gather_matmul ") + ops::name(s));
  }
}

TEST_P(Ops, EveryOpAndScheduleBf16) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { every_op<bfloat16>(ctx); });
}

TEST_P(Ops, EveryOpAndScheduleF16) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { every_op<half>(ctx); });
}

// A pushing schedule right after an unfused call: the unfused call's collective (in
// data-and-flag words at this size: no flag round) may still read a rank's partial
// products while a peer that is done already pushes the next call's tiles; the pushes
// go to a scratch of their own (the race checker of the host backend saw the overlap
// when they shared one).
TEST_P(Ops, PushingAfterAnUnfusedCallSharesNoScratch) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    // 128 columns: at 4 ranks the unfused collectives then run in words (16 and 64 KiB).
    const std::int64_t w = ctx.world(), r = ctx.rank(), rows = 64, m = rows * w, n = 128;
    auto A = make<bfloat16>(ctx, m, kK, [&](auto i, auto k) { return a_val(static_cast<int>(r), i, k, 70); });
    auto B = make<bfloat16>(ctx, kK, n, [&](auto k, auto j) { return b_val(static_cast<int>(r), k, j, 70); });
    auto Cs = ctx.zeros<bfloat16>(Shape{rows, n});
    auto Ca = ctx.zeros<bfloat16>(Shape{m, n});
    ctx.barrier();
    // Back to back, no host synchronization between the calls.
    for (int call = 0; call < 3; ++call) {
      ops::matmul_all_reduce(ctx, A, B, Ca, {.schedule = ops::Schedule::unfused});
      ops::matmul_all_reduce(ctx, A, B, Ca, {.schedule = ops::Schedule::bulk_synchronous, .algorithm = ccl::Algorithm::two_shot});
    }
    for (int call = 0; call < 3; ++call) {
      ops::matmul_reduce_scatter(ctx, A, B, Cs, {.schedule = ops::Schedule::unfused});
      ops::matmul_reduce_scatter(ctx, A, B, Cs, {.schedule = ops::Schedule::bulk_synchronous});
    }
    ctx.synchronize();
    const auto sum = [&](std::int64_t i, std::int64_t j) { return partials_sum(static_cast<int>(w), i, j, 70); };
    const auto bound = [&](std::int64_t i, std::int64_t j) { return partials_bound(static_cast<int>(w), i, j, 70); };
    expect_near(Cs, [&](auto i, auto j) { return sum(i + r * rows, j); }, [&](auto i, auto j) { return bound(i + r * rows, j); },
                "matmul_reduce_scatter after unfused calls");
    expect_near(Ca, sum, bound, "matmul_all_reduce after unfused calls");
  });
}

// The copy-engine forms back to back with no host synchronization: each call's copies
// land in the peers' slabs and C while they may still be reading the last call's, unless
// its barriers hold them; two input sets in turn, so a C left by a stale call is wrong.
TEST_P(Ops, CopyEngineCallsBackToBack) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    using S = ops::Schedule;
    const std::int64_t w = ctx.world(), r = ctx.rank(), rows = 128, m = rows * w, n = 256;
    std::vector<Tensor<bfloat16>> As, Bs, Cs, Ca, Cg;
    for (int set = 0; set < 2; ++set) {
      As.push_back(make<bfloat16>(ctx, m, kK, [&](auto i, auto k) { return a_val(static_cast<int>(r), i, k, 80 + set); }));
      Bs.push_back(make<bfloat16>(ctx, kK, n, [&](auto k, auto j) { return b_val(static_cast<int>(r), k, j, 80 + set); }));
      Cs.push_back(ctx.zeros<bfloat16>(Shape{rows, n}));
      Ca.push_back(ctx.zeros<bfloat16>(Shape{m, n}));
      Cg.push_back(ctx.zeros<bfloat16>(Shape{m, n * w}));
    }
    ctx.barrier();
    const int calls = on_host_backend() ? 4 : 12;
    for (int call = 0; call < calls; ++call) {
      const auto set = static_cast<std::size_t>(call % 2);
      ops::matmul_all_reduce(ctx, As[set], Bs[set], Ca[set], {.schedule = S::copy_engines});
      ops::matmul_reduce_scatter(ctx, As[set], Bs[set], Cs[set], {.schedule = S::copy_engines});
      ops::matmul_all_scatter(ctx, As[set], Bs[set], Cg[set], {.schedule = S::copy_engines});
    }
    ctx.synchronize();
    for (int set = 0; set < 2; ++set) {
      const auto sum = [&](std::int64_t i, std::int64_t j) { return partials_sum(static_cast<int>(w), i, j, 80 + set); };
      const auto bound = [&](std::int64_t i, std::int64_t j) { return partials_bound(static_cast<int>(w), i, j, 80 + set); };
      const auto& cs = Cs[static_cast<std::size_t>(set)];
      expect_near(cs, [&](auto i, auto j) { return sum(i + r * rows, j); },
                  [&](auto i, auto j) { return bound(i + r * rows, j); },
                  "matmul_reduce_scatter copy_engines back to back, set " + std::to_string(set));
      expect_near(Ca[static_cast<std::size_t>(set)], sum, bound,
                  "matmul_all_reduce copy_engines back to back, set " + std::to_string(set));
      // Columns q * n.. of the all-scatter's C: rank q's A times its B.
      const auto one = [&](std::int64_t i, std::int64_t j) {
        double t = 0;
        const int q = static_cast<int>(j / n);
        for (std::int64_t k = 0; k < kK; ++k) t += a_val(q, i, k, 80 + set) * b_val(q, k, j % n, 80 + set);
        return t;
      };
      expect_near(Cg[static_cast<std::size_t>(set)], one,
                  [&](auto i, auto j) { return eps<bfloat16>() * std::abs(one(i, j)) + 1e-9; },
                  "matmul_all_scatter copy_engines back to back, set " + std::to_string(set));
    }
  });
}

// The copy-engine forms captured once in a CUDA graph and replayed: their side streams
// forked and joined inside the capture, their flags zeroed by the replay itself.
TEST_P(Ops, CopyEngineFormsReplayInAGraph) {
  IRIS_REQUIRE_CUDA();
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    using S = ops::Schedule;
    const std::int64_t w = ctx.world(), r = ctx.rank(), rows = 128, m = rows * w, n = 256;
    auto A = make<bfloat16>(ctx, m, kK, [&](auto i, auto k) { return a_val(static_cast<int>(r), i, k, 85); });
    auto B = make<bfloat16>(ctx, kK, n, [&](auto k, auto j) { return b_val(static_cast<int>(r), k, j, 85); });
    auto Cs = ctx.zeros<bfloat16>(Shape{rows, n});
    auto Ca = ctx.zeros<bfloat16>(Shape{m, n});
    auto Cg = ctx.zeros<bfloat16>(Shape{m, n * w});
    const auto calls = [&] {
      ops::matmul_reduce_scatter(ctx, A, B, Cs, {.schedule = S::copy_engines});
      ops::matmul_all_reduce(ctx, A, B, Ca, {.schedule = S::copy_engines});
      ops::matmul_all_scatter(ctx, A, B, Cg, {.schedule = S::copy_engines});
    };
    calls();  // the eager first calls set up
    ctx.synchronize();
    Graph g(ctx.stream(), calls);
    const auto sum = [&](std::int64_t i, std::int64_t j) { return partials_sum(static_cast<int>(w), i, j, 85); };
    const auto bound = [&](std::int64_t i, std::int64_t j) { return partials_bound(static_cast<int>(w), i, j, 85); };
    const auto one = [&](std::int64_t i, std::int64_t j) { return partial(static_cast<int>(j / n), i, j % n, 85); };
    for (int rep = 0; rep < 3; ++rep) {
      set(Cs, [](auto, auto) { return -1.0; });
      set(Ca, [](auto, auto) { return -1.0; });
      set(Cg, [](auto, auto) { return -1.0; });
      ctx.synchronize();
      ctx.barrier();
      g.launch(ctx.stream());
      ctx.synchronize();
      const std::string at = " in a graph, replay " + std::to_string(rep);
      expect_near(Cs, [&](auto i, auto j) { return sum(i + r * rows, j); }, [&](auto i, auto j) { return bound(i + r * rows, j); },
                  "matmul_reduce_scatter copy_engines" + at);
      expect_near(Ca, sum, bound, "matmul_all_reduce copy_engines" + at);
      expect_near(Cg, one, [&](auto i, auto j) { return eps<bfloat16>() * std::abs(one(i, j)) + 1e-9; },
                  "matmul_all_scatter copy_engines" + at);
      ctx.barrier();
    }
  });
}

// automatic keeps an algorithm the caller asked for: where it would push (fused, which
// reduces two shot), a one_shot request runs as before instead of being refused.
TEST_P(Ops, AutomaticKeepsAnAskedAlgorithm) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    all_reduce_like<bfloat16>(ctx, false, ops::Schedule::automatic, ccl::Algorithm::one_shot, 60, 256);
    all_reduce_like<bfloat16>(ctx, false, ops::Schedule::automatic, ccl::Algorithm::two_shot, 61, 256);
  });
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

// One op, called `calls` times back to back with no host sync in between: call c takes
// input set c % 2 and writes its own C, so a call that read a previous call's partials
// or flags (a missing or stale epoch) leaves a C of the other set. K = 8 keeps every
// sum an integer of at most 128, exact in bf16: the check is equality.
// C is bf16, or f32 (matmul_all_reduce's atomic form).
struct QueuedC {
  std::optional<Tensor<bfloat16>> bf16;
  std::optional<Tensor<float>> f32;
};

struct Queued {
  const char* name;
  // Runs call c into C (A and B of its input set), and gives C's shape.
  std::function<void(Context&, int c, QueuedC& C)> call;
  Shape c_shape;
  std::function<double(int set, std::int64_t i, std::int64_t j)> want;
  bool f32_c = false;

  QueuedC zeros(Context& ctx) const {
    QueuedC c;
    if (f32_c) c.f32 = ctx.zeros<float>(c_shape); else c.bf16 = ctx.zeros<bfloat16>(c_shape);
    return c;
  }
  // C of input set `set` exactly, or a failure naming `what`.
  void expect(const QueuedC& c, int set, const std::string& what) const {
    const auto want_set = [&](auto i, auto j) { return want(set, i, j); };
    const auto exact = [](auto, auto) { return 0.0; };
    if (c.f32) expect_near(*c.f32, want_set, exact, what); else expect_near(*c.bf16, want_set, exact, what);
  }
};

void fill(QueuedC& c, double v) {
  if (c.f32) set(*c.f32, [v](auto, auto) { return v; }); else set(*c.bf16, [v](auto, auto) { return v; });
}

constexpr std::int64_t kQK = 8, kQN = 320, kQRows = 16;

double dot(int ra, std::int64_t i, int rb, std::int64_t j, int set, std::int64_t k_count) {
  double s = 0;
  for (std::int64_t k = 0; k < k_count; ++k) s += a_val(ra, i, k, set) * b_val(rb, k, j, set);
  return s;
}

void run_queued(Context& ctx, const Queued& q, int calls) {
  std::vector<QueuedC> cs;
  for (int c = 0; c < calls; ++c) cs.push_back(q.zeros(ctx));
  ctx.synchronize();
  ctx.barrier();
  for (int c = 0; c < calls; ++c) q.call(ctx, c, cs[static_cast<std::size_t>(c)]);
  ctx.synchronize();
  for (int c = 0; c < calls; ++c) {
    q.expect(cs[static_cast<std::size_t>(c)], c % 2,
             std::string(q.name) + ", call " + std::to_string(c) + " of " + std::to_string(calls) + " queued");
  }
  ctx.barrier();
}

// Input sets 0 and 1 of this rank (A [m, K], B [K, N], A [kQRows, K]) and the common
// ones (rank 0's), and every op and schedule as a Queued over them.
struct QueuedInputs {
  std::vector<Tensor<bfloat16>> a, b, a0, b0, a_rows;
};

std::vector<Queued> every_queued_op(Context& ctx, QueuedInputs& in, std::int64_t kk = kQK, std::int64_t nn = kQN) {
  const int w = ctx.world(), r = ctx.rank();
  const std::int64_t m = kQRows * w;
  using S = ops::Schedule;
  using A = ccl::Algorithm;
  for (int set = 0; set < 2; ++set) {
    in.a.push_back(make<bfloat16>(ctx, m, kk, [&](auto i, auto k) { return a_val(r, i, k, set); }));
    in.b.push_back(make<bfloat16>(ctx, kk, nn, [&](auto k, auto j) { return b_val(r, k, j, set); }));
    in.a0.push_back(make<bfloat16>(ctx, m, kk, [&](auto i, auto k) { return a_val(0, i, k, set); }));
    in.b0.push_back(make<bfloat16>(ctx, kk, nn, [&](auto k, auto j) { return b_val(0, k, j, set); }));
    in.a_rows.push_back(make<bfloat16>(ctx, kQRows, kk, [&](auto i, auto k) { return a_val(r, i, k, set); }));
  }
  const auto sum = [w, kk](int set, std::int64_t i, std::int64_t j) {
    double s = 0;
    for (int q = 0; q < w; ++q) s += dot(q, i, q, j, set, kk);
    return s;
  };
  std::vector<Queued> out;
  for (auto [s, al] : {std::pair{S::bulk_synchronous, A::one_shot}, {S::bulk_synchronous, A::two_shot},
                       {S::producer_consumer, A::one_shot}, {S::producer_consumer, A::two_shot}, {S::unfused, A::automatic}}) {
    out.push_back({"matmul_all_reduce",
                   [&in, s, al](Context& c, int call, QueuedC& C) {
                     ops::matmul_all_reduce(c, in.a[call % 2], in.b[call % 2], *C.bf16, {.schedule = s, .algorithm = al});
                   },
                   Shape{m, nn}, sum});
  }
  out.push_back({"matmul_all_reduce fused (atomic, f32 C)",
                 [&in](Context& c, int call, QueuedC& C) {
                   ops::matmul_all_reduce(c, in.a[call % 2], in.b[call % 2], *C.f32, {.schedule = S::fused});
                 },
                 Shape{m, nn}, sum, true});
  for (auto s : {S::bulk_synchronous, S::producer_consumer, S::unfused}) {
    out.push_back({"matmul_reduce_scatter",
                   [&in, s](Context& c, int call, QueuedC& C) {
                     ops::matmul_reduce_scatter(c, in.a[call % 2], in.b[call % 2], *C.bf16, {.schedule = s});
                   },
                   Shape{kQRows, nn}, [sum, r](int set, auto i, auto j) { return sum(set, i + r * kQRows, j); }});
  }
  for (auto s : {S::fused, S::specialized, S::unfused, S::copy_engines}) {
    out.push_back({s == S::fused ? "matmul_all_scatter" : s == S::specialized ? "matmul_all_scatter specialized" : s == S::unfused ? "matmul_all_scatter unfused" : "matmul_all_scatter copy_engines",
                   [&in, s](Context& c, int call, QueuedC& C) {
                     ops::matmul_all_scatter(c, in.a0[call % 2], in.b[call % 2], *C.bf16, {.schedule = s});
                   },
                   Shape{m, nn * w},
                   [kk, nn](int set, auto i, auto j) { return dot(0, i, static_cast<int>(j / nn), j % nn, set, kk); }});
  }
  for (auto s : {S::unfused, S::fused, S::fused_pull, S::copy_engines}) {
    out.push_back({s == S::fused          ? "all_gather_matmul fused (push)"
                   : s == S::fused_pull   ? "all_gather_matmul fused (pull)"
                   : s == S::copy_engines ? "all_gather_matmul copy_engines"
                                          : "all_gather_matmul",
                   [&in, s](Context& c, int call, QueuedC& C) {
                     ops::all_gather_matmul(c, in.a_rows[call % 2], in.b0[call % 2], *C.bf16, {.schedule = s});
                   },
                   Shape{m, nn},
                   [kk](int set, auto i, auto j) { return dot(static_cast<int>(i / kQRows), i % kQRows, 0, j, set, kk); }});
  }
  return out;
}

TEST_P(Ops, HundredCallsQueuedWithoutAReset) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    QueuedInputs in;
    for (const Queued& q : every_queued_op(ctx, in)) run_queued(ctx, q, 100);
  });
}

// Rows of K = 12 and N = 100 bf16 elements (24 and 200 bytes): the sm_90a GEMM's TMA
// cannot read them, so the ops' GEMM kernels fall back at launch to their sm_90 build
// (Program::set_fallback, which jit_program sets), the portable path.
// Every op and schedule, two calls each (both input sets).
TEST_P(Ops, EveryOpOnRowsTmaCannotRead) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    QueuedInputs in;
    for (const Queued& q : every_queued_op(ctx, in, 12, 100)) run_queued(ctx, q, 2);
  });
}

// An f16 GEMM + all-scatter of N = 100 columns a rank (B's rows and C's blocks of 200
// bytes, K = 40: A's rows of 80), the shape a user wrote: every schedule runs it on
// sm_90a through the GEMM's fallback and is right.
TEST_P(Ops, F16AllScatterOfAHundredColumns) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    using S = ops::Schedule;
    all_scatter_case<half>(ctx, 200, 40, 100, 14, {S::automatic, S::fused, S::specialized, S::unfused, S::copy_engines},
                           "f16, 100 columns a rank, ");
  });
}

// Every op captured in two CUDA graphs (input set 0 into C0, set 1 into C1) after an
// eager call, then the two replayed back to back, five times, each pair checked.
TEST_P(Ops, EveryOpReplaysInAGraph) {
  IRIS_REQUIRE_CUDA();
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    QueuedInputs in;
    for (const Queued& q : every_queued_op(ctx, in)) {
      std::vector<QueuedC> cs;
      for (int set = 0; set < 2; ++set) cs.push_back(q.zeros(ctx));
      q.call(ctx, 0, cs[0]);  // the eager first call sets up
      ctx.synchronize();
      Graph g0(ctx.stream(), [&] { q.call(ctx, 0, cs[0]); });
      Graph g1(ctx.stream(), [&] { q.call(ctx, 1, cs[1]); });
      for (int rep = 0; rep < 5; ++rep) {
        for (auto& c : cs) fill(c, -1.0);
        ctx.synchronize();
        ctx.barrier();
        g0.launch(ctx.stream());
        g1.launch(ctx.stream());
        ctx.synchronize();
        for (int set = 0; set < 2; ++set) {
          q.expect(cs[static_cast<std::size_t>(set)], set,
                   std::string(q.name) + " in a graph, replay " + std::to_string(rep) + ", set " + std::to_string(set));
        }
        ctx.barrier();
      }
    }
  });
}

// Operands of 256 MiB: C (and the partials P) [8192, 16384] bf16 (M rounded down to a
// multiple of the ranks where the op splits rows), K = 64, entries checked on a sample
// (every 4099th, and the last row and column). CUDA: the host
// backend interprets every element. The heap holds C, the unfused ring's scratch (four
// times C: two halves of 2 world rows of a world-th of it) and the rest.
TEST_P(Ops, TwoHundredFiftySixMiB) {
  IRIS_REQUIRE_CUDA();
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const int w = ctx.world(), r = ctx.rank();
    constexpr std::int64_t kM = 8192, kBigN = 16384, kBigK = 64;
    const auto check = [&](const auto& C, const std::function<double(std::int64_t, std::int64_t)>& want,
                           const std::function<double(std::int64_t, std::int64_t)>& mag, const std::string& what) {
      const auto got = C.to_host();
      using E = typename decltype(got)::value_type;
      const std::int64_t rows = C.shape()[0], cols = C.shape()[1];
      const auto at = [&](std::int64_t i, std::int64_t j) {
        const double g = static_cast<double>(static_cast<float>(got[static_cast<std::size_t>(i * cols + j)]));
        if (std::abs(g - want(i, j)) > eps<E>() * 2 * mag(i, j) + 1e-9) {
          require(false, what + ": C[" + std::to_string(i) + ", " + std::to_string(j) + "] is " + std::to_string(g) +
                             ", expected " + std::to_string(want(i, j)));
        }
      };
      for (std::int64_t x = 0; x < rows * cols; x += 4099) at(x / cols, x % cols);
      for (std::int64_t j = 0; j < cols; j += 7) at(rows - 1, j);
      for (std::int64_t i = 0; i < rows; i += 7) at(i, cols - 1);
    };
    auto A = make<bfloat16>(ctx, kM, kBigK, [&](auto i, auto k) { return a_val(r, i, k, 5); });
    auto B = make<bfloat16>(ctx, kBigK, kBigN, [&](auto k, auto j) { return b_val(r, k, j, 5); });
    const auto sum = [&](auto i, auto j) {
      double s = 0;
      for (int q = 0; q < w; ++q) s += dot(q, i, q, j, 5, kBigK);
      return s;
    };
    const auto mag = [&](auto i, auto j) {
      double s = 0;
      for (int q = 0; q < w; ++q) s += std::abs(dot(q, i, q, j, 5, kBigK));
      return s;
    };
    using S = ops::Schedule;
    using Al = ccl::Algorithm;
    {
      auto C = ctx.zeros<bfloat16>(Shape{kM, kBigN});
      for (auto [s, al] : {std::pair{S::bulk_synchronous, Al::two_shot}, {S::producer_consumer, Al::one_shot},
                           {S::unfused, Al::ring}}) {
        ops::matmul_all_reduce(ctx, A, B, C, {.schedule = s, .algorithm = al});
        ctx.synchronize();
        check(C, sum, mag, std::string("matmul_all_reduce of 256 MiB, ") + ops::name(s) + " " + ccl::name(al));
        ctx.barrier();
      }
    }
    {
      // The atomic form into an f32 C of 256 MiB: [8192, 8192], B's first 8192 columns.
      constexpr std::int64_t kHalfN = kBigN / 2;
      auto Bh = make<bfloat16>(ctx, kBigK, kHalfN, [&](auto k, auto j) { return b_val(r, k, j, 5); });
      auto C = ctx.zeros<float>(Shape{kM, kHalfN});
      ops::matmul_all_reduce(ctx, A, Bh, C, {.schedule = S::fused});
      ctx.synchronize();
      check(C, sum, mag, "matmul_all_reduce of 256 MiB, fused (atomic, f32 C)");
      ctx.barrier();
    }
    {
      const std::int64_t rows = kM / w;  // M = rows * world: 8190 at 3 ranks
      auto A3 = make<bfloat16>(ctx, rows * w, kBigK, [&](auto i, auto k) { return a_val(r, i, k, 5); });
      auto C = ctx.zeros<bfloat16>(Shape{rows, kBigN});
      // By the copy engines too where a rank's rows take whole tiles (not at 3 ranks).
      for (auto s : {S::automatic, S::copy_engines}) {
        if (s == S::copy_engines && rows % 128 != 0) continue;
        ops::matmul_reduce_scatter(ctx, A3, B, C, {.schedule = s});
        ctx.synchronize();
        check(C, [&](auto i, auto j) { return sum(i + r * rows, j); },
              [&](auto i, auto j) { return mag(i + r * rows, j); },
              std::string("matmul_reduce_scatter of 256 MiB, ") + ops::name(s));
        ctx.barrier();
      }
    }
    {
      const std::int64_t n = kBigN / w;
      auto B1 = make<bfloat16>(ctx, kBigK, n, [&](auto k, auto j) { return b_val(r, k, j, 6); });
      auto A1 = make<bfloat16>(ctx, kM, kBigK, [&](auto i, auto k) { return a_val(0, i, k, 6); });
      auto C = ctx.zeros<bfloat16>(Shape{kM, n * w});
      const auto one = [&](auto i, auto j) { return dot(0, i, static_cast<int>(j / n), j % n, 6, kBigK); };
      for (auto s : {S::fused, S::specialized, S::unfused, S::copy_engines}) {
        ops::matmul_all_scatter(ctx, A1, B1, C, {.schedule = s});
        ctx.synchronize();
        check(C, one, [&](auto i, auto j) { return std::abs(one(i, j)); },
              std::string("matmul_all_scatter of 256 MiB, ") + ops::name(s));
        ctx.barrier();
      }
    }
    {
      const std::int64_t rows = kM / w;
      auto A2 = make<bfloat16>(ctx, rows, kBigK, [&](auto i, auto k) { return a_val(r, i, k, 7); });
      auto B2 = make<bfloat16>(ctx, kBigK, kBigN, [&](auto k, auto j) { return b_val(0, k, j, 7); });
      auto C = ctx.zeros<bfloat16>(Shape{rows * w, kBigN});
      const auto one = [&](auto i, auto j) { return dot(static_cast<int>(i / rows), i % rows, 0, j, 7, kBigK); };
      for (auto s : {S::unfused, S::fused, S::fused_pull, S::copy_engines}) {
        ops::all_gather_matmul(ctx, A2, B2, C, {.schedule = s});
        ctx.synchronize();
        check(C, one, [&](auto i, auto j) { return std::abs(one(i, j)); },
              std::string("all_gather_matmul of 256 MiB, ") + ops::name(s));
        ctx.barrier();
      }
    }
  }, std::size_t{2560} << 20);
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
    require(message([&] { ops::matmul_all_scatter(ctx, A, B, C2, {.schedule = ops::Schedule::bulk_synchronous}); })
                    .find("has no bulk_synchronous schedule") != std::string::npos,
            "a schedule an op does not have is refused");
    require(message([&] { ops::matmul_all_scatter(ctx, A, B, C2, {.schedule = ops::Schedule::fused_pull}); })
                    .find("has no fused_pull schedule") != std::string::npos,
            "the pull form belongs to all_gather_matmul alone");
    auto C3 = ctx.zeros<bfloat16>(Shape{64, 64});
    require(message([&] { ops::matmul_all_reduce(ctx, A, B, C3, {.block_m = 96, .block_n = 256}); }).find("96 x 256") != std::string::npos,
            "a tile the GEMM does not have is refused");
    auto C4 = ctx.zeros<float>(Shape{64, 64});
    require(message([&] { ops::matmul_all_reduce(ctx, A, B, C4, {.schedule = ops::Schedule::bulk_synchronous}); })
                    .find("into an f32 C has no bulk_synchronous schedule (it has fused)") != std::string::npos,
            "an f32 C with bf16 operands takes the atomic (fused) form alone");
    // Into a C of A's type the fused form pushes tiles to their owners and reduces two
    // shot, a rank's rows a multiple of 64.
    require(message([&] {
              ops::matmul_all_reduce(ctx, A, B, C3, {.schedule = ops::Schedule::fused, .algorithm = ccl::Algorithm::one_shot});
            }).find("reduces two shot, not one_shot") != std::string::npos,
            "the fused form into a bf16 C refuses another algorithm");
    require(message([&] { ops::matmul_all_reduce(ctx, A, B, C3, {.schedule = ops::Schedule::specialized, .block_m = 128, .block_n = 128}); })
                    .find("must be a multiple of world x the tile's rows") != std::string::npos,
            "the specialized matmul_all_reduce refuses rows that do not deal into whole tiles");
    if (ctx.world() > 1) {
      // M = 64: at 3 ranks not split evenly at all, at 2 and 4 into rows short of a tile.
      const char* why = 64 % ctx.world() != 0 ? "must be a positive multiple of the ranks"
                                              : "must be a multiple of the tile's 64 rows";
      require(message([&] { ops::matmul_all_reduce(ctx, A, B, C3, {.schedule = ops::Schedule::fused}); }).find(why) !=
                  std::string::npos,
              "the fused form into a bf16 C refuses ranks' rows that do not take whole tiles");
    }
    require(message([&] { ops::matmul_all_reduce(ctx, A, B, C4, {.schedule = ops::Schedule::fused, .algorithm = ccl::Algorithm::ring}); })
                    .find("reduces with atomics, not ring") != std::string::npos,
            "the atomic form with another algorithm is refused");
    // M not a multiple of the ranks: the rows past world (M / world) would have no owner.
    // The forms that push to owners refuse it; automatic takes a form that does not push.
    if (ctx.world() > 1) {
      const std::int64_t w = ctx.world(), m = 64 * w + 1;
      auto Am = make<bfloat16>(ctx, m, kK, [&](auto i, auto k) { return a_val(static_cast<int>(ctx.rank()), i, k, 90); });
      auto Bm = make<bfloat16>(ctx, kK, 64, [&](auto k, auto j) { return b_val(static_cast<int>(ctx.rank()), k, j, 90); });
      auto Cm = ctx.zeros<bfloat16>(Shape{m, 64});
      for (auto s : {ops::Schedule::fused, ops::Schedule::copy_engines}) {
        require(message([&] { ops::matmul_all_reduce(ctx, Am, Bm, Cm, {.schedule = s}); })
                        .find("must be a positive multiple of the ranks") != std::string::npos,
                std::string("matmul_all_reduce ") + ops::name(s) + " refuses M = 64 world + 1");
      }
      ops::matmul_all_reduce(ctx, Am, Bm, Cm);
      ctx.synchronize();
      expect_near(Cm, [&](auto i, auto j) { return partials_sum(static_cast<int>(w), i, j, 90); },
                  [&](auto i, auto j) { return partials_bound(static_cast<int>(w), i, j, 90); },
                  "matmul_all_reduce automatic of M = 64 world + 1");
      ctx.barrier();
    }
  });
}

IRIS_GPU_SUITE(Ops);

}  // namespace
}  // namespace iris::test
