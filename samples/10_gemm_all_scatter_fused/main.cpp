// 10_gemm_all_scatter_fused: C = [A B_0, A B_1, ...] on every rank: the GEMM's epilogue stores each tile into every rank.
// Built on the standard library (see ../common/ops_sample.hpp and README.md).
#include "ops_sample.hpp"

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  return library_sample_main(argc, argv,
                             {.name = "10_gemm_all_scatter_fused",
                              .summary = "C = [A B_0, A B_1, ...] on every rank: the GEMM's epilogue stores each tile into every rank",
                              .op = LibraryOp::matmul_all_scatter,
                              .dtype = DType::bf16,
                              .options = {.schedule = ops::Schedule::fused},
                              .algorithm = ccl::Algorithm::automatic,
                              .label = "iris fused"});
}
