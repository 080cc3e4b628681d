// 11_gemm_all_reduce_producer_consumer: C = sum over ranks of A_r B_r: the GEMM on one stream, a consumer on another reducing each tile as soon as every rank has it.
// Built on the standard library (see ../common/ops_sample.hpp and README.md).
#include "ops_sample.hpp"

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  return library_sample_main(argc, argv,
                             {.name = "11_gemm_all_reduce_producer_consumer",
                              .summary = "C = sum over ranks of A_r B_r: the GEMM on one stream, a consumer on another reducing each tile as soon as every rank has it",
                              .op = LibraryOp::matmul_all_reduce,
                              .dtype = DType::bf16,
                              .options = {.schedule = ops::Schedule::producer_consumer, .algorithm = ccl::Algorithm::two_shot},
                              .algorithm = ccl::Algorithm::automatic,
                              .label = "iris p-c"});
}
