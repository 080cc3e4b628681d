// The back half both drivers share (compile() from .iris, compile_tir() from a listing):
// from TIR that sema made or the reader read, through the pass pipeline, the listing,
// CUDA emission and the toolchain, to the stage asked for. Internal to driver/.
#pragma once

#include "compiler/diagnostics/diagnostics.hpp"
#include "compiler/driver/compile.hpp"
#include "compiler/target/target.hpp"
#include "compiler/tir/tir.hpp"

namespace irisc::driver {

// Copies the diagnostics and their counts into `r`.
void finish(CompileResult& r, const Diagnostics& diags);

// The Target options.target names, or null after an UnknownTarget diagnostic.
const Target* find_target_or_report(const CompileOptions& options, Diagnostics& diags);

// Keeps only the kernels options.kernels names (all when it is empty); false after an
// UnknownKernel diagnostic for a name the module has no kernel of.
bool select_kernels(tir::Module& module, const CompileOptions& options, Diagnostics& diags);

// Runs the pipeline (only options.only_pass when set; none for a listing that asks for
// --emit=tir without a pass: `passes_for_listing` false), prints the TIR, then emits
// and compiles while options.stop_after asks for more. Ends with finish().
void lower(tir::Module& module, const SourceBuffer& source, const CompileOptions& options, const Target& target,
           bool passes_for_listing, Diagnostics& diags, CompileResult& r);

}  // namespace irisc::driver
