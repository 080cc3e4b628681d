// 08_gemm_atomics_all_reduce: C = sum over ranks of A_r B_r (f32): the GEMM, then every rank adds its partial into every rank's C with atomics.
// Built on the standard library (see ../common/ops_sample.hpp and README.md).
#include "ops_sample.hpp"

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  return library_sample_main(argc, argv,
                             {.name = "08_gemm_atomics_all_reduce",
                              .summary = "C = sum over ranks of A_r B_r (f32): the GEMM, then every rank adds its partial into every rank's C with atomics",
                              .op = LibraryOp::matmul_all_reduce,
                              .dtype = DType::f32,
                              .options = {.schedule = ops::Schedule::unfused, .algorithm = ccl::Algorithm::atomic},
                              .algorithm = ccl::Algorithm::automatic,
                              .label = "iris atomic"});
}
