// The pass pipeline over TIR: one straight list of passes, each a free function
// Module -> Module (in place). Optionally dumps the IR after a named pass and times
// every pass; the verifier (tir/verify.hpp) runs on sema's output and after every pass,
// in every build type, and stops the pipeline at the first pass that broke the IR.
#pragma once

#include <string>

#include "compiler/tir/tir.hpp"

namespace irisc {

struct PipelineOptions {
  std::string dump_ir_after;  // a pass name, or "all"
  bool time_passes = false;
  std::string only_pass;  // run just this pass (per-pass tests); empty: all
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
