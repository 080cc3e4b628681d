// What the collectives run: the names of reductions, algorithms and routes, the checks of
// what a call asks for, and automatic's choice of algorithm (all_reduce) and route (the
// others) from tables measured on the machines named beside them.
#include "library/ccl_choices.hpp"

#include <string>
#include <string_view>

#include "iris/error.hpp"

namespace iris::ccl {

const char* name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
  }
  return "?";
}

const char* name(Algorithm a) {
  switch (a) {
    case Algorithm::automatic: return "automatic";
    case Algorithm::one_shot: return "one_shot";
    case Algorithm::two_shot: return "two_shot";
    case Algorithm::atomic: return "atomic";
    case Algorithm::ring: return "ring";
    case Algorithm::one_shot_push: return "one_shot_push";
    case Algorithm::two_shot_push: return "two_shot_push";
    case Algorithm::one_shot_ll: return "one_shot_ll";
    case Algorithm::two_shot_ll: return "two_shot_ll";
    case Algorithm::one_shot_slots: return "one_shot_slots";
    case Algorithm::two_shot_slots: return "two_shot_slots";
  }
  return "?";
}

const char* name(Route r) {
  switch (r) {
    case Route::automatic: return "automatic";
    case Route::direct: return "direct";
    case Route::staged: return "staged";
    case Route::ll: return "ll";
    case Route::slots: return "slots";
  }
  return "?";
}

bool in_words(Algorithm a) { return a == Algorithm::one_shot_ll || a == Algorithm::two_shot_ll; }
bool in_slots(Algorithm a) { return a == Algorithm::one_shot_slots || a == Algorithm::two_shot_slots; }
bool slot_type(DType dt) { return dt == DType::f32 || dt == DType::f16 || dt == DType::bf16; }

std::string not_a_slot_type(const std::string& who, DType dt) {
  return who + " sends f32, f16 or bf16 (all bits set is an empty slot, which other types cannot spare), not " +
         std::string(dtype_name(dt));
}

namespace {

// What automatic picks: for each collective, the largest size at which its small-size
// choice (all_reduce: one_shot_push, else two_shot_push; the others: the staged route,
// else direct) was still the faster, from `iris-bench ccl --graph --dtypes bf16
// --algorithms one_shot_push,two_shot_push --routes direct,staged` on 4 x H100, one rank
// per GPU (2026-11-26, docs/performance.md), and at 2 ranks where that differed. Sizes:
// all_reduce's input, the others' output (broadcast: x). The first row whose world
// (0: any) covers the call's applies. Rerun that command on a new machine and move the
// rows: under each table it prints automatic against the fastest variant at every size
// (marking where automatic is more than 5% slower) and the fastest variant size by size.
struct SmallUpTo {
  const char* collective;
  int world;  // the most ranks the row is for; 0: any
  std::size_t bytes;
};
constexpr SmallUpTo kSmallUpTo[] = {
    // 2 ranks, 4 MiB in a graph: one_shot_push 21.2 us, two_shot_push 24.6; 16 MiB: 79.6,
    // 60.6 (2 of 4 x H100, 2026-11-27; 1 MiB: 10.4, 12.2)
    {"all_reduce", 2, std::size_t{4} << 20},
    {"all_reduce", 0, std::size_t{256} << 10},     // 1 MiB: two_shot_push 18.4 us, one_shot_push 21.1
    {"all_gather", 0, std::size_t{4} << 20},       // 16 MiB: direct 52.1 us, staged 55.9
    {"reduce_scatter", 2, std::size_t{8} << 20},   // 2 ranks, 8 MiB out (16 in): staged 42.0 us, direct 44.6
    {"reduce_scatter", 0, std::size_t{4} << 20},   // 4 MiB out (16 in): staged 56.1 us, direct 60.2
    {"all_to_all", 0, std::size_t{4} << 20},       // 16 MiB: direct 52.8 us, staged 58.8
    {"broadcast", 2, std::size_t{16} << 20},       // 2 ranks, 16 MiB: staged 53.9 us, direct 65.8
    {"broadcast", 0, std::size_t{1} << 20},        // 4 MiB: direct 41.1 us, staged 93.2 (1 MiB: 18.8, 21.0)
};

// Where automatic sends data-and-flag words (all_reduce: one_shot_ll; the others: the ll
// route), for types of at most 4 bytes: the largest size at which they were the faster
// in a graph, from `iris-bench ccl --graph --dtypes bf16 --sizes 8KiB,...,4MiB
// --algorithms one_shot_push,one_shot_ll --routes ll,staged,direct` on 2 x H100 and
// 4 x H100 (2026-11-26 and 2026-11-27, docs/performance.md), 16-bit values two to a
// word, sizes as kSmallUpTo counts them. Only the worlds measured have rows (world 0
// would be any); at one rank there is no link to save a trip on, and the staged copy
// stays.
constexpr SmallUpTo kLlUpTo[] = {
    {"all_reduce", 2, std::size_t{512} << 10},      // 512 KiB: 7.51 us against 7.72; 1 MiB: 12.24 against 10.28
    {"all_gather", 2, std::size_t{1} << 20},        // 1 MiB: 6.97 us against staged 8.30; 2 MiB: 11.27 against 10.28
    {"reduce_scatter", 2, std::size_t{512} << 10},  // 512 KiB out: 6.77 us against 7.51; 1 MiB out: 11.35 against 10.66
    {"all_to_all", 2, std::size_t{1} << 20},        // 1 MiB: 6.76 us against 7.86; 2 MiB: 11.45 against 10.58
    {"broadcast", 2, std::size_t{1} << 20},         // 1 MiB: 8.53 us against staged 9.58; 2 MiB: 14.17 against 12.84
    {"all_reduce", 4, std::size_t{64} << 10},       // 64 KiB: 6.07 us against 6.81; 128 KiB: 7.93 against 7.73
    {"all_gather", 4, std::size_t{256} << 10},      // 256 KiB: 6.44 us against staged 6.93; 1 MiB: 10.00 against 8.61
    {"reduce_scatter", 4, std::size_t{64} << 10},   // 64 KiB out: 7.16 us against 7.60; 256 KiB out: 10.41 against 9.48
    // 256 KiB: 5.91 / 5.85 us against staged 7.90 / 7.16 (two runs, 2026-11-27 16:40 UTC;
    // 7.77 against 7.27 the day before); 512 KiB: 7.25 / 8.22 against 8.47 / 7.34
    {"all_to_all", 4, std::size_t{256} << 10},
    // relayed from kBroadcastRelayFrom; 2 MiB: 16.70 us against direct 22.53; 4 MiB:
    // 30.27 against 29.17 (owners turning with the program, 2026-11-27)
    {"broadcast", 4, std::size_t{2} << 20},
};

// Where automatic's all_reduce runs two_shot_ll past one_shot_push's sizes (kSmallUpTo),
// for types of at most 4 bytes: two trips in words and no fence beat two_shot_push's
// flag rounds until the doubled bytes cost more (4 x H100 in a graph, 2026-11-27,
// `--algorithms one_shot_ll,two_shot_ll,one_shot_push,two_shot_push`: 512 KiB 9.64 us
// against 12.11; 1 MiB 14.74 against 14.98; 2 MiB 26.49 against 19.95). At 2 ranks the
// two shots store the same bytes as one, so there is no row.
constexpr SmallUpTo kTwoShotLlUpTo[] = {
    {"all_reduce", 4, std::size_t{1} << 20},
};
// Where a kTwoShotLlUpTo row applies, one_shot_push keeps the sizes up to this (in a
// graph, 128 KiB: one_shot_push 7.04 us, two_shot_ll 7.91; 256 KiB: 8.57, 8.42).
constexpr std::size_t kOneShotPushBeforeTwoShotLl = std::size_t{128} << 10;

// Where automatic's all_reduce sends slots (dsl/ccl/slots.iris), for f32, f16 and bf16:
// one_shot_ll to `ll`, one_shot_slots to `one_shot`, two_shot_slots to `two_shot` input
// bytes; past that the tables above decide. From `iris-bench ccl --graph --dtypes bf16
// --collectives all_reduce --algorithms one_shot_ll,one_shot_slots,two_shot_slots,
// one_shot_push,two_shot_push` on 4 x H100 (2026-11-27, docs/performance.md), in a
// graph: at 4 ranks 32 KiB one_shot_ll 5.28 us against one_shot_slots 5.53, 64 KiB 5.26
// against 5.18, 128 KiB 7.60 against 5.73, 1 MiB two_shot_slots 11.45 against
// two_shot_ll 15.20 and two_shot_push 15.43, 8 MiB 46.61 against two_shot_push 49.81,
// 16 MiB 90.03 against 90.87 (a tie; 32 MiB 181.6 against 168.3); at 2 ranks 8 KiB
// one_shot_ll 3.58 against 4.06, 64 KiB 3.95 against 3.98, 256 KiB 5.32 against 4.60, 1
// MiB one_shot_slots 7.60 against one_shot_push 10.33, 4 MiB two_shot_slots 16.64
// against 21.16, 16 MiB 62.13 against two_shot_push 61.74. Only the worlds measured have
// rows; the first whose world covers the call's applies.
struct SlotsUpTo {
  int world;  // the most ranks the row is for
  std::size_t ll, one_shot, two_shot;
};
constexpr SlotsUpTo kSlotsUpTo[] = {
    {2, std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{8} << 20},
    {4, std::size_t{32} << 10, std::size_t{256} << 10, std::size_t{8} << 20},
};

// What automatic runs in slots for an all_reduce of `bytes` of dt at `world` ranks:
// automatic where no row covers the call (then the other tables decide).
Algorithm all_reduce_in_slots(std::size_t bytes, int world, DType dt) {
  if (world < 2 || !slot_type(dt)) return Algorithm::automatic;
  for (const SlotsUpTo& row : kSlotsUpTo) {
    if (world > row.world) continue;
    if (bytes <= row.ll) return Algorithm::one_shot_ll;
    if (bytes <= row.one_shot) return Algorithm::one_shot_slots;
    if (bytes <= row.two_shot) return Algorithm::two_shot_slots;
    return Algorithm::automatic;
  }
  return Algorithm::automatic;
}

// Where automatic sends all_gather, reduce_scatter, all_to_all and broadcast in slots (the
// slots route), for f32, f16 and bf16: from past `from` (the sizes below keep their
// route, ll) to `bytes` of output (broadcast: x). From `iris-bench ccl --graph --dtypes
// bf16 --collectives all_gather,reduce_scatter,all_to_all,broadcast --routes
// ll,slots,staged,direct --sizes 8KiB,...,16MiB` on 4 x H100 (2026-11-27,
// docs/performance.md), in a graph: all_gather 256 KiB ll 6.15 us against slots 6.37, 1
// MiB 9.77 against 8.21, 4 MiB slots 17.61 against staged 18.76, 16 MiB direct 49.22
// against slots 58.69; reduce_scatter 256 KiB slots 6.41 against staged 7.48, 4 MiB
// 16.75 against 19.61; all_to_all 1 MiB 8.12 against ll 10.42, 4 MiB 17.33 against
// staged 18.77; broadcast slots at every size, 8 KiB 3.40 against ll 3.45, 4 MiB 17.75
// against direct 30.09, 16 MiB 59.22 against 66.16. Not yet measured at 2 ranks: no row.
struct SlotsRouteUpTo {
  const char* collective;
  int world;  // the most ranks the row is for
  std::size_t from, bytes;
};
constexpr SlotsRouteUpTo kSlotsRouteUpTo[] = {
    {"all_gather", 4, std::size_t{256} << 10, std::size_t{4} << 20},
    {"reduce_scatter", 4, std::size_t{64} << 10, std::size_t{4} << 20},
    {"all_to_all", 4, std::size_t{256} << 10, std::size_t{4} << 20},
    {"broadcast", 4, 0, std::size_t{16} << 20},
};

// Whether automatic sends `collective` of `bytes` of dt at `world` ranks in slots.
bool route_in_slots(const char* collective, std::size_t bytes, int world, DType dt) {
  if (world < 3 || !slot_type(dt)) return false;
  for (const SlotsRouteUpTo& row : kSlotsRouteUpTo) {
    if (std::string_view(row.collective) == collective && world <= row.world) return bytes > row.from && bytes <= row.bytes;
  }
  return false;
}

// The first row of `table` for `collective` whose world covers `world`, or null.
template <std::size_t N>
const SmallUpTo* row_for(const SmallUpTo (&table)[N], const char* collective, int world) {
  for (const SmallUpTo& row : table) {
    if (std::string_view(row.collective) == collective && (row.world == 0 || world <= row.world)) return &row;
  }
  return nullptr;
}

std::size_t ll_up_to(const char* collective, int world, DType dt) {
  if (dtype_size(dt) > 4 || world < 2) return 0;
  const SmallUpTo* row = row_for(kLlUpTo, collective, world);
  return row ? row->bytes : 0;
}

std::size_t small_up_to(const char* collective, int world) {
  if (const SmallUpTo* row = row_for(kSmallUpTo, collective, world)) return row->bytes;
  throw Error(std::string("iris::ccl: no automatic choice for '") + collective + "'");
}

bool atomic_sums(DType t) { return t != DType::f16 && t != DType::bf16; }

}  // namespace

void require_op(const char* what, ReduceOp op) {
  if (static_cast<unsigned>(op) > static_cast<unsigned>(ReduceOp::min)) {
    throw Error(std::string(what) + ": ccl::ReduceOp " + std::to_string(static_cast<int>(op)) +
                " is not a reduction (sum, max or min)");
  }
}

Route choose_route(const char* collective, Route asked, std::size_t bytes, int world, DType dtype) {
  if (static_cast<unsigned>(asked) > static_cast<unsigned>(Route::slots)) {
    throw Error(std::string(collective) + ": ccl::Route " + std::to_string(static_cast<int>(asked)) +
                " is not a route (automatic, direct, staged, ll or slots)");
  }
  if (asked != Route::automatic) return asked;
  const std::size_t small = small_up_to(collective, world);  // also refuses an unknown collective
  if (route_in_slots(collective, bytes, world, dtype)) return Route::slots;
  if (bytes <= ll_up_to(collective, world, dtype)) return Route::ll;
  return bytes <= small ? Route::staged : Route::direct;
}

Algorithm choose_all_reduce(Algorithm asked, std::size_t bytes, int world, DType dtype, ReduceOp op) {
  if (static_cast<unsigned>(asked) > static_cast<unsigned>(Algorithm::two_shot_slots)) {
    throw Error("all_reduce: ccl::Algorithm " + std::to_string(static_cast<int>(asked)) + " is not an algorithm");
  }
  require_op("all_reduce", op);
  if (asked == Algorithm::atomic && (op != ReduceOp::sum || !atomic_sums(dtype))) {
    throw Error(std::string("all_reduce: the atomic algorithm sums 32- and 64-bit types only, not ") + name(op) +
                " of " + std::string(dtype_name(dtype)));
  }
  const bool ll = in_words(asked);
  if (ll && dtype_size(dtype) > 4) {
    throw Error(std::string("all_reduce: ") + name(asked) + " carries types of at most 4 bytes beside its flags, not " +
                std::string(dtype_name(dtype)));
  }
  if (ll && bytes > kLlMostBytes) {
    throw Error(std::string("all_reduce: ") + name(asked) + " takes at most " + std::to_string(kLlMostBytes >> 10) + " KiB a call, not " +
                std::to_string(bytes) + " bytes (its words hold the input several times over); use one_shot_push "
                "or two_shot_push");
  }
  if (in_slots(asked) && !slot_type(dtype)) throw Error(not_a_slot_type(std::string("all_reduce: ") + name(asked), dtype));
  if (in_slots(asked) && bytes > kSlotsMostBytes) {
    throw Error(std::string("all_reduce: ") + name(asked) + " takes at most " + std::to_string(kSlotsMostBytes >> 10) +
                " KiB a call, not " + std::to_string(bytes) + " bytes (its slots hold the input several times over); "
                "use one_shot_push or two_shot_push");
  }
  if (asked != Algorithm::automatic) return asked;
  if (const Algorithm in = all_reduce_in_slots(bytes, world, dtype); in != Algorithm::automatic) return in;
  if (bytes <= ll_up_to("all_reduce", world, dtype)) return Algorithm::one_shot_ll;
  const SmallUpTo* two = dtype_size(dtype) <= 4 && world > 2 ? row_for(kTwoShotLlUpTo, "all_reduce", world) : nullptr;
  if (bytes <= (two ? kOneShotPushBeforeTwoShotLl : small_up_to("all_reduce", world))) return Algorithm::one_shot_push;
  return two && bytes <= two->bytes ? Algorithm::two_shot_ll : Algorithm::two_shot_push;
}

}  // namespace iris::ccl
