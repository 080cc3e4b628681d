// 14_all_gather_gemm: C = [A_0; A_1; ...] B, in Iris's two fused forms: push (every rank
// pushes its rows of A to every rank, and the GEMM takes each tile once its rows are in)
// and pull (the GEMM reads every rank's rows where they lie); and with the rows moved by
// the copy engines beside a GEMM that starts on its own rows.
// Built on the standard library (see ../common/ops_sample.hpp and README.md).
#include "ops_sample.hpp"

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  return library_sample_main(argc, argv,
                             {.name = "14_all_gather_gemm",
                              .summary = "C = [A_0; A_1; ...] B: push (each rank's rows stored into every rank, the GEMM waiting per tile) and pull (the GEMM reading every rank's rows in place)",
                              .op = LibraryOp::all_gather_matmul,
                              .dtype = DType::bf16,
                              .options = {.schedule = ops::Schedule::fused},
                              .algorithm = ccl::Algorithm::automatic,
                              .label = "iris push",
                              .also = {{"iris copy engines", {.schedule = ops::Schedule::copy_engines}},
                                       {"iris pull", {.schedule = ops::Schedule::fused_pull}}}});
}
