// iris-bench stages: where the time of a small all_reduce goes. The latency path of
// one_shot_push and one_shot_ll (dsl/ccl/all_reduce_push.iris, dsl/ccl/ll.iris) is timed
// again and again with its later stages left out (a launch alone; the epoch; then the input's load;
// the stores to the peers; the fence; the flags; the wait and the reduction), so that
// each difference is what one stage adds to a call; a last stage adds the call words
// (dsl/ccl/common.iris's announce and agree) to the whole call. Eager batches and the same batch
// replayed from a CUDA graph, bf16, the slowest rank's median.
#pragma once

#include <cstddef>
#include <vector>

#include "iris/options.hpp"

namespace iris::bench {

struct StagesBenchOptions {
  iris::Options options;                         // the job: ranks, backend, ...
  std::vector<std::size_t> sizes{8 << 10, 64 << 10};  // bytes of input per call
  int batch = 20;                                // calls per eager batch and per graph
  int iters = 30;                                // timed batches per stage, median reported
};

int run_stages(const StagesBenchOptions& options);

}  // namespace iris::bench
