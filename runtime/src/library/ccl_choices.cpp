// What the collectives run: the names of reductions, algorithms and routes, the checks of
// what a call asks for, and automatic's choice of algorithm (all_reduce) and route (the
// others) from its one table, ccl_automatic.def, measured on the machines named there.
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

bool slot_type(DType dt) { return dt == DType::f32 || dt == DType::f16 || dt == DType::bf16; }

std::string not_a_slot_type(const std::string& who, DType dt) {
  return who + " sends f32, f16 or bf16 (all bits set is an empty slot, which other types cannot spare), not " +
         std::string(dtype_name(dt));
}

namespace {

// automatic's table (ccl_automatic.def): each row's sizes, worlds and types, and what it
// runs there.
enum class Types { floats, narrow, any };

constexpr std::size_t kib(std::size_t n) { return n << 10; }
constexpr std::size_t mib(std::size_t n) { return n << 20; }
constexpr std::size_t any_size = ~std::size_t{0};

struct AutomaticRow {
  const char* collective;
  int from_world, to_world;  // to_world 0: any number of ranks
  Types types;
  std::size_t up_to;  // bytes
  Algorithm algorithm;  // all_reduce
  Route route;          // the others
};

constexpr AutomaticRow kAutomatic[] = {
#define ALL_REDUCE(from_world, to_world, types, up_to, algorithm) \
  {"all_reduce", from_world, to_world, Types::types, up_to, Algorithm::algorithm, Route::automatic},
#define ROUTE(collective, from_world, to_world, types, up_to, route) \
  {#collective, from_world, to_world, Types::types, up_to, Algorithm::automatic, Route::route},
#include "library/ccl_automatic.def"
#undef ALL_REDUCE
#undef ROUTE
};

// Rows that could run what their types cannot carry, or collectives some calls of which
// no row covers, do not build: a table written by `iris-bench ccl --table` is checked as
// it compiles.
constexpr bool rows_fit_their_types() {
  for (const AutomaticRow& row : kAutomatic) {
    const bool words = in_words(row.algorithm) || row.route == Route::ll;
    const bool slots = in_slots(row.algorithm) || row.route == Route::slots;
    if ((slots && row.types != Types::floats) || (words && row.types == Types::any)) return false;
    const bool all_reduce = std::string_view(row.collective) == "all_reduce";
    if (all_reduce != (row.algorithm != Algorithm::automatic)) return false;
    if (!all_reduce && row.route == Route::automatic) return false;
    if (row.from_world < 1 || (row.to_world != 0 && row.to_world < row.from_world)) return false;
  }
  return true;
}
constexpr bool every_call_covered() {
  for (const char* c : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"}) {
    bool covered = false;
    for (const AutomaticRow& row : kAutomatic) {
      covered = covered || (std::string_view(row.collective) == c && row.from_world == 1 && row.to_world == 0 &&
                            row.types == Types::any && row.up_to == any_size);
    }
    if (!covered) return false;
  }
  return true;
}
static_assert(rows_fit_their_types(), "ccl_automatic.def: a row runs slots for types other than floats, words for "
                                      "types wider than 4 bytes, or names no algorithm or route of its collective");
static_assert(every_call_covered(), "ccl_automatic.def: a collective has no row for any world, any type and any size");

bool admits(Types types, DType dt) {
  switch (types) {
    case Types::floats: return slot_type(dt);
    case Types::narrow: return dtype_size(dt) <= 4;
    case Types::any: return true;
  }
  return false;
}

// The first row of the table that covers the call; every call has one (the last
// section's rows have no limit), and a collective without rows has none.
const AutomaticRow* automatic_row(const char* collective, std::size_t bytes, int world, DType dt) {
  for (const AutomaticRow& row : kAutomatic) {
    if (std::string_view(row.collective) != collective || world < row.from_world) continue;
    if ((row.to_world != 0 && world > row.to_world) || !admits(row.types, dt) || bytes > row.up_to) continue;
    return &row;
  }
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
  if (std::string_view(collective) == "all_reduce") throw Error("iris::ccl: all_reduce takes an algorithm, not a route");
  return automatic_row(collective, bytes, world, dtype)->route;
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
  return automatic_row("all_reduce", bytes, world, dtype)->algorithm;
}

}  // namespace iris::ccl
