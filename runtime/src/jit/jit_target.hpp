// How the JIT picks irisc's target for an AMD GPU (see jit_target_for in iris/jit.hpp).
#pragma once

#include <string>
#include <string_view>

namespace iris {

// The irisc target for an AMD GPU whose HIP architecture name is `gfx_arch`, target
// features and all ("gfx942:sramecc+:xnack-" -> "gfx942", irisc::target_for_gfx_arch).
// Throws iris::Error "irisc has no target for <gfx name>" when irisc has none.
std::string jit_target_for_gfx(std::string_view gfx_arch);

}  // namespace iris
