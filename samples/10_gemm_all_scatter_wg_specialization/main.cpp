// 10_gemm_all_scatter_wg_specialization: C = [A B_0, A B_1, ...] on every rank, in one
// kernel of two roles: GEMM programs store and flag each tile, scatter programs copy the
// flagged tiles into every peer's C. Also the fused form (the GEMM's epilogue stores to
// every rank) for comparison.
// Built on the standard library (see ../common/ops_sample.hpp and README.md).
#include "ops_sample.hpp"

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  return library_sample_main(argc, argv,
                             {.name = "10_gemm_all_scatter_wg_specialization",
                              .summary = "C = [A B_0, A B_1, ...] on every rank: GEMM programs and scatter programs in one kernel (and the GEMM's epilogue storing to every rank)",
                              .op = LibraryOp::matmul_all_scatter,
                              .dtype = DType::bf16,
                              .options = {.schedule = ops::Schedule::specialized},
                              .algorithm = ccl::Algorithm::automatic,
                              .label = "iris specialized",
                              .also = {{"iris fused", {.schedule = ops::Schedule::fused}}}});
}
