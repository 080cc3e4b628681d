// 16_all_reduce_ring_based: y = sum over ranks of x_r around a ring: each rank stores only into its right neighbour.
// Built on the standard library (see ../common/ops_sample.hpp and README.md).
#include "ops_sample.hpp"

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  return library_sample_main(argc, argv,
                             {.name = "16_all_reduce_ring_based",
                              .summary = "y = sum over ranks of x_r around a ring: each rank stores only into its right neighbour",
                              .op = LibraryOp::all_reduce,
                              .dtype = DType::bf16,
                              .options = {},
                              .algorithm = ccl::Algorithm::ring,
                              .label = "iris ring"});
}
