// The samples built on the standard library (iris/ops.hpp, iris/ccl.hpp) rather than on
// kernels of their own: one op with one schedule, fresh random inputs, a check against
// double-precision sums on sampled entries, and cuBLAS + NCCL as the baseline where ranks
// own their GPUs (NCCL refuses ranks sharing one: the baseline then says SKIPPED, and the
// check still runs).
#pragma once

#include "iris/ccl.hpp"
#include "iris/ops.hpp"

namespace iris::samples {

enum class LibraryOp {
  matmul_all_reduce,      // C [M, N] = sum over ranks of A_r [M, K] B_r [K, N]
  matmul_reduce_scatter,  // C [M / world, N]: this rank's rows of that sum
  matmul_all_scatter,     // C [M, world * N] = [A B_0, A B_1, ...], one A on every rank
  all_gather_matmul,      // C [world * M, N] = [A_0; A_1; ...] B, one B on every rank
  all_reduce,             // y = sum over ranks of x_r (iris::ccl::all_reduce)
};

struct LibrarySample {
  const char* name;     // "09_gemm_one_shot_all_reduce"
  const char* summary;  // one line for --help
  LibraryOp op;
  DType dtype = DType::bf16;
  ops::Options options = {};            // the GEMM ops
  ccl::Algorithm algorithm = ccl::Algorithm::automatic;  // all_reduce
  const char* label = "iris";           // the name of the iris line in the results
};

// Parses argv (sample_main's options, plus --m --n --k --check for the GEMM ops), runs
// the op and its baseline on every rank, prints the results; returns sample_main's code.
int library_sample_main(int argc, char** argv, const LibrarySample& s);

}  // namespace iris::samples
