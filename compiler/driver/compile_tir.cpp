// The driver for TIR input (see compile.hpp): a .tir listing -> read -> verify ->
// passes -> CUDA C++ -> PTX / cubin. After the pipeline it follows compile() step by
// step (compile.cpp); keep the two in step.
#include <stdexcept>

#include "compiler/codegen/emit_cuda.hpp"
#include "compiler/driver/compile.hpp"
#include "compiler/passes/pipeline.hpp"
#include "compiler/target/target.hpp"
#include "compiler/tir/tir_read.hpp"
#include "compiler/tir/verify.hpp"
#include "compiler/toolchain/nvrtc.hpp"

namespace irisc {
namespace {

void finish(CompileResult& r, const Diagnostics& diags) {
  r.diagnostics = diags.all();
  r.rendered_diagnostics = diags.render(false);
  r.rendered_diagnostics_color = diags.render(true);
  r.errors = diags.error_count();
  r.warnings = diags.warning_count();
  r.ok = !diags.has_errors();
}

}  // namespace

CompileResult compile_tir(const SourceBuffer& source, const CompileOptions& options) {
  CompileResult r;
  Diagnostics diags(&source);
  diags.set_warnings_as_errors(options.warnings_as_errors);
  const Target* target = find_target(options.target);
  if (!target) {
    diags.emit_unlocated(DiagnosticKind::UnknownTarget, {options.target, target_names()});
    finish(r, diags);
    return r;
  }
  // A listing's compile-time parameters are already bound: -D names none of them.
  for (const auto& [name, value] : options.defines) diags.emit_unlocated(DiagnosticKind::UnknownDefine, {name});

  tir::Module tm;
  tir::ReadError err;
  if (!tir::read(source.text(), &tm, &err)) {
    const std::uint32_t end = err.offset < source.text().size() ? err.offset + 1 : err.offset;
    diags.emit(DiagnosticKind::BadTir, {err.offset, end}, {err.message});
    finish(r, diags);
    return r;
  }
  if (tm.kernels.empty()) {
    diags.emit_unlocated(DiagnosticKind::EmptyFile);
    finish(r, diags);
    return r;
  }
  if (std::string why = tir::verify(tm); !why.empty()) {
    diags.emit_unlocated(DiagnosticKind::BadTir, {"it does not verify: " + why});
    finish(r, diags);
    return r;
  }
  if (diags.has_errors()) {  // -Werror and a -D
    finish(r, diags);
    return r;
  }
  tm.target = target;

  // --emit=tir runs the one pass asked for, or none; code generation needs them all.
  const bool lower = options.stop_after > Stage::tir && options.only_pass.empty();
  if (lower || !options.only_pass.empty()) {
    PipelineLog log = run_pipeline(tm, {options.dump_ir_after, options.time_passes, options.only_pass});
    r.pass_dumps = log.dumps;
    r.pass_timing = log.timing;
    if (!log.verify_error.empty()) {
      diags.emit_unlocated(DiagnosticKind::ToolchainFailed, {"TIR verifier: " + log.verify_error});
      finish(r, diags);
      return r;
    }
  }
  r.tir = tir::print(tm);
  if (!lower) {
    finish(r, diags);
    return r;
  }

  CudaModule cm;
  try {
    cm = emit_cuda(tm, source.name());
  } catch (const std::logic_error& e) {
    diags.emit_unlocated(DiagnosticKind::ToolchainFailed, {std::string("internal error: ") + e.what()});
    finish(r, diags);
    return r;
  }
  r.cuda = cm.source;
  r.metadata = cm.metadata;
  if (options.stop_after == Stage::cuda) {
    finish(r, diags);
    return r;
  }
  toolchain::CudaCompileOptions co;
  co.arch = target->name;
  co.opt_level = options.opt_level;
  co.line_info = options.line_info;
  co.include_dirs = options.include_dirs;
  co.want_ptx = true;
  co.want_cubin = options.stop_after == Stage::cubin;
  try {
    toolchain::CudaCompileResult cr = toolchain::compile_cuda(cm.source, source.name() + ".cu", co);
    r.toolchain_log = cr.log;
    if (!cr.ok) {
      diags.emit_unlocated(DiagnosticKind::ToolchainFailed, {cr.log.substr(0, 4000)});
    } else {
      r.ptx = std::move(cr.ptx);
      r.cubin = std::move(cr.cubin);
    }
  } catch (const toolchain::ToolchainError& e) {
    diags.emit_unlocated(DiagnosticKind::ToolchainFailed, {e.what()});
  }
  finish(r, diags);
  return r;
}

}  // namespace irisc
