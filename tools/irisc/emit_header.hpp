// --emit=header: a C++ header holding a compiled module (cubin with its metadata) and
// one typed launcher per kernel, so applications embed irisc kernels at build time.
#pragma once

#include <string>

#include "compiler/driver/compile.hpp"

namespace irisc {

// `stem` names the C++ namespace (iris_kernels::<stem>) and the header guard.
std::string emit_header(const CompileResult& result, const std::string& stem, const std::string& target);

}  // namespace irisc
