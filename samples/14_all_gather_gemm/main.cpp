// 14_all_gather_gemm: C = [A_0; A_1; ...] B: every rank pushes its rows of A to every rank, and the GEMM takes each tile once its rows are in.
// Built on the standard library (see ../common/ops_sample.hpp and README.md).
#include "ops_sample.hpp"

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  return library_sample_main(argc, argv,
                             {.name = "14_all_gather_gemm",
                              .summary = "C = [A_0; A_1; ...] B: every rank pushes its rows of A to every rank; the GEMM waits per tile for its rows",
                              .op = LibraryOp::all_gather_matmul,
                              .dtype = DType::bf16,
                              .options = {.schedule = ops::Schedule::fused},
                              .algorithm = ccl::Algorithm::automatic,
                              .label = "iris push"});
}
