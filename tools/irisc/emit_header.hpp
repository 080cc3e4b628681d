// --emit=header: a C++ header holding a compiled module (cubin with its metadata, and
// the host code object for the host backend) and one typed launcher per kernel, so
// applications embed irisc kernels at build time.
#pragma once

#include <string>

#include "compiler/driver/compile.hpp"

namespace irisc {

// `stem` names the C++ namespace (iris_kernels::<stem>) and the header guard;
// `host_code` is the module's host code object (contract/host_code.hpp), which the
// launchers load instead when the job runs on the host backend.
std::string emit_header(const CompileResult& result, const std::string& stem, const std::string& target,
                        const std::string& host_code);

}  // namespace irisc
