// 09_gemm_one_shot_all_reduce: C = sum over ranks of A_r B_r: the GEMM announces each tile, then a kernel reads every rank's tile and sums (one shot).
// Built on the standard library (see ../common/ops_sample.hpp and README.md).
#include "ops_sample.hpp"

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  return library_sample_main(argc, argv,
                             {.name = "09_gemm_one_shot_all_reduce",
                              .summary = "C = sum over ranks of A_r B_r: the GEMM announces each tile, then a kernel reads every rank's tile and sums (one shot)",
                              .op = LibraryOp::matmul_all_reduce,
                              .dtype = DType::bf16,
                              .options = {.schedule = ops::Schedule::bulk_synchronous, .algorithm = ccl::Algorithm::one_shot},
                              .algorithm = ccl::Algorithm::automatic,
                              .label = "iris 1-shot"});
}
