// iris-bench ccl: what every rank puts into a collective and what it must get back.
// Inputs are random but a pure function of (seed, rank, index), so each rank computes
// the reference for its own output from every rank's input without exchanging data.
#pragma once

#include <cstddef>
#include <cstdint>

#include "iris/ccl.hpp"
#include "iris/dtype.hpp"

namespace iris::bench {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast };
const char* name(Collective c);

// One call as every rank makes it. `n` counts elements as nccl.h does: all_reduce and
// broadcast the whole buffer, all_gather what each rank sends, reduce_scatter what each
// rank receives, all_to_all what goes to each peer.
struct CclCall {
  Collective collective;
  DType dtype;
  ccl::ReduceOp op;  // all_reduce, reduce_scatter
  int root;          // broadcast
  std::size_t n;
  int world;
  std::uint64_t seed;  // a fresh one per check: fresh inputs
};

// Elements of each rank's input, and of its output.
std::size_t input_count(const CclCall& c);
std::size_t output_count(const CclCall& c);

// Rank `rank`'s whole input (input_count elements of c.dtype) into `out`. Floats are
// uniform in [-1, 1) rounded to the type, integers uniform in [-1000, 1000] (unsigned:
// [0, 1000]); exact in the type, so only sums of 16-bit floats round.
void write_input(const CclCall& c, int rank, void* out);

// How many of rank `rank`'s output elements (output_count of c.dtype at `output`) differ
// from the host reference. Sums of floating types may differ by the rounding of any
// summation order (world + 1 roundings of the type, relative to the sum of magnitudes);
// everything else must match exactly.
std::size_t count_wrong(const CclCall& c, int rank, const void* output);

}  // namespace iris::bench
