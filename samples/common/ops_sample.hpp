// The samples built on the standard library (iris/ops.hpp, iris/ccl.hpp) rather than on
// kernels of their own: one op with one schedule, fresh random inputs, a check against
// double-precision sums on sampled entries, and cuBLAS + NCCL as the baseline where ranks
// own their GPUs (NCCL refuses ranks sharing one: the baseline then says SKIPPED, and the
// check still runs).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "gemm_op.hpp"
#include "nccl.hpp"
#include "sample.hpp"
#include "iris/ccl.hpp"
#include "iris/ops.hpp"

namespace iris::samples {

struct LibrarySample {
  const char* name;     // "09_gemm_one_shot_all_reduce"
  const char* summary;  // one line for --help
  LibraryOp op;
  DType dtype = DType::bf16;
  std::optional<DType> c_dtype = std::nullopt;  // C's type where it is not dtype's
  ops::Options options = {};            // the GEMM ops
  ccl::Algorithm algorithm = ccl::Algorithm::automatic;  // all_reduce
  const char* label = "iris";           // the name of the iris line in the results
  // Further forms of the GEMM op, each run, validated and printed under its label.
  std::vector<std::pair<const char*, ops::Options>> also = {};
};

// NCCL for a sample's baseline where it runs (--path takes it, not on the host backend,
// ranks on GPUs of their own); else null, rank 0 having printed the baseline SKIPPED
// with the reason.
std::unique_ptr<Nccl> baseline_nccl(Context& ctx, const SampleArgs& args);

// Parses argv (sample_main's options, plus --m --n --k --check for the GEMM ops), runs
// the op and its baseline on every rank, prints the results; returns sample_main's code.
int library_sample_main(int argc, char** argv, const LibrarySample& s);

}  // namespace iris::samples
