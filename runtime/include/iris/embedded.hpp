// Code objects embedded into an executable at build time (CMake: iris_add_fatbin).
// Each embedded object <symbol> is reachable as iris::embedded::<symbol>().
#pragma once

#include <cstddef>
#include <span>

#define IRIS_DECLARE_EMBEDDED(symbol) \
  namespace iris::embedded {          \
  std::span<const std::byte> symbol(); \
  }
