// flash_decode (iris/ops.hpp, dsl/ops/flash_decode.iris) against a host softmax in f64.
#include <cmath>
#include <string>

#include "gpu_harness.hpp"
#include "iris/ops.hpp"
#include "iris/timing.hpp"

namespace iris::test {
namespace {

class FlashDecode : public GpuTest {};

// flash_decode against a host softmax in f64, fused and unfused: one sequence and
// several, query heads sharing key/value heads, a rank's tokens not a multiple of the
// chunk (and fewer than the splits), called back to back with new inputs, 100 calls
// queued with no host sync, keys and values of 256 MiB, and (CUDA) replayed from a
// graph. Every rank holds L tokens of each sequence; values in [-1, 1].
struct DecodeCase {
  std::int64_t batch, heads, kv_heads, d, len;
  int splits;  // 0: the library's choice

  std::int64_t rows() const { return batch * heads; }
  std::int64_t cols() const { return kv_heads * d; }
  std::int64_t tokens() const { return batch * len; }
  std::string describe() const {
    return "B=" + std::to_string(batch) + " H=" + std::to_string(heads) + " HKV=" + std::to_string(kv_heads) +
           " D=" + std::to_string(d) + " L=" + std::to_string(len) + " splits=" + std::to_string(splits);
  }
};

// Input set `in`: the queries, and rank r's keys (which 0) and values (which 1).
double q_val(std::int64_t i, std::int64_t j, int in) { return static_cast<double>((i * 7 + j * 3 + in * 5) % 17 - 8) / 8.0; }
double kv_val(int r, std::int64_t i, std::int64_t j, int in, int which) {
  return static_cast<double>((r * 13 + i * 5 + j * 11 + in * 3 + which * 7) % 19 - 9) / 9.0;
}

template <class T>
double rounded(double x) {
  return static_cast<float>(static_cast<T>(static_cast<float>(x)));
}

// Row `row` of the output of input set `in` over `world` ranks' tokens, in f64 (an
// online softmax, so that no score vector is held).
template <class T>
std::vector<double> decode_reference(const DecodeCase& c, int world, int in, std::int64_t row) {
  const std::int64_t b = row / c.heads, kh = (row % c.heads) / (c.heads / c.kv_heads);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  std::vector<double> q(static_cast<std::size_t>(c.d)), acc(static_cast<std::size_t>(c.d), 0.0);
  for (std::int64_t j = 0; j < c.d; ++j) q[static_cast<std::size_t>(j)] = rounded<T>(q_val(row, j, in));
  // kv_val takes 19 values: round each once.
  double kv[19];
  for (int x = 0; x < 19; ++x) kv[x] = rounded<T>(static_cast<double>(x - 9) / 9.0);
  double top = -1e300, total = 0;
  for (int r = 0; r < world; ++r) {
    for (std::int64_t t = 0; t < c.len; ++t) {
      const std::int64_t i = b * c.len + t;
      const auto residue = [&](std::int64_t j, int which) {
        return static_cast<int>((r * 13 + i * 5 + (kh * c.d + j) * 11 + in * 3 + which * 7) % 19);
      };
      double s = 0;
      for (std::int64_t j = 0; j < c.d; ++j) s += q[static_cast<std::size_t>(j)] * kv[residue(j, 0)];
      s *= scale;
      if (s > top) {
        const double f = std::exp(top - s);
        total *= f;
        for (double& a : acc) a *= f;
        top = s;
      }
      const double w = std::exp(s - top);
      total += w;
      for (std::int64_t j = 0; j < c.d; ++j) acc[static_cast<std::size_t>(j)] += w * kv[residue(j, 1)];
    }
  }
  for (double& a : acc) a /= total;
  return acc;
}

// q, k, v of one input set on this rank.
template <class T>
struct DecodeInputs {
  Tensor<T> q, k, v;
  DecodeInputs(Context& ctx, const DecodeCase& c)
      : q(ctx.zeros<T>({c.rows(), c.d})), k(ctx.zeros<T>({c.tokens(), c.cols()})), v(ctx.zeros<T>({c.tokens(), c.cols()})) {}
  void fill(Context& ctx, int in) {
    set(q, [&](std::int64_t i, std::int64_t j) { return q_val(i, j, in); });
    set(k, [&](std::int64_t i, std::int64_t j) { return kv_val(ctx.rank(), i, j, in, 0); });
    set(v, [&](std::int64_t i, std::int64_t j) { return kv_val(ctx.rank(), i, j, in, 1); });
  }
};

// out (input set `in`) on `rows`, every row when empty, within T's rounding.
template <class T>
void expect_decoded(Context& ctx, const DecodeCase& c, const Tensor<T>& out, int in, const std::string& what,
                    std::vector<std::int64_t> rows = {}) {
  if (rows.empty()) {
    for (std::int64_t row = 0; row < c.rows(); ++row) rows.push_back(row);
  }
  const std::vector<T> got = out.to_host();
  const double round = std::is_same_v<T, float> ? 1e-5 : 2e-2;
  for (std::int64_t row : rows) {
    const std::vector<double> want = decode_reference<T>(c, ctx.world(), in, row);
    for (std::int64_t j = 0; j < c.d; ++j) {
      const double w = want[static_cast<std::size_t>(j)];
      const double have = static_cast<float>(got[static_cast<std::size_t>(row * c.d + j)]);
      require(std::fabs(have - w) <= round * (1 + std::fabs(w)),
              "flash_decode " + what + " on rank " + std::to_string(ctx.rank()) + ": out[" + std::to_string(row) + ", " +
                  std::to_string(j) + "] = " + std::to_string(have) + ", want " + std::to_string(w));
    }
  }
}

ops::DecodeOptions decode_options(const DecodeCase& c, ops::Schedule s) {
  return {.heads = static_cast<int>(c.heads), .splits = c.splits, .schedule = s};
}

template <class T>
void check_flash_decode(Context& ctx, const DecodeCase& c, ops::Schedule schedule, int calls, bool graph) {
  DecodeInputs<T> x(ctx, c);
  auto out = ctx.zeros<T>({c.rows(), c.d});
  const ops::DecodeOptions o = decode_options(c, schedule);
  std::optional<Graph> g;
  for (int call = 0; call < calls; ++call) {
    const int in = graph ? 0 : call;
    ctx.barrier();
    x.fill(ctx, in);
    set(out, [](std::int64_t, std::int64_t) { return -7.0; });
    ctx.synchronize();
    ctx.barrier();
    if (graph && call == 0) {
      ops::flash_decode(ctx, x.q, x.k, x.v, out, o);  // the eager first call sets up
      ctx.synchronize();
      g.emplace(ctx.stream(), [&] { ops::flash_decode(ctx, x.q, x.k, x.v, out, o); });
    }
    if (g) g->launch(ctx.stream());
    else ops::flash_decode(ctx, x.q, x.k, x.v, out, o);
    ctx.synchronize();
    expect_decoded(ctx, c, out, in, std::string(ops::name(schedule)) + " " + c.describe() + ", call " + std::to_string(call));
  }
}

TEST_P(FlashDecode, FusedAndUnfusedAgainstASoftmax) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const DecodeCase cases[] = {
        {1, 4, 4, 128, 200, 0},  // one sequence, four heads of their own
        {2, 8, 2, 64, 70, 3},    // two sequences, heads in groups of 4; 70 tokens in 3 splits
        {3, 2, 1, 32, 5, 4},     // fewer tokens than splits: some splits are empty
    };
    for (const DecodeCase& c : cases) {
      for (ops::Schedule s : {ops::Schedule::fused, ops::Schedule::unfused}) check_flash_decode<bfloat16>(ctx, c, s, 3, false);
    }
    check_flash_decode<float>(ctx, cases[1], ops::Schedule::fused, 2, false);
    check_flash_decode<half>(ctx, cases[0], ops::Schedule::fused, 2, false);
  });
}

// 100 calls of each schedule with no host sync between them, alternating two input
// sets, each into an output of its own: a call that read a previous call's parts (a
// missing or stale epoch) gives the other set's output.
TEST_P(FlashDecode, HundredCallsQueued) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const DecodeCase c{2, 8, 2, 64, 70, 3};
    constexpr int kCalls = 100;
    std::vector<DecodeInputs<bfloat16>> sets;
    for (int in = 0; in < 2; ++in) {
      sets.emplace_back(ctx, c);
      sets.back().fill(ctx, in);
    }
    for (ops::Schedule s : {ops::Schedule::fused, ops::Schedule::unfused}) {
      std::vector<Tensor<bfloat16>> outs;
      for (int call = 0; call < kCalls; ++call) outs.push_back(ctx.zeros<bfloat16>({c.rows(), c.d}));
      ctx.synchronize();
      ctx.barrier();
      for (int call = 0; call < kCalls; ++call) {
        const DecodeInputs<bfloat16>& x = sets[static_cast<std::size_t>(call % 2)];
        ops::flash_decode(ctx, x.q, x.k, x.v, outs[static_cast<std::size_t>(call)], decode_options(c, s));
      }
      ctx.synchronize();
      for (int call = 0; call < kCalls; ++call) {
        expect_decoded(ctx, c, outs[static_cast<std::size_t>(call)], call % 2,
                       std::string(ops::name(s)) + ", call " + std::to_string(call) + " of " + std::to_string(kCalls) +
                           " queued");
      }
      ctx.barrier();
    }
  });
}

// Keys and values of 256 MiB on every rank: two sequences of 65536 tokens per rank,
// eight key/value heads of 128 (2 KiB a token), the first and last head of each
// sequence checked. CUDA: the host backend interprets every element.
TEST_P(FlashDecode, OfTwoHundredFiftySixMiB) {
  IRIS_REQUIRE_CUDA();
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const DecodeCase c{2, 8, 8, 128, 65536, 0};
    DecodeInputs<bfloat16> x(ctx, c);
    require(x.k.bytes() == std::size_t{256} << 20, "the keys are 256 MiB");
    x.fill(ctx, 1);
    auto out = ctx.zeros<bfloat16>({c.rows(), c.d});
    for (ops::Schedule s : {ops::Schedule::fused, ops::Schedule::unfused}) {
      set(out, [](std::int64_t, std::int64_t) { return -7.0; });
      ctx.synchronize();
      ctx.barrier();
      ops::flash_decode(ctx, x.q, x.k, x.v, out, decode_options(c, s));
      ctx.synchronize();
      expect_decoded(ctx, c, out, 1, std::string(ops::name(s)) + " " + c.describe(), {0, 7, 8, 15});
      ctx.barrier();
    }
  }, std::size_t{640} << 20);
}

TEST_P(FlashDecode, ReplaysInAGraph) {
  IRIS_REQUIRE_CUDA();
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    for (ops::Schedule s : {ops::Schedule::fused, ops::Schedule::unfused}) {
      check_flash_decode<bfloat16>(ctx, {2, 8, 2, 64, 300, 0}, s, 4, true);
    }
  });
}

IRIS_GPU_SUITE(FlashDecode);

}  // namespace
}  // namespace iris::test
