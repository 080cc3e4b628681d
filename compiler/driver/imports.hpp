// Imports: `import "ccl/common.iris";` brings another file's functions into a module.
// A path is looked up, in order, among the files the caller supplies
// (CompileOptions::import_files: what a host code object carries), beside the importing
// file, in each -I directory, and in the embedded standard library (dsl/). Each file
// is read once however often it is imported; a file importing itself through others is
// an ImportCycle. Imported files' kernels are not compiled: only their functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compiler/ast/ast.hpp"
#include "compiler/diagnostics/diagnostics.hpp"
#include "compiler/driver/compile.hpp"

namespace irisc {

// Loads every file `module` imports (and what they import), appending each to `source`
// and its functions to module.functions. `imported` gets each file as (the path its
// import wrote, its text), in load order.
void load_imports(ast::Module& module, SourceBuffer& source, const CompileOptions& options, Diagnostics& diags,
                  std::vector<std::pair<std::string, std::string>>* imported);

}  // namespace irisc
