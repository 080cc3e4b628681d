// 12_gemm_reduce_scatter_bulk_synchronous: C_r = rank r's rows of the sum over ranks of A_q B_q: the GEMM announces its tiles, then each rank sums its rows.
// Built on the standard library (see ../common/ops_sample.hpp and README.md).
#include "ops_sample.hpp"

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  return library_sample_main(argc, argv,
                             {.name = "12_gemm_reduce_scatter_bulk_synchronous",
                              .summary = "C_r = rank r's rows of the sum over ranks of A_q B_q: the GEMM announces its tiles, then each rank sums its rows",
                              .op = LibraryOp::matmul_reduce_scatter,
                              .dtype = DType::bf16,
                              .options = {.schedule = ops::Schedule::bulk_synchronous},
                              .algorithm = ccl::Algorithm::automatic,
                              .label = "iris bulk"});
}
