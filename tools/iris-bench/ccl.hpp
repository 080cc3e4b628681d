// iris-bench ccl: the collectives of iris/ccl.hpp over a sweep of sizes, measured the
// way nccl-tests measures them (size, count, time, algbw, busbw, out of place and in
// place), checked against a host reference, next to NCCL on the same buffers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "iris/options.hpp"

namespace iris::bench {

struct CclBenchOptions {
  Options options;  // ranks, GPU sharing, backend, heap (sized from the sweep unless set)
  // Total bytes per call as nccl-tests counts them (all_gather: the gathered buffer,
  // reduce_scatter and all_to_all: the send buffer). Empty: min_bytes, min_bytes *
  // factor, ... up to max_bytes, then max_bytes itself if the factor stepped over it.
  std::vector<std::size_t> sizes;
  std::size_t min_bytes = 8;
  std::size_t max_bytes = std::size_t{256} << 20;
  double factor = 4;
  std::vector<std::string> dtypes{"f32"};       // f32, f16, bf16, i32, i64, u32, u64
  std::vector<std::string> redops{"sum"};       // sum, max, min (all_reduce, reduce_scatter)
  std::vector<std::string> collectives;         // empty: all five
  std::vector<std::string> algorithms;          // all_reduce; empty: every one and automatic
  std::vector<std::string> routes;              // the other four: direct, staged, automatic (default)
  std::vector<int> programs;                    // ccl::Options::programs, a variant each; empty: 0
  int root = 0;                                 // broadcast
  int iters = 20;
  int warmup = 5;
  bool nccl = true;
  // Also time every batch captured once in a CUDA graph and replayed (nccl-tests' -G):
  // graph columns beside the eager ones.
  bool graph = false;
  std::string json_path, svg_path;
  // Write automatic's table (runtime/src/library/ccl_automatic.def) from this sweep:
  // the section of worlds table_from..table_to (0: this run's world) replaced by the
  // fastest variants size by size (ccl_table.hpp).
  std::string table_path;
  int table_from = 0, table_to = 0;
};

// "one_shot,two_shot,...,automatic": what --algorithms takes, in the order timed.
std::string all_reduce_algorithm_names();

// Throws iris::Error naming the option when a name or the sweep is not valid.
void check_options(const CclBenchOptions& options);

// Runs the sweep and prints the tables; 0 when every result matched the reference, 1
// when one did not (the run still completes and reports it).
int run_ccl(const CclBenchOptions& options);

}  // namespace iris::bench
