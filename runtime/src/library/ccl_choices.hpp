// What the collectives run (ccl_choices.cpp): the algorithm or route a call asks for,
// checked, and automatic's choice from the measured tables; what ccl.cpp needs of it.
#pragma once

#include <string>

#include "iris/ccl.hpp"

namespace iris::ccl {

// Whether all_reduce's algorithm `a` moves data-and-flag words.
constexpr bool in_words(Algorithm a) { return a == Algorithm::one_shot_ll || a == Algorithm::two_shot_ll; }
// Whether all_reduce's algorithm `a` sends slots.
constexpr bool in_slots(Algorithm a) { return a == Algorithm::one_shot_slots || a == Algorithm::two_shot_slots; }
// Whether slots hold values of dt: f32, f16 and bf16 (all bits set is an empty slot,
// which integers cannot spare).
bool slot_type(DType dt);
// "`who` sends f32, f16 or bf16 (...), not <dt>": the refusal of other types.
std::string not_a_slot_type(const std::string& who, DType dt);

}  // namespace iris::ccl
