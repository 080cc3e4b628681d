// How the JIT names irisc's targets and types: the target for an AMD GPU (see
// jit_target_for in iris/jit.hpp), and a type parameter's define for an element type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "iris/dtype.hpp"

namespace iris {

// The irisc target for an AMD GPU whose HIP architecture name is `gfx_arch`, target
// features and all ("gfx942:sramecc+:xnack-" -> "gfx942", irisc::target_for_gfx_arch).
// Throws iris::Error "irisc has no target for <gfx name>" when irisc has none.
std::string jit_target_for_gfx(std::string_view gfx_arch);

// The define that sets a type parameter to `t` (-DT=bf16 on irisc's command line), by
// the type's name: the runtime's and the compiler's element types meet by name only.
std::int64_t type_define_of(DType t);

}  // namespace iris
