// One GEMM op of iris/ops.hpp on every rank, as the samples and iris-bench ops run it:
// its operands (random inputs), sampled entries of C with their exact values in double
// precision, the op itself, and its cuBLAS + NCCL baseline on the same buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "iris/context.hpp"
#include "iris/ops.hpp"

namespace iris::samples {

enum class LibraryOp {
  matmul_all_reduce,      // C [M, N] = sum over ranks of A_r [M, K] B_r [K, N]
  matmul_reduce_scatter,  // C [M / world, N]: this rank's rows of that sum
  matmul_all_scatter,     // C [M, world * N] = [A B_0, A B_1, ...], one A on every rank
  all_gather_matmul,      // C [world * M, N] = [A_0; A_1; ...] B, one B on every rank
  all_reduce,             // y = sum over ranks of x_r (iris::ccl::all_reduce)
};
const char* name(LibraryOp op);

// Every rank's A [m, k] and B [k, n].
struct GemmShape {
  std::int64_t m, n, k;
};

class GemmOp {
 public:
  // Allocates A and B (random, from `seed`; the operand every rank shares comes from rank
  // 0) and C on the heap. Collective. matmul_reduce_scatter needs m a multiple of the
  // ranks; bf16, f16 or f32. C is of `dtype`, or of `c_dtype`: f32 with bf16 or f16
  // operands, for matmul_all_reduce's atomic form.
  GemmOp(Context& ctx, LibraryOp op, DType dtype, GemmShape shape, std::uint64_t seed,
         std::optional<DType> c_dtype = std::nullopt);
  ~GemmOp();
  GemmOp(const GemmOp&) = delete;
  GemmOp& operator=(const GemmOp&) = delete;

  Shape c_shape() const;
  double flops() const;  // one call on one rank: 2 M N K (2 world M N K all_gather_matmul)

  // New random inputs from `seed` (collective).
  void fresh_inputs(std::uint64_t seed);
  // Picks `count` entries of C and computes their exact values from every rank's inputs,
  // with what the result may differ by: the f32 accumulation over K, and a rounding to
  // the element type of every partial and partial sum. Collective.
  void sample_entries(int count, std::uint64_t seed);
  // The sampled entries the last call got wrong (this rank's C), and the first of them
  // described in `first`.
  std::size_t wrong(std::string* first = nullptr) const;
  void zero_c();  // collective

  void run_iris(const ops::Options& options);
  // Loads NCCL and cuBLAS on every rank (collective); false, with why, where any rank
  // could not (ranks sharing a GPU: NCCL refuses them).
  bool load_baseline(std::string* why);
  void run_baseline();  // after load_baseline
  // The baseline's GEMM alone, after load_baseline: a lower bound for every schedule,
  // not the op (C is left wrong).
  void run_gemm_alone();
  const char* baseline_label() const;  // "cublas+nccl" or "nccl+cublas"

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace iris::samples
