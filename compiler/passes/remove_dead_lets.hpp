// remove_dead_lets: drops `let` statements whose variable is never read and whose
// value has no effect (atomics are kept), until none is left (a removed let may have
// been the last reader of another), so generated code holds no dead registers.
#pragma once

#include "compiler/tir/tir.hpp"

namespace irisc {

// Returns the number of statements removed.
int remove_dead_lets(tir::Module& module);

}  // namespace irisc
