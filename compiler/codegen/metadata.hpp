// The launch contract of a compiled module, as JSON: for each kernel its parameters
// (kind, dtype, symmetric, extents), size symbols, compile-time values, grid policy or
// roles, threads per program. libiris reads it to launch any irisc kernel and to
// check the arguments it is given.
#pragma once

#include <string>
#include <vector>

#include "compiler/tir/tir.hpp"

namespace irisc {

// The CUDA symbol of a kernel named `name` (user names are kept apart from C++ and
// CUDA names such as `sin` or `main`).
std::string kernel_symbol(const std::string& name);

// `threads[i]` is the block size chosen for module.kernels[i].
std::string metadata_json(const tir::Module& module, const std::vector<int>& threads);
// A C/C++ string literal holding `text` (escaped, split over lines).
std::string cuda_string_literal(const std::string& text);

}  // namespace irisc
