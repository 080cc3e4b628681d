// The standard-library samples (see ops_sample.hpp).
#include "ops_sample.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "exact.hpp"
#include "nccl.hpp"
#include "sample.hpp"

namespace iris::samples {
namespace {

template <class T>
void check(Context& ctx, const Tensor<T>& c, const std::vector<Entry>& entries) {
  std::string first;
  if (const std::size_t bad = count_wrong(c.to_host(), c.shape().back(), entries, &first)) {
    throw Error("validation failed: rank " + std::to_string(ctx.rank()) + ": " + std::to_string(bad) + " of " +
                std::to_string(entries.size()) + " checked entries differ, first " + first);
  }
}

// The GEMM ops (gemm_op.hpp): iris and the baseline on the same operands.
void gemm_op(Context& ctx, const SampleArgs& args, const LibrarySample& s) {
  const std::int64_t W = ctx.world();
  std::int64_t M = args.get("--m");
  const std::int64_t N = args.get("--n"), K = args.get("--k");
  if (s.op == LibraryOp::matmul_reduce_scatter && M % W != 0) {
    M += W - M % W;  // equal row blocks
    report(ctx, "  --m rounded up to " + std::to_string(M) + ", a multiple of the " + std::to_string(W) + " ranks");
  }
  GemmOp op(ctx, s.op, s.dtype, {M, N, K}, 31, s.c_dtype);
  const int checks = static_cast<int>(args.get("--check"));
  op.sample_entries(checks, 91);

  std::vector<Variant> variants;
  if (args.runs("baseline") && !args.host) {
    std::string why;
    if (op.load_baseline(&why)) {
      variants.push_back({"baseline", [&] { op.run_baseline(); }, op.baseline_label()});
    } else {
      report(ctx, "  baseline  SKIPPED: " + why);
    }
  }
  variants.push_back({"iris", [&] { op.run_iris(s.options); }, s.label});
  for (const auto& [label, options] : s.also) variants.push_back({"iris", [&op, &options] { op.run_iris(options); }, label});
  Measure m;
  m.reference = "baseline";
  m.reset = [&] { op.zero_c(); };
  m.validate = [&](int) {
    std::string first;
    if (const std::size_t bad = op.wrong(&first)) {
      throw Error("validation failed: rank " + std::to_string(ctx.rank()) + ": " + std::to_string(bad) + " of " +
                  std::to_string(checks) + " checked entries differ, first " + first);
    }
  };
  m.work_per_launch = op.flops() / 1e3;
  m.unit = "TFLOP/s";
  run_variants(ctx, args, variants, m);
  const Shape c = op.c_shape();
  report(ctx, "  (M, N, K) = (" + std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) + "), " +
                  std::string(dtype_name(s.dtype)) + "; C is " + std::string(dtype_name(s.c_dtype.value_or(s.dtype))) + " [" + std::to_string(c[0]) + ", " + std::to_string(c[1]) +
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
  std::unique_ptr<Nccl> nccl = baseline_nccl(ctx, args);
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
    gemm_op(ctx, args, s);
  }
}

}  // namespace

std::unique_ptr<Nccl> baseline_nccl(Context& ctx, const SampleArgs& args) {
  if (!args.runs("baseline") || args.host) return nullptr;
  std::string why;
  std::unique_ptr<Nccl> nccl = Nccl::create(ctx, &why);
  if (!nccl) report(ctx, "  baseline  SKIPPED: " + why);
  return nccl;
}

int library_sample_main(int argc, char** argv, const LibrarySample& s) {
  SampleSpec spec{s.name, s.summary, 64u << 20, 1, {}};
  spec.paths = "iris,baseline";
  spec.paths_help = "iris (the library op, every form the sample shows),\n"
                    "                  baseline (NCCL, and cuBLAS for the GEMMs)";
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
