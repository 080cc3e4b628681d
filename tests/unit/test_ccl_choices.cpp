// What iris::ccl's automatic picks, from its one table of measured crossovers
// (runtime/src/library/ccl_automatic.def, docs/library.md "Which algorithm runs where, and why"), and
// what it refuses. Pure functions of size, world and type: no GPU.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "iris/ccl.hpp"

namespace iris {
namespace {

using ccl::Algorithm;
using ccl::ReduceOp;
using ccl::Route;

constexpr std::size_t KiB = 1024, MiB = 1024 * 1024;

// The push forms by size and world (u32: no slots, which floating-point types take at
// 2-4 ranks; CclChoices.DataAndFlagWordsAt*Ranks).
TEST(CclChoices, AllReduceBySizeAndWorld) {
  const auto pick = [](std::size_t bytes, int world) {
    return ccl::choose_all_reduce(Algorithm::automatic, bytes, world, DType::u32, ReduceOp::sum);
  };
  EXPECT_EQ(pick(128 * KiB, 4), Algorithm::one_shot_push);
  EXPECT_EQ(pick(256 * KiB, 8), Algorithm::one_shot_push);
  EXPECT_EQ(pick(256 * KiB + 1, 8), Algorithm::two_shot_push);
  EXPECT_EQ(pick(4 * MiB, 4), Algorithm::two_shot_push);
  EXPECT_EQ(pick(256 * MiB, 8), Algorithm::two_shot_push);
  // At 2 ranks both move the same data; one_shot_push won to 4 MiB.
  EXPECT_EQ(pick(4 * MiB, 2), Algorithm::one_shot_push);
  EXPECT_EQ(pick(4 * MiB + 1, 2), Algorithm::two_shot_push);
  EXPECT_EQ(pick(1 * MiB, 1), Algorithm::one_shot_push);
  // An explicit algorithm is kept.
  EXPECT_EQ(ccl::choose_all_reduce(Algorithm::ring, 8, 4, DType::f32, ReduceOp::max), Algorithm::ring);
}

TEST(CclChoices, RoutesBySize) {
  // (i32: no slots, which floating-point types take at 3-4 ranks; RoutesInSlots.)
  EXPECT_EQ(ccl::choose_route("all_gather", Route::automatic, 4 * MiB, 4, DType::i32), Route::staged);
  EXPECT_EQ(ccl::choose_route("all_gather", Route::automatic, 4 * MiB + 1, 4, DType::bf16), Route::direct);
  EXPECT_EQ(ccl::choose_route("reduce_scatter", Route::automatic, 4 * MiB, 4, DType::i32), Route::staged);
  EXPECT_EQ(ccl::choose_route("all_to_all", Route::automatic, 16 * MiB, 4, DType::bf16), Route::direct);
  // 8-byte types never go in words, so broadcast's staged range shows with them.
  EXPECT_EQ(ccl::choose_route("broadcast", Route::automatic, 1 * MiB, 4, DType::i64), Route::staged);
  EXPECT_EQ(ccl::choose_route("broadcast", Route::automatic, 1 * MiB + 1, 4, DType::i64), Route::direct);
  // At 2 ranks root's link carries the data once either way; staging won to 16 MiB.
  EXPECT_EQ(ccl::choose_route("broadcast", Route::automatic, 16 * MiB, 2, DType::bf16), Route::staged);
  EXPECT_EQ(ccl::choose_route("broadcast", Route::automatic, 16 * MiB + 1, 2, DType::bf16), Route::direct);
  EXPECT_EQ(ccl::choose_route("reduce_scatter", Route::automatic, 8 * MiB, 2, DType::bf16), Route::staged);
  // automatic never picks what is not yet measured: data-and-flag words at one rank or
  // past 4, and at 4 ranks past the measured crossovers.
  for (std::size_t b : {std::size_t{8}, 64 * KiB, 1 * MiB, 256 * MiB}) {
    for (int world : {1, 8}) {
      EXPECT_NE(ccl::choose_route("all_gather", Route::automatic, b, world, DType::bf16), Route::ll);
      const Algorithm a = ccl::choose_all_reduce(Algorithm::automatic, b, world, DType::f32, ReduceOp::sum);
      EXPECT_NE(a, Algorithm::one_shot_ll);
      EXPECT_NE(a, Algorithm::one_shot_slots);
      EXPECT_NE(a, Algorithm::two_shot_slots);
    }
  }
  EXPECT_EQ(ccl::choose_route("all_to_all", Route::ll, 8, 4, DType::bf16), Route::ll);
  EXPECT_THROW(ccl::choose_route("gather", Route::automatic, 8, 4, DType::bf16), Error);
  EXPECT_THROW(ccl::choose_route("gather", Route::automatic, 8, 2, DType::bf16), Error);
  // all_reduce has algorithms; a route for it is a caller's mistake, said so.
  EXPECT_THROW(ccl::choose_route("all_reduce", Route::automatic, 8, 4, DType::bf16), Error);
}

// At 2 ranks small calls of types of at most 4 bytes go in data-and-flag words, to the
// sizes the table in ccl_choices.cpp says; wider types never do.
TEST(CclChoices, DataAndFlagWordsAtTwoRanks) {
  const auto ar = [](std::size_t bytes, DType t) {
    return ccl::choose_all_reduce(Algorithm::automatic, bytes, 2, t, ReduceOp::sum);
  };
  EXPECT_EQ(ar(8, DType::bf16), Algorithm::one_shot_ll);
  EXPECT_EQ(ar(64 * KiB, DType::f32), Algorithm::one_shot_ll);
  // Floating-point types then go in slots: one shot to 1 MiB, two shots to 8 MiB.
  EXPECT_EQ(ar(64 * KiB + 1, DType::f32), Algorithm::one_shot_slots);
  EXPECT_EQ(ar(1 * MiB, DType::f16), Algorithm::one_shot_slots);
  EXPECT_EQ(ar(1 * MiB + 1, DType::bf16), Algorithm::two_shot_slots);
  EXPECT_EQ(ar(8 * MiB, DType::bf16), Algorithm::two_shot_slots);
  EXPECT_EQ(ar(8 * MiB + 1, DType::bf16), Algorithm::two_shot_push);
  // Integers keep the words to 512 KiB, then one_shot_push to 4 MiB (at 2 ranks two
  // shots store what one does, in two trips: two_shot_ll is never picked).
  EXPECT_EQ(ar(512 * KiB, DType::i32), Algorithm::one_shot_ll);
  EXPECT_EQ(ar(512 * KiB + 1, DType::i32), Algorithm::one_shot_push);
  EXPECT_EQ(ar(8, DType::i64), Algorithm::one_shot_push);
  EXPECT_EQ(ar(1 * MiB + 1, DType::u32), Algorithm::one_shot_push);
  EXPECT_EQ(ar(4 * MiB + 1, DType::u32), Algorithm::two_shot_push);
  EXPECT_EQ(ccl::choose_route("all_gather", Route::automatic, 1 * MiB, 2, DType::bf16), Route::ll);
  EXPECT_EQ(ccl::choose_route("all_gather", Route::automatic, 1 * MiB + 1, 2, DType::bf16), Route::staged);
  EXPECT_EQ(ccl::choose_route("all_to_all", Route::automatic, 1 * MiB, 2, DType::i32), Route::ll);
  EXPECT_EQ(ccl::choose_route("reduce_scatter", Route::automatic, 512 * KiB, 2, DType::f16), Route::ll);
  EXPECT_EQ(ccl::choose_route("reduce_scatter", Route::automatic, 512 * KiB + 1, 2, DType::f16), Route::staged);
  EXPECT_EQ(ccl::choose_route("all_gather", Route::automatic, 8, 2, DType::u64), Route::staged);
  EXPECT_EQ(ccl::choose_route("broadcast", Route::automatic, 1 * MiB, 2, DType::bf16), Route::ll);
  EXPECT_EQ(ccl::choose_route("broadcast", Route::automatic, 1 * MiB + 1, 2, DType::bf16), Route::staged);
}

// Values outside the enums (a cast from an int, a stale ABI) are refused, not run as
// whatever the kernels make of them.
TEST(CclChoices, ValuesOutsideTheEnumsAreRefused) {
  EXPECT_THROW(ccl::choose_all_reduce(static_cast<Algorithm>(42), 64, 4, DType::f32, ReduceOp::sum), Error);
  EXPECT_THROW(ccl::choose_all_reduce(Algorithm::automatic, 64, 4, DType::f32, static_cast<ReduceOp>(7)), Error);
  EXPECT_THROW(ccl::choose_route("all_gather", static_cast<Route>(9), 64, 4, DType::bf16), Error);
  try {
    ccl::require_op("reduce_scatter", static_cast<ReduceOp>(3));
    ADD_FAILURE() << "ReduceOp 3 was not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reduce_scatter: ccl::ReduceOp 3 is not a reduction"), std::string::npos)
        << e.what();
  }
}

TEST(CclChoices, RefusalsNameTheirReason) {
  const auto message = [](Algorithm a, DType t, ReduceOp op) {
    try {
      ccl::choose_all_reduce(a, 64, 4, t, op);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(Algorithm::atomic, DType::bf16, ReduceOp::sum).find("32- and 64-bit"), std::string::npos);
  EXPECT_NE(message(Algorithm::atomic, DType::f32, ReduceOp::max).find("max"), std::string::npos);
  EXPECT_NE(message(Algorithm::one_shot_ll, DType::i64, ReduceOp::sum).find("at most 4 bytes"), std::string::npos);
  EXPECT_EQ(message(Algorithm::one_shot_ll, DType::bf16, ReduceOp::sum), "");
  // one_shot_ll's words hold 2 world times its input: past kLlMostBytes it is refused.
  EXPECT_NO_THROW(ccl::choose_all_reduce(Algorithm::one_shot_ll, ccl::kLlMostBytes, 4, DType::bf16, ReduceOp::sum));
  try {
    ccl::choose_all_reduce(Algorithm::one_shot_ll, ccl::kLlMostBytes + 1, 4, DType::bf16, ReduceOp::sum);
    ADD_FAILURE() << "one_shot_ll past kLlMostBytes was not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("one_shot_push"), std::string::npos) << e.what();
  }
  // Slots hold floating-point values only (all bits set is an empty slot).
  for (DType t : {DType::i32, DType::u32, DType::i64, DType::u64}) {
    EXPECT_NE(message(Algorithm::one_shot_slots, t, ReduceOp::sum).find("sends f32, f16 or bf16"), std::string::npos);
    EXPECT_NE(message(Algorithm::two_shot_slots, t, ReduceOp::max).find("sends f32, f16 or bf16"), std::string::npos);
  }
  for (DType t : {DType::f32, DType::f16, DType::bf16}) EXPECT_EQ(message(Algorithm::two_shot_slots, t, ReduceOp::sum), "");
  EXPECT_THROW(ccl::choose_all_reduce(Algorithm::two_shot_slots, ccl::kSlotsMostBytes + 2, 4, DType::bf16, ReduceOp::sum), Error);
  EXPECT_THROW(ccl::choose_all_reduce(static_cast<Algorithm>(static_cast<int>(Algorithm::two_shot_slots) + 1), 64, 4,
                                      DType::f32, ReduceOp::sum),
               Error);
}

TEST(CclChoices, Names) {
  EXPECT_STREQ(ccl::name(Algorithm::one_shot_push), "one_shot_push");
  EXPECT_STREQ(ccl::name(Algorithm::two_shot_push), "two_shot_push");
  EXPECT_STREQ(ccl::name(Algorithm::one_shot_ll), "one_shot_ll");
  EXPECT_STREQ(ccl::name(Algorithm::two_shot_ll), "two_shot_ll");
  EXPECT_STREQ(ccl::name(Algorithm::one_shot_slots), "one_shot_slots");
  EXPECT_STREQ(ccl::name(Algorithm::two_shot_slots), "two_shot_slots");
  EXPECT_STREQ(ccl::name(Route::staged), "staged");
  EXPECT_STREQ(ccl::name(Route::ll), "ll");
  EXPECT_STREQ(ccl::name(Route::slots), "slots");
  EXPECT_EQ(ccl::choose_route("all_gather", Route::slots, 8, 4, DType::bf16), Route::slots);
  EXPECT_THROW(ccl::choose_route("all_gather", static_cast<Route>(static_cast<int>(Route::slots) + 1), 8, 4, DType::bf16),
               Error);
}

// At 4 ranks the words pay to smaller sizes than at 2 for some collectives (each rank's
// words go to three peers).
TEST(CclChoices, DataAndFlagWordsAtFourRanks) {
  const auto ar = [](std::size_t bytes, int world) {
    return ccl::choose_all_reduce(Algorithm::automatic, bytes, world, DType::bf16, ReduceOp::sum);
  };
  EXPECT_EQ(ar(32 * KiB, 4), Algorithm::one_shot_ll);
  EXPECT_EQ(ar(32 * KiB + 1, 4), Algorithm::one_shot_slots);
  EXPECT_EQ(ar(256 * KiB, 4), Algorithm::one_shot_slots);
  EXPECT_EQ(ar(256 * KiB + 1, 4), Algorithm::two_shot_slots);
  EXPECT_EQ(ar(8 * MiB, 4), Algorithm::two_shot_slots);
  EXPECT_EQ(ar(8 * MiB + 1, 4), Algorithm::two_shot_push);
  EXPECT_EQ(ar(8 * KiB, 3), Algorithm::one_shot_ll);
  EXPECT_EQ(ar(1 * MiB, 3), Algorithm::two_shot_slots);
  // Integers keep the words and the push forms.
  const auto ari = [](std::size_t bytes) { return ccl::choose_all_reduce(Algorithm::automatic, bytes, 4, DType::i32, ReduceOp::sum); };
  EXPECT_EQ(ari(64 * KiB), Algorithm::one_shot_ll);
  EXPECT_EQ(ari(64 * KiB + 1), Algorithm::one_shot_push);
  EXPECT_EQ(ari(128 * KiB + 1), Algorithm::two_shot_ll);
  EXPECT_EQ(ari(1 * MiB), Algorithm::two_shot_ll);
  EXPECT_EQ(ari(1 * MiB + 1), Algorithm::two_shot_push);
  EXPECT_EQ(ccl::choose_all_reduce(Algorithm::automatic, 512 * KiB, 4, DType::i64, ReduceOp::sum), Algorithm::two_shot_push);
  // 8-byte types never take two_shot_ll, and keep one_shot_push to 256 KiB.
  EXPECT_EQ(ccl::choose_all_reduce(Algorithm::automatic, 200 * KiB, 4, DType::i64, ReduceOp::sum), Algorithm::one_shot_push);
  EXPECT_EQ(ccl::choose_all_reduce(Algorithm::automatic, 256 * KiB + 1, 4, DType::i64, ReduceOp::sum), Algorithm::two_shot_push);
  // broadcast relays its words from 128 KiB and keeps them to 2 MiB, past which the
  // direct route takes over (integers: floating-point types go in slots past the words).
  const std::tuple<const char*, std::size_t, Route> up_to[] = {{"all_gather", 256 * KiB, Route::staged},
                                                               {"reduce_scatter", 64 * KiB, Route::staged},
                                                               {"all_to_all", 256 * KiB, Route::staged},
                                                               {"broadcast", 2 * MiB, Route::direct}};
  for (auto [c, bytes, then] : up_to) {
    EXPECT_EQ(ccl::choose_route(c, Route::automatic, bytes, 4, DType::i32), Route::ll) << c;
    EXPECT_EQ(ccl::choose_route(c, Route::automatic, bytes + 1, 4, DType::i32), then) << c;
    EXPECT_NE(ccl::choose_route(c, Route::automatic, bytes, 4, DType::i64), Route::ll) << c;
  }
}

// At 3-4 ranks floating-point types go in slots past the words' sizes, to 4 MiB (broadcast:
// at every size to 16 MiB); integers never do, nor 2 ranks (not yet measured).
TEST(CclChoices, RoutesInSlots) {
  const std::tuple<const char*, std::size_t, std::size_t, Route> rows[] = {
      {"all_gather", 256 * KiB, 4 * MiB, Route::direct},
      {"reduce_scatter", 64 * KiB, 4 * MiB, Route::direct},
      {"all_to_all", 256 * KiB, 4 * MiB, Route::direct},
      {"broadcast", 0, 16 * MiB, Route::direct}};
  for (auto [c, from, to, then] : rows) {
    for (DType t : {DType::f32, DType::f16, DType::bf16}) {
      if (from) EXPECT_EQ(ccl::choose_route(c, Route::automatic, from, 4, t), Route::ll) << c;
      EXPECT_EQ(ccl::choose_route(c, Route::automatic, from + 1, 4, t), Route::slots) << c;
      EXPECT_EQ(ccl::choose_route(c, Route::automatic, to, 3, t), Route::slots) << c;
      EXPECT_EQ(ccl::choose_route(c, Route::automatic, to + 1, 4, t), then) << c;
    }
    EXPECT_NE(ccl::choose_route(c, Route::automatic, to, 4, DType::i32), Route::slots) << c;
    EXPECT_NE(ccl::choose_route(c, Route::automatic, to, 2, DType::bf16), Route::slots) << c;
    EXPECT_NE(ccl::choose_route(c, Route::automatic, to, 8, DType::bf16), Route::slots) << c;
  }
}

}  // namespace
}  // namespace iris
