// What the standard-library APIs (iris/ccl.hpp, iris/ops.hpp) share: the kernels of
// dsl/ compiled through the JIT once per context and set of defines, each with its epoch
// state and flags on the heap, and named symmetric scratch buffers. Every call here is
// collective: every rank makes the same calls in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "library/dsl_kernels.hpp"
#include "iris/context.hpp"
#include "iris/program.hpp"

namespace iris::library {

// Flags per rank in an instance's `sync`: arrival and departure (dsl/ccl/common.iris),
// one unused, then the call words of all_reduce's grid kernels (three points, epochs in
// turn), so that the flags lie as one program's of a paired collective's
// (library/ccl_calls.hpp).
constexpr std::size_t kSyncPerRank = 6;

// One kernel of dsl/ as this context runs it: its program, its epoch state (local,
// u64[2]) and its flags (symmetric, u64[kSyncPerRank * world]), made on first use.
struct Instance {
  Program program;
  std::string kernel;
  void* state = nullptr;
  void* sync = nullptr;
  // Per-tile flags of the producer-consumer ops (symmetric, zeroed when grown).
  void* tile_flags = nullptr;
  std::size_t tile_flag_count = 0;
};

// Ranks of this job on this rank's GPU.
int share(Context& ctx);
// The most ranks of this job on any one GPU (the same on every rank).
int max_share(Context& ctx);
// Whether copies into peers can run beside a kernel that waits for them: with one rank a
// GPU and not on HIP. Where ranks share a GPU a copy into a peer is a copy within one
// GPU, which may run as a kernel, and on HIP copies and stream waits may: such a kernel
// would wait for an SM behind a kernel that holds every SM waiting for it.
bool copies_beside_waits(Context& ctx);
// `kernel` (a dsl/ file's kernel, library/dsl_kernels.hpp: generated, so a kernel
// renamed in dsl/ without its caller here fails the build) for these defines (SHARE is
// added), compiled for
// `target` ("": the GPU's own, jit_target_for) and set up on first use.
Instance& instance(Context& ctx, const dsl::DslKernel& kernel, std::map<std::string, std::int64_t> defines,
                   const std::string& target = "");
// At least `count` zeroed tile flags of `in`, grown collectively.
void* tile_flags(Context& ctx, Instance& in, std::size_t count);
// The symmetric buffer `name` of at least `bytes`, grown collectively (after every rank's
// queued work is done: nothing reads the old one any more). `have`: its size now.
// `zero`: zeroed when made or grown.
void* scratch(Context& ctx, const std::string& name, std::size_t bytes, std::size_t* have = nullptr, bool zero = false);
// The same with every byte 0xff when made or grown: slots for a kernel's `send` and
// `receive`, all empty (memory/slots.hpp).
void* empty_slots(Context& ctx, const std::string& name, std::size_t bytes, std::size_t* have = nullptr);
// The zeroed symmetric buffer `name` of `bytes`, made collectively on first use and kept
// (asking for more than it was made with is an internal error).
void* zeroed(Context& ctx, const std::string& name, std::size_t bytes);
// The symmetric buffer `name` of `count` u64 words, each `value`, made collectively on
// first use and kept (a source of constants for copies, and an epoch that never moves).
std::uint64_t* constant_words(Context& ctx, const std::string& name, std::size_t count, std::uint64_t value);

// T (and A, the type sums accumulate in, for reductions) as defines.
std::map<std::string, std::int64_t> type_defines(DType dt, bool reduces);
Arg buffer(const void* p, DType dt, Shape shape);
Arg state_arg(const Instance& in);
Arg sync_arg(Context& ctx, const Instance& in);
void require_on_heap(Context& ctx, const char* what, const void* p);

}  // namespace iris::library
