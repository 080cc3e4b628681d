// 15_gemm_all_reduce_ring_based: C = sum over ranks of A_r B_r: the GEMM, then a ring all-reduce (reduce-scatter, then all-gather around the ranks).
// Built on the standard library (see ../common/ops_sample.hpp and README.md).
#include "ops_sample.hpp"

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  return library_sample_main(argc, argv,
                             {.name = "15_gemm_all_reduce_ring_based",
                              .summary = "C = sum over ranks of A_r B_r: the GEMM, then a ring all-reduce (reduce-scatter, then all-gather around the ranks)",
                              .op = LibraryOp::matmul_all_reduce,
                              .dtype = DType::bf16,
                              .options = {.schedule = ops::Schedule::unfused, .algorithm = ccl::Algorithm::ring},
                              .algorithm = ccl::Algorithm::automatic,
                              .label = "iris ring"});
}
