// A collective call as the ranks check it against each other (its descriptor, which
// dsl/ccl/common.iris's call words carry), and what a wait on a collective's flags was
// part of: the words the collectives give Context::explain_waits, which name this
// rank's call and, where a peer called differently, the peer's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "iris/context.hpp"
#include "iris/dtype.hpp"

namespace iris::ccl {

enum class Collective : unsigned { all_reduce, reduce_scatter, all_gather, all_to_all, broadcast };

const char* name(Collective c);

// A call in 32 bits, from the top: the collective (3 bits), its algorithm (all_reduce)
// or route (the others) as the enum's value (5), the element type (4), op + 1 (2; 0 for
// the collectives that do not reduce), root + 1 (6; 0 but for broadcast), and the
// element count folded into 12 bits (its 12-bit pieces xor'ed). Computed once a call.
std::uint32_t call_descriptor(Collective c, unsigned how, DType dt, std::size_t count, int op = -1, int root = -1);

// A channel's flags (ccl.cpp's paired kernels; an all_reduce instance's `sync`): points
// of PMAX world flags, program p's flags of a point at p world; points 3, 4 and 5 hold
// the call words of epochs in turn (point 3 + e % 3: dsl/ccl/common.iris says why three).
constexpr std::size_t kPairedPoints = 6;
constexpr std::size_t kCallPoint = 3;
constexpr std::size_t kCallPoints = 3;

// A channel's last call on this rank, and where its flags and words lie, for a wait that
// gives up on one of them: the error then names the call.
struct ChannelNotes {
  const std::uint64_t* flags = nullptr;  // kPairedPoints PMAX world flags
  std::size_t pmax = 0;
  const std::uint64_t* state = nullptr;  // the programs' epoch counters (PMAX)
  // An all_reduce of dsl/ccl/all_reduce.iris or all_reduce_atomic.iris: one set of flags
  // for the grid, whose state[0] counts the calls done (the current call's epoch is one
  // more), where a paired kernel's state[p] is program p's current epoch.
  bool grid = false;
  // The other ranks check the root's word alone, the root every rank's (broadcast's
  // staged, ll and slots routes).
  bool root_only = false;
  const std::uint64_t* words = nullptr;  // data-and-flag words (ll), rows of row_words
  std::size_t words_count = 0, row_words = 0, rows_per_program = 0;
  std::uint32_t call = 0;    // the last call's descriptor
  std::size_t count = 0;     // its elements
  std::uint64_t calls = 0;   // this rank's calls on the channel

  // Notes a call (its call_descriptor) on the channel, once its arguments are made and
  // just before its launch.
  void note(std::uint32_t descriptor, std::size_t elements) {
    call = descriptor;
    count = elements;
    ++calls;
  }
};

// Every channel of a context, by name (node addresses stay put), and their words for a
// wait on one of them.
struct CallBook {
  std::map<std::string, ChannelNotes> channels;
  int world = 1;
  int rank = 0;

  // What a wait at `where` for `expected` was part of, or "" if none of the channels
  // holds it.
  std::string explain(const void* where, std::uint64_t expected, const Context::WaitRead& read) const;
};

}  // namespace iris::ccl
