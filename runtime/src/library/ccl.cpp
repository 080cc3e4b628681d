// The collectives (iris/ccl.hpp): each call launches one kernel of dsl/ccl/, compiled
// through the JIT for its element type and reduction, with its epoch state and flags
// allocated on the heap once per context (library.hpp).
#include "iris/ccl.hpp"

#include <algorithm>
#include <compare>
#include <memory>
#include <map>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "library/ccl_calls.hpp"
#include "library/ccl_choices.hpp"
#include "library/library.hpp"

namespace iris::ccl {

namespace {

// two_shot_push's programs by size (its input), where fewer than 2 per SM were faster:
// at 4 MiB 64 programs 33.7 us, 128 36.9, 256 39.5; at 16 MiB 128 programs 92.8 us,
// 264 95.0; at 64 MiB 128 and 264 alike (the runs of ccl_automatic.def's push rows).
struct ProgramsUpTo {
  std::size_t bytes;
  std::size_t programs;
};
// broadcast's direct route: programs at most (broadcast() says why).
constexpr std::size_t kBroadcastDirectPrograms = 128;
// broadcast's direct route: root tells an owner once per two blocks from this size on
// (broadcast() has the numbers).
constexpr std::size_t kBroadcastPairsFrom = std::size_t{64} << 20;
// broadcast's ll route relays through the non-root ranks (dsl/ccl/ll.iris's
// broadcast_ll_relay) from this many bytes on, at more than 2 ranks: root's link then
// carries the words once, not world - 1 times, for a second trip (4 x H100 in a graph:
// 64 KiB 3.73 us plain, 4.25 relayed; 128 KiB 4.97, 4.63; 1 MiB 20.18, 9.58).
constexpr std::size_t kBroadcastRelayFrom = std::size_t{128} << 10;

constexpr ProgramsUpTo kTwoShotPrograms[] = {
    {std::size_t{4} << 20, 64},
    {std::size_t{16} << 20, 128},
};

using library::buffer;
using library::Instance;
using library::instance;
namespace dsl = library::dsl;
using library::require_on_heap;
using library::state_arg;
using library::sync_arg;
using library::type_defines;


Stream stream_of(Context& ctx, const Options& o) { return o.stream ? o.stream : ctx.stream(); }

// The input an in-place call reads from: a copy on the heap scratch, ordered on `s`
// before the kernel, so the kernel may overwrite the original while peers still read.
const void* staged_input(Context& ctx, const void* src, std::size_t bytes, Stream s) {
  void* copy = library::scratch(ctx, "ccl.input", bytes);
  ctx.copy_async(copy, src, bytes, s);
  return copy;
}

// The blocks of the paired-program kernels: 4 KiB, one 16-byte access per thread.
constexpr std::size_t kBlockBytes = 4096;

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// A kernel whose program p meets only program p of the other ranks (common.iris's tell
// and hear), so that P is the same on every rank: the power of two at or above the
// blocks each program walks, at most PMAX = 2 per SM (fewer where ranks share a GPU,
// so that a rank's spinning programs leave room for the others'). Each such kernel has
// one channel whatever P and element type a call has: PMAX epoch counters, then
// kPairedPoints points of PMAX world flags (ccl_calls.hpp), and a program-major scratch
// (program p's rows first, all_reduce_push.iris says why).
struct Paired {
  Instance* in = nullptr;
  ChannelNotes* notes = nullptr;
  std::string channel;
  std::size_t B = 0;     // elements per block
  std::size_t P = 0;     // programs of this call
  std::size_t PMAX = 0;  // programs any call may run
  std::uint64_t* counters = nullptr;
  Arg state() const {
    return Arg::device_buffer(counters, DType::u64, Shape{static_cast<std::int64_t>(PMAX)}, PMAX * 8);
  }
  Arg flags(Context& ctx) const {
    return buffer(counters + PMAX, DType::u64,
                  {static_cast<std::int64_t>(kPairedPoints * PMAX * static_cast<std::size_t>(ctx.world()))});
  }
};

// What paired() found for a kernel, channel, element type, P and B (which with the
// channel fix its defines: a channel's other defines, such as reduce_scatter's H, are
// in its name), per context; and every channel's notes, all_reduce's grid kernels'
// included.
struct PairedKey {
  std::string kernel, channel;
  int dtype;
  std::size_t P, B;
  auto operator<=>(const PairedKey&) const = default;
};
struct PairedMemo {
  struct Entry {
    Instance* in;
    std::uint64_t* counters;
    ChannelNotes* notes;
  };
  std::map<PairedKey, Entry> known;
  std::map<const Instance*, ChannelNotes*> grids;
  CallBook book;
};

PairedMemo& paired_memo(Context& ctx) {
  return *static_cast<PairedMemo*>(ctx.attachment("iris::ccl::paired", [&ctx] {
    auto memo = std::make_shared<PairedMemo>();
    memo->book.world = ctx.world();
    memo->book.rank = ctx.rank();
    const CallBook* book = &memo->book;
    ctx.explain_waits([book](const void* flag, std::uint64_t expected, const Context::WaitRead& read) {
      return book->explain(flag, expected, read);
    });
    return std::static_pointer_cast<void>(memo);
  }).get());
}

static_assert(library::kSyncPerRank == kPairedPoints, "an instance's sync lies as one program's paired flags");

// The notes of all_reduce's grid kernel `in` (dsl/ccl/all_reduce.iris,
// all_reduce_atomic.iris), whose flags are its `sync`.
ChannelNotes& grid_notes(Context& ctx, const Instance& in, DType dt) {
  PairedMemo& memo = paired_memo(ctx);
  if (auto it = memo.grids.find(&in); it != memo.grids.end()) return *it->second;
  ChannelNotes& n = memo.book.channels[in.kernel + "." + std::string(dtype_name(dt))];
  n.flags = static_cast<const std::uint64_t*>(in.sync);
  n.pmax = 1;
  n.state = static_cast<const std::uint64_t*>(in.state);
  n.grid = true;
  memo.grids.emplace(&in, &n);
  return n;
}

// Notes a call on its channel, then launches it: every argument is made by then, so
// the notes (what a wait that gives up names) never count a call that did not start.
void launch_call(const Instance& in, ChannelNotes& notes, std::uint32_t call, std::size_t count,
                 std::span<const Arg> args, Stream s) {
  notes.note(call, count);
  in.program.launch(in.kernel, args, s);
}

// `work`: a function of B giving how many blocks the busiest rank's programs walk.
// `channel`: the kernel, and any define that changes its scratch layout. `block_bytes`:
// a block's bytes where they are not kBlockBytes (broadcast's direct route, the ll kernels).
template <class Work>
Paired paired(Context& ctx, const dsl::DslKernel& kernel, DType dt, bool reduces, int programs, Work work,
              const std::map<std::string, std::int64_t>& more = {}, const std::string& channel = "",
              std::size_t most = 0, std::size_t block_bytes = kBlockBytes) {
  Paired pk;
  pk.channel = channel.empty() ? kernel.name : channel;
  pk.B = block_bytes / dtype_size(dt);
  const std::size_t blocks = work(pk.B);
  const int share = library::max_share(ctx);
  pk.PMAX = static_cast<std::size_t>(std::max(1, ctx.multiprocessors() * 2 / (share * share * share)));
  if (programs < 0) throw Error(std::string(kernel.name) + ": Options::programs is " + std::to_string(programs) + ", not >= 0");
  const std::size_t cap = most ? std::min(most, pk.PMAX) : pk.PMAX;
  pk.P = 1;
  while (pk.P < blocks && pk.P < cap) pk.P *= 2;
  pk.P = std::min(pk.P, cap);
  if (programs > 0) pk.P = static_cast<std::size_t>(programs);
  pk.P = std::min(pk.P, pk.PMAX);
  // Calls after the first find their instance and flags in this rank's memo: a call's
  // host work is then its launch (eager calls back to back wait for the host
  // otherwise).
  PairedMemo& memo = paired_memo(ctx);
  PairedKey key{kernel.name, pk.channel, static_cast<int>(dt), pk.P, pk.B};
  if (auto it = memo.known.find(key); it != memo.known.end()) {
    pk.in = it->second.in;
    pk.counters = it->second.counters;
    pk.notes = it->second.notes;
    return pk;
  }
  auto defines = type_defines(dt, reduces);
  defines["B"] = static_cast<std::int64_t>(pk.B);
  defines["P"] = static_cast<std::int64_t>(pk.P);
  defines["PMAX"] = static_cast<std::int64_t>(pk.PMAX);
  for (const auto& [k, v] : more) defines[k] = v;
  pk.in = &instance(ctx, kernel, defines);
  const std::size_t W = static_cast<std::size_t>(ctx.world());
  pk.counters = static_cast<std::uint64_t*>(
      library::zeroed(ctx, "ccl.paired.flags." + pk.channel, (pk.PMAX + kPairedPoints * pk.PMAX * W) * sizeof(std::uint64_t)));
  pk.notes = &memo.book.channels[pk.channel];
  pk.notes->flags = pk.counters + pk.PMAX;
  pk.notes->pmax = pk.PMAX;
  pk.notes->state = pk.counters;
  memo.known.emplace(std::move(key), PairedMemo::Entry{pk.in, pk.counters, pk.notes});
  return pk;
}

// The channel's scratch as the argument of PMAX * `rows` rows (each program `rows` of
// them) for `blocks` blocks of a program per row. Rows keep their length from call to
// call (the scratch only grows, collectively, after every queued call is done), in
// bytes, whatever the element type: a program finds its blocks where it left them.
Arg paired_scratch(Context& ctx, DType dt, const Paired& pk, std::size_t rows, std::size_t blocks) {
  const std::size_t es = dtype_size(dt), all = pk.PMAX * rows;
  std::size_t have = 0;
  void* p = library::scratch(ctx, "ccl.paired." + pk.channel, all * std::max<std::size_t>(blocks, 1) * pk.B * es, &have);
  const std::size_t row_bytes = have / all;
  return buffer(p, dt, {static_cast<std::int64_t>(all), static_cast<std::int64_t>(row_bytes / es)});
}

// What a program of two_shot_push or reduce_scatter pushes between two flag rounds
// (their `group` argument): a large call's programs reduce a group while others still
// push, and a fence every 64 KiB costs little beside the stores.
constexpr std::size_t kGroupBytes = std::size_t{64} << 10;
// two_shot_push's groups from kLargeGroupsFrom on: fewer flag rounds pay once a program
// has many groups (4 x H100, bf16, 256 MiB, alternating runs: 64 KiB groups 1190.7 /
// 1190.1 us, 128 KiB 1177.2, 256 KiB 1174.4 / 1176.4; 64 MiB 321.6 against 313.4).
// reduce_scatter keeps 64 KiB (256 MiB: 709.5 us at 64 KiB, 748.1 at 256 KiB).
constexpr std::size_t kLargeGroupBytes = std::size_t{256} << 10;
constexpr std::size_t kLargeGroupsFrom = std::size_t{64} << 20;

std::int64_t group_of(std::size_t bytes_per_step, std::size_t group_bytes = kGroupBytes) {
  return static_cast<std::int64_t>(std::max<std::size_t>(1, group_bytes / bytes_per_step));
}

// all_reduce by pushing (dsl/ccl/all_reduce_push.iris).
void all_reduce_push(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, ReduceOp op, Algorithm a,
                     int programs, Stream s) {
  const bool one = a == Algorithm::one_shot_push, ring = a == Algorithm::ring;
  const std::size_t es = dtype_size(dt), W = static_cast<std::size_t>(ctx.world());
  const dsl::DslKernel& kernel = one    ? dsl::ccl_all_reduce_push::all_reduce_one_shot_push
                                 : ring ? dsl::ccl_all_reduce_push::all_reduce_ring_push
                                        : dsl::ccl_all_reduce_push::all_reduce_two_shot_push;
  std::size_t most = 0;
  if (a == Algorithm::two_shot_push) {
    for (const ProgramsUpTo& row : kTwoShotPrograms) {
      if (n * es <= row.bytes) {
        most = row.programs;
        break;
      }
    }
  }
  const Paired pk = paired(
      ctx, kernel, dt, true, programs,
      [&](std::size_t B) { return one ? ceil_div(n, B) : ceil_div(ceil_div(n, B), W); }, {}, "", most);
  // A program's rows: one shot, two halves of world rows of its blocks; two shot, world
  // rows of the blocks it owns; ring, two halves of 2 world rows (2 world - 2 steps) of
  // one chunk's blocks.
  const std::size_t rows = one ? 2 * W : ring ? 4 * W : W;
  const std::size_t mine = ceil_div(ceil_div(n, pk.B), pk.P);
  const std::int64_t len = static_cast<std::int64_t>(n);
  std::vector<Arg> args{Arg::device_buffer(const_cast<void*>(src), dt, Shape{len}, n * es), buffer(dst, dt, {len}),
                        static_cast<std::int64_t>(op)};
  if (a == Algorithm::two_shot_push) {  // rounds: a block to each rank
    args.push_back(group_of(W * kBlockBytes, n * es >= kLargeGroupsFrom ? kLargeGroupBytes : kGroupBytes));
  }
  const std::uint32_t call = call_descriptor(Collective::all_reduce, static_cast<unsigned>(a), dt, n, static_cast<int>(op));
  args.push_back(std::int64_t{call});
  args.push_back(paired_scratch(ctx, dt, pk, rows, one ? mine : ceil_div(mine, W)));
  args.push_back(pk.state());
  args.push_back(pk.flags(ctx));
  launch_call(*pk.in, *pk.notes, call, n, args, s);
}

// The data-and-flag words of a paired kernel: PMAX * `rows` rows of a program's blocks
// of `n` elements of type dt, a word an element (16-bit ones two to a word), in a zeroed
// scratch of the channel's own (a word must hold no flag before the call that writes
// it; a block of B elements is B or B / 2 words, and B depends on the element size,
// which the channel name therefore carries).
Arg paired_words(Context& ctx, const Paired& pk, DType dt, std::size_t rows, std::size_t n) {
  const std::size_t all = pk.PMAX * rows, mine = std::max<std::size_t>(ceil_div(ceil_div(n, pk.B), pk.P), 1);
  const std::size_t per_word = dtype_size(dt) == 2 ? 2 : 1;
  const std::size_t bytes = all * ceil_div(mine * pk.B, per_word) * 8;
  // Every program's rows are as long as this call's programs need (a row's place must
  // not move between calls of other program counts): few programs on many elements ask
  // for rows that no heap of this size holds for all PMAX programs. Say so, not just that
  // the heap is out of memory.
  if (const std::size_t heap = ctx.heap_info().capacity; bytes > heap) {
    throw Error(pk.channel.substr(0, pk.channel.find('.')) + ": " + std::to_string(n) + " elements over " +
                std::to_string(pk.P) + (pk.P == 1 ? " program" : " programs") + " need data-and-flag words of " +
                std::to_string(bytes >> 20) + " MiB (rows for " + std::to_string(pk.PMAX) +
                " programs, each as long as one of this call's), more than the whole heap (" + std::to_string(heap >> 20) +
                " MiB): ask for more programs (ccl::Options::programs), or for automatic");
  }
  std::size_t have = 0;
  void* words = library::scratch(ctx, "ccl.paired." + pk.channel, bytes, &have, true);
  pk.notes->words = static_cast<const std::uint64_t*>(words);
  pk.notes->words_count = have / 8;
  pk.notes->row_words = have / all / 8;
  pk.notes->rows_per_program = rows;
  return buffer(words, DType::u64, {static_cast<std::int64_t>(all), static_cast<std::int64_t>(have / all / 8)});
}

// A data-and-flag kernel's channel: its name and the element size.
std::string ll_channel(const char* kernel, DType dt) { return std::string(kernel) + ".e" + std::to_string(dtype_size(dt)); }

// The blocks of the data-and-flag kernels: 512 elements (4 KiB of words), whatever the
// type. A program's threads then hold two elements each, so a warp's 16-byte word
// accesses are contiguous and a call spreads over more programs: at 8 KiB of bf16 on
// 2 x H200, 8 programs of 512 put and polled their words in 3.62 us a call in a graph,
// 2 programs of 2048 in 5.06 (one_shot_push: 4.59).
constexpr std::size_t kLlBlock = 512;
// one_shot_ll's blocks up to kLlSmallBlocksUpTo: 128 elements, so that a small call
// spreads over four times the programs, each with a quarter of the words to put and poll
// (4 x H100, bf16, in a graph, three runs alternating the block: 8 KiB 4.03 / 4.27 /
// 4.66 us at 128 / 256 / 512 elements, 64 KiB 5.79 / 5.85 / 6.46; eager 8 KiB 5.49 /
// 5.81 / 6.92). They have a channel of their own (".small"): a channel's words keep one
// block size.
constexpr std::size_t kLlSmallBlock = 128;
constexpr std::size_t kLlSmallBlocksUpTo = std::size_t{64} << 10;

// paired() for a kernel of dsl/ccl/ll.iris (dsl::ccl_ll), in blocks of `block` elements.
template <class Work>
Paired paired_ll(Context& ctx, const dsl::DslKernel& kernel, DType dt, int programs, Work work,
                 std::size_t block = kLlBlock) {
  std::string channel = ll_channel(kernel.name, dt);
  if (block != kLlBlock) channel += ".small";
  return paired(ctx, kernel, dt, true, programs, work, {}, channel, 0, block * dtype_size(dt));
}

// What the ll route refuses: types over 4 bytes, and more than kLlMostBytes of output.
void require_ll(const std::string& what, DType dt, std::size_t bytes) {
  if (dtype_size(dt) > 4) {
    throw Error(what + ": data-and-flag words carry types of at most 4 bytes beside their flags, not " +
                std::string(dtype_name(dt)));
  }
  if (bytes > kLlMostBytes) {
    throw Error(what + ": the ll route gives out at most " + std::to_string(kLlMostBytes >> 10) + " KiB a call, not " +
                std::to_string(bytes) + " bytes (its words hold 2 world times the data); use the staged or direct route");
  }
}

// What the slots route refuses: types other than f32, f16 and bf16, and more than
// kSlotsMostBytes of output.
void require_slots(const std::string& what, DType dt, std::size_t bytes) {
  if (!slot_type(dt)) throw Error(not_a_slot_type(what + ": the slots route", dt));
  if (bytes > kSlotsMostBytes) {
    throw Error(what + ": the slots route gives out at most " + std::to_string(kSlotsMostBytes >> 10) + " KiB a call, not " +
                std::to_string(bytes) + " bytes (its slots hold twice the output); use the direct route");
  }
}


// all_reduce in data-and-flag words (dsl/ccl/ll.iris): one shot, or two (a program's
// rows then hold one block in world of its blocks, in 2 world rows a half).
void all_reduce_ll(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, ReduceOp op, Algorithm a,
                   int programs, Stream s) {
  const bool two = a == Algorithm::two_shot_ll;
  const std::size_t block = !two && n * dtype_size(dt) <= kLlSmallBlocksUpTo ? kLlSmallBlock : kLlBlock;
  const Paired pk = paired_ll(ctx, two ? dsl::ccl_ll::all_reduce_two_shot_ll : dsl::ccl_ll::all_reduce_one_shot_ll, dt,
                              programs, [&](std::size_t B) { return ceil_div(n, B); }, block);
  const std::int64_t len = static_cast<std::int64_t>(n);
  const std::size_t W = static_cast<std::size_t>(ctx.world());
  // Two shot: a row holds ceil(mine / world) blocks, mine a program's blocks of n.
  const std::size_t row_of = two ? ceil_div(ceil_div(ceil_div(n, pk.B), pk.P), W) * pk.B * pk.P : n;
  const std::uint32_t call = call_descriptor(Collective::all_reduce, static_cast<unsigned>(a), dt, n, static_cast<int>(op));
  const std::vector<Arg> args{Arg::device_buffer(const_cast<void*>(src), dt, Shape{len}, n * dtype_size(dt)),
                              buffer(dst, dt, {len}), static_cast<std::int64_t>(op), std::int64_t{call},
                              paired_words(ctx, pk, dt, (two ? 4 : 2) * W, row_of), pk.state(), pk.flags(ctx)};
  launch_call(*pk.in, *pk.notes, call, n, args, s);
}


// The blocks of the slot kernels: 4 KiB, so that a program's 256 threads send and poll
// 16 bytes each (the data's own widest access). 4 x H100, bf16, in a graph: 1 KiB blocks
// (64 threads) 4.98 / 5.42 / 7.07 / 12.10 us at 8 KiB / 64 KiB / 256 KiB / 1 MiB, 4 KiB
// 5.06 / 5.23 / 7.23 / 11.45, 16 KiB 15.48 / 9.84 / 11.26 / 14.61 (the best of the one
// and the two shot at each size, 2026-11-27).
constexpr std::size_t kSlotsBlockBytes = std::size_t{4} << 10;

// paired() for a kernel of dsl/ccl/slots.iris (dsl::ccl_slots), in blocks of
// kSlotsBlockBytes. One channel (slots, counters) a kernel, whatever the element type:
// a block is 4 KiB of any type, so a program's blocks sit at the same bytes of its rows,
// and an empty slot is all bits set in every type.
template <class Work>
Paired paired_slots(Context& ctx, const dsl::DslKernel& kernel, DType dt, int programs, Work work) {
  return paired(ctx, kernel, dt, true, programs, work, {}, "", 0, kSlotsBlockBytes);
}

// The slots of a paired kernel: PMAX * `rows` rows of a program's blocks of `n` elements
// of type dt, in a scratch of the channel's own that starts (and grows) empty: every
// byte 0xff (memory/slots.hpp).
Arg slots_arg(Context& ctx, const Paired& pk, DType dt, std::size_t rows, std::size_t n) {
  const std::size_t es = dtype_size(dt), all = pk.PMAX * rows;
  const std::size_t mine = std::max<std::size_t>(ceil_div(ceil_div(n, pk.B), pk.P), 1);
  std::size_t have = 0;
  void* p = library::empty_slots(ctx, "ccl.paired." + pk.channel, all * mine * pk.B * es, &have);
  return buffer(p, dt, {static_cast<std::int64_t>(all), static_cast<std::int64_t>(have / all / es)});
}

// The ll and slots routes' refusals (require_ll, require_slots), by route.
void require_in_flight(const std::string& what, Route route, DType dt, std::size_t bytes) {
  if (route == Route::slots) require_slots(what, dt, bytes);
  else require_ll(what, dt, bytes);
}

// What the ll and slots routes' kernels hold a call's data in: data-and-flag words or
// slots, PMAX * `rows` rows of a program's blocks of `n` elements.
Arg in_flight(Context& ctx, const Paired& pk, Route route, DType dt, std::size_t rows, std::size_t n) {
  return route == Route::slots ? slots_arg(ctx, pk, dt, rows, n) : paired_words(ctx, pk, dt, rows, n);
}

// all_reduce in slots (dsl/ccl/slots.iris): one shot, or two (a program's rows then hold
// one block in world of its blocks, in 2 world rows a half).
void all_reduce_slots(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, ReduceOp op, Algorithm a,
                      int programs, Stream s) {
  const bool two = a == Algorithm::two_shot_slots;
  const dsl::DslKernel& kernel = two ? dsl::ccl_slots::all_reduce_two_shot_slots : dsl::ccl_slots::all_reduce_one_shot_slots;
  const std::size_t W = static_cast<std::size_t>(ctx.world());
  const Paired pk = paired_slots(ctx, kernel, dt, programs, [&](std::size_t B) { return ceil_div(n, B); });
  const std::int64_t len = static_cast<std::int64_t>(n);
  const std::size_t row_of = two ? ceil_div(ceil_div(ceil_div(n, pk.B), pk.P), W) * pk.B * pk.P : n;
  const std::uint32_t call = call_descriptor(Collective::all_reduce, static_cast<unsigned>(a), dt, n, static_cast<int>(op));
  const std::vector<Arg> args{Arg::device_buffer(const_cast<void*>(src), dt, Shape{len}, n * dtype_size(dt)),
                              buffer(dst, dt, {len}), static_cast<std::int64_t>(op), std::int64_t{call},
                              slots_arg(ctx, pk, dt, (two ? 4 : 2) * W, row_of), pk.state(), pk.flags(ctx)};
  launch_call(*pk.in, *pk.notes, call, n, args, s);
}

}  // namespace


namespace detail {

std::size_t slice_of(const char* what, std::size_t elements, int world) {
  const auto w = static_cast<std::size_t>(world);
  if (elements % w != 0) {
    throw Error(std::string(what) + ": " + std::to_string(elements) + " elements do not split into " +
                std::to_string(w) + " equal slices (one per rank)");
  }
  return elements / w;
}

void check_sizes(const char* what, std::size_t src, std::size_t dst, std::size_t want_dst) {
  if (dst != want_dst) {
    throw Error(std::string(what) + ": the output has " + std::to_string(dst) + " elements, but an input of " +
                std::to_string(src) + " needs " + std::to_string(want_dst));
  }
}

void all_reduce(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, const Options& o) {
  if (n == 0) return;
  require_on_heap(ctx, "all_reduce", src);
  require_on_heap(ctx, "all_reduce", dst);
  const std::size_t bytes = n * dtype_size(dt);
  const Algorithm a = choose_all_reduce(o.algorithm, bytes, ctx.world(), dt, o.op);
  Stream s = stream_of(ctx, o);
  const std::int64_t len = static_cast<std::int64_t>(n);
  if (a == Algorithm::atomic) {
    Instance& in = instance(ctx, dsl::ccl_all_reduce_atomic::all_reduce_atomic, type_defines(dt, false));
    // The input is read while every rank adds into the (zeroed) output.
    if (src == dst) src = staged_input(ctx, src, bytes, s);
    ctx.zero_async(dst, bytes, s);
    const std::uint32_t call = call_descriptor(Collective::all_reduce, static_cast<unsigned>(a), dt, n, static_cast<int>(o.op));
    const std::vector<Arg> args{buffer(src, dt, {len}), buffer(dst, dt, {len}), std::int64_t{call}, state_arg(in),
                                sync_arg(ctx, in)};
    launch_call(in, grid_notes(ctx, in, dt), call, n, args, s);
    return;
  }
  if (in_slots(a)) {
    all_reduce_slots(ctx, dt, src, dst, n, o.op, a, o.programs, s);
    return;
  }
  if (in_words(a)) {
    all_reduce_ll(ctx, dt, src, dst, n, o.op, a, o.programs, s);
    return;
  }
  if (a == Algorithm::one_shot_push || a == Algorithm::two_shot_push || a == Algorithm::ring) {
    all_reduce_push(ctx, dt, src, dst, n, o.op, a, o.programs, s);
    return;
  }
  const bool one = a == Algorithm::one_shot;
  Instance& in = instance(ctx, one ? dsl::ccl_all_reduce::all_reduce_one_shot : dsl::ccl_all_reduce::all_reduce_two_shot,
                          type_defines(dt, true));
  // One shot: peers read the input while this rank writes the output.
  if (one && src == dst) src = staged_input(ctx, src, bytes, s);
  const std::uint32_t call = call_descriptor(Collective::all_reduce, static_cast<unsigned>(a), dt, n, static_cast<int>(o.op));
  const std::vector<Arg> args{buffer(src, dt, {len}), buffer(dst, dt, {len}), static_cast<std::int64_t>(o.op),
                              std::int64_t{call}, state_arg(in), sync_arg(ctx, in)};
  launch_call(in, grid_notes(ctx, in, dt), call, n, args, s);
}

namespace {

// all_gather and all_to_all: every rank sends n elements to every rank, by the route
// `o` asks for (dsl/ccl/<what>.iris's `what` and `what`_via_scratch, dsl/ccl/ll.iris's
// `what`_ll), src and dst shaped as the kernels take them.
void exchange(Context& ctx, const std::string& what, DType dt, const void* src, const Shape& src_shape, void* dst,
              const Shape& dst_shape, std::size_t n, const Options& o) {
  const std::size_t es = dtype_size(dt), W = static_cast<std::size_t>(ctx.world()), bytes = n * W * es;
  const Route route = choose_route(what.c_str(), o.route, bytes, ctx.world(), dt);
  const auto blocks = [&](std::size_t B) { return ceil_div(n, B); };
  std::size_t src_elements = 1;
  for (std::int64_t d : src_shape) src_elements *= static_cast<std::size_t>(d);
  const Arg in = Arg::device_buffer(const_cast<void*>(src), dt, src_shape, src_elements * es);
  const bool gather = what == "all_gather";  // else all_to_all
  const Collective collective = gather ? Collective::all_gather : Collective::all_to_all;
  if (route == Route::ll || route == Route::slots) {
    require_in_flight(what, route, dt, bytes);
    const Paired pk =
        route == Route::slots
            ? paired_slots(ctx, gather ? dsl::ccl_slots::all_gather_slots : dsl::ccl_slots::all_to_all_slots, dt, o.programs,
                           blocks)
            : paired_ll(ctx, gather ? dsl::ccl_ll::all_gather_ll : dsl::ccl_ll::all_to_all_ll, dt, o.programs, blocks);
    const std::uint32_t call = call_descriptor(collective, static_cast<unsigned>(route), dt, n * W);
    const std::vector<Arg> args{in, Arg::device_buffer(dst, dt, dst_shape, bytes), std::int64_t{call},
                                in_flight(ctx, pk, route, dt, 2 * W, n), pk.state(), pk.flags(ctx)};
    launch_call(*pk.in, *pk.notes, call, n * W, args, stream_of(ctx, o));
    return;
  }
  const bool staged = route == Route::staged;
  if (!staged) require_on_heap(ctx, what.c_str(), dst);
  const dsl::DslKernel& kernel = gather ? (staged ? dsl::ccl_all_gather::all_gather_via_scratch : dsl::ccl_all_gather::all_gather)
                                        : (staged ? dsl::ccl_all_to_all::all_to_all_via_scratch : dsl::ccl_all_to_all::all_to_all);
  const Paired pk = paired(ctx, kernel, dt, false, o.programs, blocks);
  const std::uint32_t call = call_descriptor(collective, static_cast<unsigned>(route), dt, n * W);
  std::vector<Arg> args{in, staged ? Arg::device_buffer(dst, dt, dst_shape, bytes) : buffer(dst, dt, dst_shape),
                        std::int64_t{call}};
  if (staged) args.push_back(paired_scratch(ctx, dt, pk, 2 * W, ceil_div(ceil_div(n, pk.B), pk.P)));
  args.push_back(pk.state());
  args.push_back(pk.flags(ctx));
  launch_call(*pk.in, *pk.notes, call, n * W, args, stream_of(ctx, o));
}

}  // namespace

void all_gather(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, const Options& o) {
  if (n == 0) return;
  const std::int64_t len = static_cast<std::int64_t>(n), w = ctx.world();
  exchange(ctx, "all_gather", dt, src, Shape{len}, dst, Shape{len * w}, n, o);
}

void reduce_scatter(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, const Options& o) {
  require_op("reduce_scatter", o.op);
  if (n == 0) return;
  const std::size_t es = dtype_size(dt), W = static_cast<std::size_t>(ctx.world());
  const Route route = choose_route("reduce_scatter", o.route, n * es, ctx.world(), dt);
  if (route == Route::ll || route == Route::slots) {
    require_in_flight("reduce_scatter", route, dt, n * es);
    const bool slots = route == Route::slots;
    const auto blocks = [&](std::size_t B) { return ceil_div(n, B); };
    const Paired pk = slots ? paired_slots(ctx, dsl::ccl_slots::reduce_scatter_slots, dt, o.programs, blocks)
                            : paired_ll(ctx, dsl::ccl_ll::reduce_scatter_ll, dt, o.programs, blocks);
    const std::int64_t len = static_cast<std::int64_t>(n), w = ctx.world();
    const std::uint32_t call =
        call_descriptor(Collective::reduce_scatter, static_cast<unsigned>(route), dt, n, static_cast<int>(o.op));
    const std::vector<Arg> args{Arg::device_buffer(const_cast<void*>(src), dt, Shape{len * w}, n * W * es),
                                Arg::device_buffer(dst, dt, Shape{len}, n * es), static_cast<std::int64_t>(o.op),
                                std::int64_t{call}, in_flight(ctx, pk, route, dt, 2 * W, n), pk.state(), pk.flags(ctx)};
    launch_call(*pk.in, *pk.notes, call, n, args, stream_of(ctx, o));
    return;
  }
  // Staged: two scratch parts used in turn; direct: one.
  const std::size_t parts = route == Route::staged ? 2 : 1;
  Paired pk = paired(ctx, dsl::ccl_reduce_scatter::reduce_scatter, dt, true, o.programs,
                     [&](std::size_t B) { return ceil_div(n, B); }, {{"H", static_cast<std::int64_t>(parts)}},
                     parts == 2 ? "reduce_scatter.staged" : "reduce_scatter");
  const std::int64_t len = static_cast<std::int64_t>(n), w = ctx.world();
  const std::uint32_t call =
      call_descriptor(Collective::reduce_scatter, static_cast<unsigned>(route), dt, n, static_cast<int>(o.op));
  const std::vector<Arg> args{Arg::device_buffer(const_cast<void*>(src), dt, Shape{len * w}, n * W * es),
                              Arg::device_buffer(dst, dt, Shape{len}, n * es), static_cast<std::int64_t>(o.op),
                              group_of(W * kBlockBytes),  // blocks: each to every rank
                              std::int64_t{call},
                              paired_scratch(ctx, dt, pk, parts * W, ceil_div(ceil_div(n, pk.B), pk.P)),
                              pk.state(), pk.flags(ctx)};
  launch_call(*pk.in, *pk.notes, call, n, args, stream_of(ctx, o));
}

void all_to_all(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, const Options& o) {
  if (n == 0) return;
  const std::int64_t len = static_cast<std::int64_t>(n), w = ctx.world();
  // Peers write slices of dst while this rank still reads src: the two must not share a
  // byte (all_to_all(x, x) returned some peers' slices in place of others').
  const auto bytes = n * static_cast<std::size_t>(w) * dtype_size(dt);
  const auto* s = static_cast<const char*>(src);
  const auto* d = static_cast<const char*>(dst);
  if (s < d + bytes && d < s + bytes) {
    throw Error("all_to_all: src and dst overlap (all_to_all is out of place only: peers write dst while this rank "
                "still reads src); pass a separate output tensor");
  }
  exchange(ctx, "all_to_all", dt, src, Shape{w, len}, dst, Shape{w, len}, n, o);
}

void broadcast(Context& ctx, DType dt, void* x, std::size_t n, int root, const Options& o) {
  if (root < 0 || root >= ctx.world()) {
    throw Error("broadcast: root " + std::to_string(root) + " is not a rank of this job (world " +
                std::to_string(ctx.world()) + ")");
  }
  if (n == 0) return;
  require_on_heap(ctx, "broadcast", x);
  const std::size_t es = dtype_size(dt);
  const Route route = choose_route("broadcast", o.route, n * es, ctx.world(), dt);
  if (route == Route::ll || route == Route::slots) {
    require_in_flight("broadcast", route, dt, n * es);
    const bool relay = ctx.world() > 2 && n * es >= kBroadcastRelayFrom;
    const auto blocks = [&](std::size_t B) { return ceil_div(n, B); };
    const Paired pk =
        route == Route::slots
            ? paired_slots(ctx, relay ? dsl::ccl_slots::broadcast_slots_relay : dsl::ccl_slots::broadcast_slots, dt,
                           o.programs, blocks)
            : paired_ll(ctx, relay ? dsl::ccl_ll::broadcast_ll_relay : dsl::ccl_ll::broadcast_ll, dt, o.programs, blocks);
    pk.notes->root_only = true;
    const std::uint32_t call = call_descriptor(Collective::broadcast, static_cast<unsigned>(route), dt, n, -1, root);
    const std::vector<Arg> args{buffer(x, dt, {static_cast<std::int64_t>(n)}), std::int64_t{root}, std::int64_t{call},
                                in_flight(ctx, pk, route, dt, 2, n), pk.state(), pk.flags(ctx)};
    launch_call(*pk.in, *pk.notes, call, n, args, stream_of(ctx, o));
    return;
  }
  const bool staged = route == Route::staged;
  const dsl::DslKernel& kernel = staged ? dsl::ccl_broadcast::broadcast_via_scratch : dsl::ccl_broadcast::broadcast;
  // Direct: root's program tells a block's owner with a release per C blocks
  // (dsl/ccl/broadcast.iris) of 16 KiB: a program's data in flight then outweighs the
  // wait for the one before to land. At most 128 programs: an owner's program waits for
  // root's program of its number, and 2 per SM waited on programs not yet running (4 x
  // H100, eager, `iris-bench ccl --collectives broadcast --routes direct --programs
  // 0,32,64,128,264`: 16 MiB 401 us at 264 programs, 89.0 at 128, 96.6 at 64). C = 2
  // from kBroadcastPairsFrom (4 x H100 in a graph, 128 programs, C = 1 / 2 / 4: 16 MiB
  // 65.8 / 68.6 / 88.4 us; 64 MiB 220.1 / 209.9 / 228.7; 256 MiB 843.2 / 784.7 / 790.2).
  const std::int64_t C = !staged && n * es >= kBroadcastPairsFrom ? 2 : 1;
  std::map<std::string, std::int64_t> more;
  if (!staged) more["C"] = C;
  const Paired pk = paired(
      ctx, kernel, dt, false, o.programs, [&](std::size_t B) { return ceil_div(n, B * C); }, more,
      C > 1 ? "broadcast.pairs" : "", staged ? 0 : kBroadcastDirectPrograms, staged ? kBlockBytes : 4 * kBlockBytes);
  const std::int64_t len = static_cast<std::int64_t>(n);
  pk.notes->root_only = staged;
  const std::uint32_t call = call_descriptor(Collective::broadcast, static_cast<unsigned>(route), dt, n, -1, root);
  std::vector<Arg> args{buffer(x, dt, {len}), std::int64_t{root}, std::int64_t{call}};
  if (staged) args.push_back(paired_scratch(ctx, dt, pk, 2, ceil_div(ceil_div(n, pk.B), pk.P)));
  args.push_back(pk.state());
  args.push_back(pk.flags(ctx));
  launch_call(*pk.in, *pk.notes, call, n, args, stream_of(ctx, o));
}

}  // namespace detail
}  // namespace iris::ccl
