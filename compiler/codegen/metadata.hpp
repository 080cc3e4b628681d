// The launch contract of a compiled module (compiler/contract/launch_contract.hpp), made
// from the TIR after the decision passes: for each kernel its parameters (kind, dtype,
// symmetric, extents as expressions), size symbols, compile-time values, grid or roles,
// threads, blocks per SM, dynamic shared memory and the ordered argument list that the
// emitted kernel signature follows and libiris packs (with a tensor map per operand for
// a kernel that runs as the sm90 GEMM template).
#pragma once

#include <string>

#include "compiler/contract/launch_contract.hpp"
#include "compiler/tir/tir.hpp"

namespace irisc {

// The CUDA symbol of a kernel named `name` (user names are kept apart from C++ and
// CUDA names such as `sin` or `main`).
std::string kernel_symbol(const std::string& name);

contract::Kernel launch_contract(const tir::Kernel& kernel);
contract::Module launch_contract(const tir::Module& module);

// A C/C++ string literal holding `text` (escaped, split over lines).
std::string cuda_string_literal(const std::string& text);

}  // namespace irisc
