// The pass pipeline over TIR: one straight list of passes, each a free function
// Module -> Module (in place). Optionally dumps the IR after a named pass and times
// every pass; the verifier runs after each pass in debug builds.
#pragma once

#include <string>

#include "compiler/tir/tir.hpp"

namespace irisc {

struct PipelineOptions {
  std::string dump_ir_after;  // a pass name, or "all"
  bool time_passes = false;
};

struct PipelineLog {
  std::string dumps;   // "// after <pass>\n<tir>"
  std::string timing;  // one line per pass
  std::string verify_error;  // non-empty: a pass broke the IR (a compiler bug)
};

// Names of the passes, in order (for --dump-ir-after validation and --help).
const std::vector<std::string>& pass_names();

PipelineLog run_pipeline(tir::Module& module, const PipelineOptions& options);

}  // namespace irisc
