// iris-bench ops: the fused GEMM + communication ops of iris/ops.hpp, every schedule
// (and all-reduce algorithm) each its own variant, over a sweep of shapes, checked on
// sampled entries against double-precision sums, and timed alternating round by round
// with cuBLAS + NCCL on the same operands in the same run.
#pragma once

#include <string>
#include <vector>

#include "gemm.hpp"
#include "iris/options.hpp"

namespace iris::bench {

struct OpsBenchOptions {
  Options options;                        // ranks, GPU sharing, backend (the heap is sized from the shapes)
  std::vector<std::string> ops;           // empty: all four
  std::vector<GemmShape> shapes;          // every rank's A [M, K], B [K, N]; empty: M = 256 .. 8192, N = K = 8192
  std::string dtype = "bf16";             // bf16, f16
  int iters = 10;                         // calls per timed batch
  int rounds = 5;                         // batches per variant, alternating; the median is reported
  int warmup = 2;
  int check = 256;                        // sampled entries of C checked per rank and variant
  bool baseline = true;                   // cuBLAS + NCCL
  std::string json_path, svg_path;
};

// "matmul_all_reduce,...": what --ops takes.
std::string op_names();

// Throws iris::Error naming the option when a name or a shape is not valid.
void check_options(const OpsBenchOptions& options);

// Runs the sweep and prints a table per op; 0 when every result matched its reference,
// 1 when one did not (the run still completes and reports it).
int run_ops(const OpsBenchOptions& options);

}  // namespace iris::bench
