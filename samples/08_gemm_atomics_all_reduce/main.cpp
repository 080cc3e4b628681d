// 08_gemm_atomics_all_reduce: C = sum over ranks of A_r B_r, the GEMM's epilogue adding each tile into every rank's f32 C with atomics.
// Built on the standard library (see ../common/ops_sample.hpp and README.md).
#include "ops_sample.hpp"

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  return library_sample_main(argc, argv,
                             {.name = "08_gemm_atomics_all_reduce",
                              .summary = "C = sum over ranks of A_r B_r (bf16 in, f32 out): the GEMM's epilogue adds each tile into every rank's C with atomics",
                              .op = LibraryOp::matmul_all_reduce,
                              .dtype = DType::bf16,
                              .c_dtype = DType::f32,
                              .options = {.schedule = ops::Schedule::fused},
                              .algorithm = ccl::Algorithm::automatic,
                              .label = "iris atomic"});
}
