// iris-bench launch: the host time Program::launch adds to a launch (contract checks,
// size binding, extent evaluation, argument packing) over Context::launch_raw with the
// same arguments packed beforehand. Both are timed in alternating batches on one stream
// in the same run; the GPU work is a tiny instance of the kernel.
#pragma once

#include <string>

namespace iris::bench {

struct LaunchBenchOptions {
  std::string iris_file = "samples/07_gemm_all_scatter/gemm_all_scatter.iris";
  std::string kernel;        // empty: the module's first kernel
  long long size = 64;       // every size symbol
  int launches = 200;        // per batch
  int batches = 51;
  std::string backend;       // --backend: cuda or host (empty: IRIS_BACKEND, else cuda)
};

int run_launch(const LaunchBenchOptions& options);

}  // namespace iris::bench
