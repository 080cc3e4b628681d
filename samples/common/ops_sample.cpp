// The standard-library samples (see ops_sample.hpp).
#include "ops_sample.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cublas.hpp"
#include "nccl.hpp"
#include "sample.hpp"

namespace iris::samples {
namespace {

// An entry of the result to check: where, the exact value, and how far the result may be.
struct Entry {
  std::int64_t i, j;
  double want, bound;
};

template <class T>
std::vector<T> host_copy(Context& ctx, const Tensor<T>& t, int rank) {
  std::vector<T> h(static_cast<std::size_t>(t.bytes() / sizeof(T)));
  ctx.copy_to_host(h.data(), t.on_rank(rank), t.bytes());
  return h;
}

template <class T>
double as_double(T v) {
  return static_cast<double>(static_cast<float>(v));
}

// The unit roundoff of T (half an ulp at 1): rounding a value v to T moves it at most
// u |v|.
template <class T>
double unit_roundoff() {
  if constexpr (std::is_same_v<T, float>) return 1.0 / (1 << 24);
  if constexpr (std::is_same_v<T, half>) return 1.0 / (1 << 11);
  return 1.0 / (1 << 9);
}

template <class T>
void check(Context& ctx, const Tensor<T>& c, const std::vector<Entry>& entries) {
  const std::vector<T> got = c.to_host();
  const std::int64_t cols = c.shape().back();
  std::size_t bad = 0;
  std::string first;
  for (const Entry& e : entries) {
    const double g = as_double(got[static_cast<std::size_t>(e.i * cols + e.j)]);
    if (!(std::fabs(g - e.want) <= e.bound)) {
      if (!bad++) {
        first = "C[" + std::to_string(e.i) + ", " + std::to_string(e.j) + "] = " + std::to_string(g) + ", want " +
                std::to_string(e.want) + " +- " + std::to_string(e.bound);
      }
    }
  }
  if (bad) {
    throw Error("validation failed: rank " + std::to_string(ctx.rank()) + ": " + std::to_string(bad) + " of " +
                std::to_string(entries.size()) + " checked entries differ, first " + first);
  }
}

// The GEMM ops: shapes per op, inputs, the sampled exact values, iris and the baseline.
template <class T>
void gemm_op(Context& ctx, const SampleArgs& args, const LibrarySample& s) {
  const std::int64_t W = ctx.world();
  std::int64_t M = args.get("--m");
  const std::int64_t N = args.get("--n"), K = args.get("--k");
  if (s.op == LibraryOp::matmul_reduce_scatter && M % W != 0) {
    M += W - M % W;  // equal row blocks
    report(ctx, "  --m rounded up to " + std::to_string(M) + ", a multiple of the " + std::to_string(W) + " ranks");
  }
  if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX) throw Error("--m, --n, --k: at most 2^31 - 1 (cuBLAS)");
  const bool gathers_a = s.op == LibraryOp::all_gather_matmul;
  auto a = ctx.randn<T>({M, K}, 31);
  auto b = ctx.randn<T>({K, N}, 32);
  if (s.op == LibraryOp::matmul_all_scatter) ctx.broadcast(a, 0);  // one A, every rank its own B
  if (gathers_a) ctx.broadcast(b, 0);                              // every rank its own A, one B
  Shape c_shape{M, N};
  if (s.op == LibraryOp::matmul_reduce_scatter) c_shape = {M / W, N};
  if (s.op == LibraryOp::matmul_all_scatter) c_shape = {M, W * N};
  if (gathers_a) c_shape = {W * M, N};
  auto c = ctx.zeros<T>(c_shape);
  ctx.barrier();

  // Exact values of sampled entries of C, in doubles, from every rank's inputs.
  std::vector<std::vector<T>> as, bs;
  for (int r = 0; r < W; ++r) {
    as.push_back(host_copy(ctx, a, r));
    bs.push_back(host_copy(ctx, b, r));
  }
  const auto dot = [&](int ra, std::int64_t i, int rb, std::int64_t j, double* magnitude) {
    double sum = 0, mag = 0;
    for (std::int64_t k = 0; k < K; ++k) {
      const double p = as_double(as[static_cast<std::size_t>(ra)][static_cast<std::size_t>(i * K + k)]) *
                       as_double(bs[static_cast<std::size_t>(rb)][static_cast<std::size_t>(k * N + j)]);
      sum += p;
      mag += std::fabs(p);
    }
    *magnitude = mag;
    return sum;
  };
  std::vector<Entry> entries;
  std::mt19937_64 rng(91 + static_cast<unsigned>(ctx.rank()));
  const std::int64_t rows = c_shape[0], cols = c_shape[1];
  for (std::int64_t e = 0; e < args.get("--check"); ++e) {
    const auto i = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows));
    const auto j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(cols));
    // Bounds: the f32 accumulation over K (K * 2^-23 of the summed magnitudes), and a
    // rounding to T of every partial and of every partial sum (at most world of them
    // for a sum over ranks: an atomic or ring sum rounds after each addition).
    const double u = unit_roundoff<T>();
    double want = 0, rounded = 0, products = 0, m = 0;
    switch (s.op) {
      case LibraryOp::matmul_all_reduce:
      case LibraryOp::matmul_reduce_scatter: {
        const std::int64_t row = s.op == LibraryOp::matmul_all_reduce ? i : ctx.rank() * rows + i;
        for (int r = 0; r < W; ++r) {
          const double p = dot(r, row, r, j, &m);
          want += p;
          rounded += std::fabs(p);
          products += m;
        }
        rounded *= static_cast<double>(W);
        break;
      }
      case LibraryOp::matmul_all_scatter:
        want = dot(0, i, static_cast<int>(j / N), j % N, &products);
        rounded = std::fabs(want);
        break;
      case LibraryOp::all_gather_matmul:
        want = dot(static_cast<int>(i / M), i % M, 0, j, &products);
        rounded = std::fabs(want);
        break;
      case LibraryOp::all_reduce: break;
    }
    const double accumulation = static_cast<double>(K) * std::ldexp(products, -23);
    entries.push_back({i, j, want, 2 * u * (rounded + std::fabs(want)) + accumulation + 1e-3});
  }

  std::vector<Variant> variants;
  // The baseline: cuBLAS, then NCCL (or NCCL, then cuBLAS), on the rank's stream.
  std::unique_ptr<Nccl> nccl;
  std::unique_ptr<Cublas> cublas;
  std::optional<Tensor<T>> scratch;
  if (args.runs("baseline") && !args.host) {
    std::string why;
    nccl = Nccl::create(ctx, &why);
    if (nccl) cublas = Cublas::load(ctx.stream(), &why);
    const std::vector<char> ok = ctx.all_gather(static_cast<char>(cublas != nullptr));
    for (int r = 0; r < W && why.empty(); ++r) {
      if (!ok[static_cast<std::size_t>(r)]) why = "rank " + std::to_string(r) + " could not load cuBLAS";
    }
    if (!why.empty()) {
      report(ctx, "  baseline  SKIPPED: " + why);
      nccl.reset();
      cublas.reset();
    }
  }
  const DType dt = dtype_of_v<T>;
  const Stream st = ctx.stream();
  // The baseline's all-scatter gathers row blocks [world * M, N]: it is checked there.
  bool gathered_rows = false;
  if (cublas) {
    switch (s.op) {
      case LibraryOp::matmul_all_reduce:
        scratch = ctx.empty<T>({M, N});
        variants.push_back({"baseline", [&] {
                              cublas->gemm(dt, a.data(), b.data(), scratch->data(), M, N, K);
                              nccl->all_reduce(scratch->data(), c.data(), static_cast<std::size_t>(M * N), dt,
                                               ccl::ReduceOp::sum, st);
                            }, "cublas+nccl"});
        break;
      case LibraryOp::matmul_reduce_scatter:
        scratch = ctx.empty<T>({M, N});
        variants.push_back({"baseline", [&] {
                              cublas->gemm(dt, a.data(), b.data(), scratch->data(), M, N, K);
                              nccl->reduce_scatter(scratch->data(), c.data(), static_cast<std::size_t>(M / W * N), dt,
                                                   ccl::ReduceOp::sum, st);
                            }, "cublas+nccl"});
        break;
      case LibraryOp::matmul_all_scatter:
        scratch = ctx.empty<T>({W * M, N});
        variants.push_back({"baseline", [&] {
                              // C's first M rows hold this rank's block; then gathered by rows.
                              cublas->gemm(dt, a.data(), b.data(), c.data(), M, N, K);
                              nccl->all_gather(c.data(), scratch->data(), static_cast<std::size_t>(M * N), dt, st);
                              gathered_rows = true;
                            }, "cublas+nccl"});
        break;
      case LibraryOp::all_gather_matmul:
        scratch = ctx.empty<T>({W * M, K});
        variants.push_back({"baseline", [&] {
                              nccl->all_gather(a.data(), scratch->data(), static_cast<std::size_t>(M * K), dt, st);
                              cublas->gemm(dt, scratch->data(), b.data(), c.data(), W * M, N, K);
                            }, "nccl+cublas"});
        break;
      case LibraryOp::all_reduce: break;
    }
  }
  variants.push_back({"iris", [&] {
                        gathered_rows = false;
                        switch (s.op) {
                          case LibraryOp::matmul_all_reduce: ops::matmul_all_reduce(ctx, a, b, c, s.options); break;
                          case LibraryOp::matmul_reduce_scatter:
                            ops::matmul_reduce_scatter(ctx, a, b, c, s.options);
                            break;
                          case LibraryOp::matmul_all_scatter: ops::matmul_all_scatter(ctx, a, b, c, s.options); break;
                          case LibraryOp::all_gather_matmul: ops::all_gather_matmul(ctx, a, b, c, s.options); break;
                          case LibraryOp::all_reduce: break;
                        }
                      }, s.label});
  Measure m;
  m.reference = "baseline";
  m.reset = [&] {
    ctx.barrier();
    c = ctx.zeros<T>(c_shape);
    ctx.barrier();
  };
  m.validate = [&](int) {
    if (!gathered_rows) return check(ctx, c, entries);
    // [world * M, N] by rows: entry (i, q * N + j) of C is row q * M + i there.
    std::vector<Entry> moved;
    for (const Entry& e : entries) moved.push_back({(e.j / N) * M + e.i, e.j % N, e.want, e.bound});
    check(ctx, *scratch, moved);
  };
  const double flops = 2.0 * static_cast<double>(gathers_a ? W * M : M) * static_cast<double>(N) * static_cast<double>(K);
  m.work_per_launch = flops / 1e3;
  m.unit = "TFLOP/s";
  run_variants(ctx, args, variants, m);
  report(ctx, "  (M, N, K) = (" + std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) + "), " +
                  std::string(dtype_name(dt)) + "; C is [" + std::to_string(rows) + ", " + std::to_string(cols) +
                  "] on every rank; schedule " + ops::name(s.options.schedule) + ", algorithm " +
                  ccl::name(s.options.algorithm));
}

// all_reduce of a vector: every element checked.
template <class T>
void all_reduce_op(Context& ctx, const SampleArgs& args, const LibrarySample& s) {
  const int W = ctx.world();
  const std::size_t n = args.bytes / sizeof(T);
  auto x = ctx.randn<T>(n, 41);
  auto y = ctx.zeros<T>(n);
  ctx.barrier();
  std::vector<double> want(n, 0.0), mag(n, 0.0);
  for (int r = 0; r < W; ++r) {
    const std::vector<T> h = host_copy(ctx, x, r);
    for (std::size_t i = 0; i < n; ++i) {
      want[i] += as_double(h[i]);
      mag[i] += std::fabs(as_double(h[i]));
    }
  }
  std::vector<Entry> entries;
  for (std::size_t i = 0; i < n; ++i) {
    entries.push_back({0, static_cast<std::int64_t>(i), want[i],
                       2 * unit_roundoff<T>() * (W * mag[i] + std::fabs(want[i])) + 1e-6});
  }
  std::vector<Variant> variants;
  std::unique_ptr<Nccl> nccl;
  if (args.runs("baseline") && !args.host) {
    std::string why;
    nccl = Nccl::create(ctx, &why);
    if (!nccl) report(ctx, "  baseline  SKIPPED: " + why);
  }
  const DType dt = dtype_of_v<T>;
  if (nccl) {
    variants.push_back({"baseline", [&] { nccl->all_reduce(x.data(), y.data(), n, dt, ccl::ReduceOp::sum, ctx.stream()); },
                        "nccl"});
  }
  variants.push_back({"iris", [&] { ccl::all_reduce(ctx, x, y, {.algorithm = s.algorithm}); }, s.label});
  Measure m;
  m.reference = "baseline";
  m.reset = [&] {
    ctx.barrier();
    y = ctx.zeros<T>(n);
    ctx.barrier();
  };
  m.validate = [&](int) {
    check(ctx, y, entries);
  };
  m.work_per_launch = static_cast<double>(n * sizeof(T));  // algbw: bytes reduced per rank
  m.unit = "GB/s";
  run_variants(ctx, args, variants, m);
  report(ctx, "  " + std::to_string(n) + " " + std::string(dtype_name(dt)) + " elements per rank (" +
                  std::to_string(n * sizeof(T)) + " bytes), algorithm " + ccl::name(s.algorithm) +
                  "; rates are algbw (bytes per rank / time)");
}

template <class T>
void run_op(Context& ctx, const SampleArgs& args, const LibrarySample& s) {
  if (s.op == LibraryOp::all_reduce) {
    all_reduce_op<T>(ctx, args, s);
  } else {
    gemm_op<T>(ctx, args, s);
  }
}

}  // namespace

int library_sample_main(int argc, char** argv, const LibrarySample& s) {
  SampleSpec spec{s.name, s.summary, 64u << 20, 1, {}};
  spec.host_paths = "iris";
  if (s.op != LibraryOp::all_reduce) {
    // A, B, C and the scratch of the op and of the baseline, for up to 8 ranks.
    const std::size_t esize = dtype_size(s.dtype);
    spec.heap_bytes = [esize](const SampleArgs& a) {
      const auto m = static_cast<std::size_t>(a.get("--m")), n = static_cast<std::size_t>(a.get("--n")),
                 k = static_cast<std::size_t>(a.get("--k"));
      return esize * (m * k + k * n + 3 * 8 * std::max(m * n, m * k)) + (64u << 20);
    };
    spec.default_bytes = 0;
    spec.int_options = {{"--m", "rows of A (of each rank's A for all_gather_matmul)", 4096, 128},
                        {"--n", "columns of B", 4096, 192},
                        {"--k", "columns of A, rows of B", 4096, 64},
                        {"--check", "sampled entries of C checked per rank", 2048, 256}};
  }
  return sample_main(argc, argv, spec, [&s](Context& ctx, const SampleArgs& args) {
    switch (s.dtype) {
      case DType::bf16: run_op<bfloat16>(ctx, args, s); break;
      case DType::f16: run_op<half>(ctx, args, s); break;
      case DType::f32: run_op<float>(ctx, args, s); break;
      default: throw Error("a library sample of " + std::string(dtype_name(s.dtype)) + " elements");
    }
  });
}

}  // namespace iris::samples
