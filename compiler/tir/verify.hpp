// verify: the checks that hold between any two passes. Every use of a variable has a
// definition in scope before it; every node has the operands its kind takes, with the
// types its kind needs; views name a tensor and carry the bounds their shape needs;
// launch values (extents, grid, role program counts) use only what exists at launch;
// once layouts are chosen, every tile shape in the kernel has one. A failure is a
// compiler bug, never a user error: the pipeline runs this after every pass, in every
// build type, and reports the pass that broke the IR.
#pragma once

#include <string>

#include "compiler/tir/tir.hpp"

namespace irisc::tir {

// An empty string when the module is well formed; else "kernel K: what is wrong".
std::string verify(const Module& module);

}  // namespace irisc::tir
