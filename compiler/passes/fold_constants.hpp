// fold_constants: casts of constants become constants of the target type, and
// arithmetic on two constants of one type is computed (sema already folded the
// untyped integer arithmetic it needed for sizes and tile shapes).
#pragma once

#include "compiler/tir/tir.hpp"

namespace irisc {

// Returns the number of values folded.
int fold_constants(tir::Module& module);

}  // namespace irisc
