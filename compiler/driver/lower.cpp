// The shared back half of the drivers (see lower.hpp).
#include "compiler/driver/lower.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "compiler/codegen/emit_cuda.hpp"
#include "compiler/codegen/emit_hip.hpp"
#include "compiler/contract/host_code.hpp"
#include "compiler/codegen/metadata.hpp"
#include "compiler/passes/pipeline.hpp"
#include "compiler/toolchain/amdgpu.hpp"
#include "compiler/toolchain/comgr.hpp"
#include "compiler/toolchain/nvrtc.hpp"

namespace irisc::driver {

void finish(CompileResult& r, const Diagnostics& diags) {
  r.diagnostics = diags.all();
  r.rendered_diagnostics = diags.render(false);
  r.rendered_diagnostics_color = diags.render(true);
  r.errors = diags.reported_error_count();
  r.warnings = diags.warning_count();
  r.ok = !diags.has_errors();
}

const Target* find_target_or_report(const CompileOptions& options, Diagnostics& diags) {
  const Target* target = find_target(options.target);
  if (!target) diags.emit_unlocated(DiagnosticKind::UnknownTarget, {options.target, target_names()});
  return target;
}

bool select_kernels(tir::Module& module, const CompileOptions& options, Diagnostics& diags) {
  if (options.kernels.empty()) return true;
  std::string names;
  for (const tir::Kernel& k : module.kernels) names += (names.empty() ? "" : ", ") + k.name;
  const auto asked = [&](const std::string& name) { return std::ranges::find(options.kernels, name) != options.kernels.end(); };
  bool ok = true;
  for (const std::string& want : options.kernels) {
    if (std::ranges::none_of(module.kernels, [&](const tir::Kernel& k) { return k.name == want; })) {
      diags.emit_unlocated(DiagnosticKind::UnknownKernel, {want, names});
      ok = false;
    }
  }
  if (ok) std::erase_if(module.kernels, [&](const tir::Kernel& k) { return !asked(k.name); });
  return ok;
}

namespace {

// The host target: the launch contract, and the module's listing with the source its
// positions point into as a host code object; there is no kernel source or assembly to
// show.
void host_code(const tir::Module& tm, const SourceBuffer& source, const CompileOptions& options, Diagnostics& diags,
               CompileResult& r) {
  if (options.stop_after == Stage::source || options.stop_after == Stage::assembly) {
    diags.emit_unlocated(DiagnosticKind::StageNotForTarget, {stage_name(options.stop_after), tm.target->name});
    return finish(r, diags);
  }
  r.metadata = contract::write(launch_contract(tm));
  HostCode code;
  code.name = source.name();
  code.defines = options.defines;
  code.trace_events = options.trace_events;
  code.source = std::string(source.file_text(0));
  code.imports = r.imports;
  for (int f = 1; f < source.file_count(); ++f) code.files.emplace_back(source.file_name(f), std::string(source.file_text(f)));
  code.tir = tir::print(tm, /*positions=*/true);
  const std::string bytes = write_host_code(code);
  r.code_object.resize(bytes.size());
  std::memcpy(r.code_object.data(), bytes.data(), bytes.size());
  finish(r, diags);
}

}  // namespace

void lower(tir::Module& tm, const SourceBuffer& source, const CompileOptions& options, const Target& target,
           bool passes_for_listing, Diagnostics& diags, CompileResult& r) {
  tm.target = &target;
  tm.tma_stores = options.tma_stores;
  // One pass alone leaves the other decisions unmade: nothing to emit then.
  const bool emit = options.stop_after > Stage::tir && options.only_pass.empty();
  if (emit || passes_for_listing || !options.only_pass.empty()) {
    PipelineLog log = run_pipeline(tm, {options.dump_ir_after, options.time_passes, options.only_pass});
    r.pass_dumps = log.dumps;
    r.pass_timing = log.timing;
    if (!log.verify_error.empty()) {
      diags.emit_unlocated(DiagnosticKind::ToolchainFailed, {"TIR verifier: " + log.verify_error});
      return finish(r, diags);
    }
  }
  r.tir = tir::print(tm);
  if (!emit) return finish(r, diags);
  if (target.toolchain == ToolchainKind::interpreter) return host_code(tm, source, options, diags, r);
  const bool amd = target.vendor == Vendor::amd;
  GpuSource cm;
  try {
    cm = amd ? emit_hip(tm, source, options.trace_events) : emit_cuda(tm, source, options.trace_events);
  } catch (const std::logic_error& e) {
    diags.emit_unlocated(DiagnosticKind::ToolchainFailed, {std::string("internal error: ") + e.what()});
    return finish(r, diags);
  }
  r.kernel_source = cm.source;
  r.metadata = cm.metadata;
  if (options.stop_after == Stage::source) return finish(r, diags);
  if (amd) {
    toolchain::AmdgpuCompileOptions co;
    co.arch = target.name;
    co.opt_level = options.opt_level;
    co.line_info = options.line_info;
    co.include_dirs = options.include_dirs;
    co.want_assembly = options.stop_after == Stage::assembly;
    co.want_code_object = options.stop_after == Stage::code_object;
    const bool comgr = toolchain_of(target) == ToolchainKind::comgr;
    if (std::string why; comgr ? !toolchain::comgr_available(target.name, &why) : !toolchain::amdgpu_toolchain_available(&why)) {
      diags.emit_unlocated(DiagnosticKind::ToolchainMissing, {target.name, why});
      return finish(r, diags);
    }
    toolchain::AmdgpuCompileResult ar = comgr ? toolchain::compile_hip_comgr(cm.source, source.name() + ".hip", co)
                                              : toolchain::compile_hip(cm.source, source.name() + ".hip", co);
    r.toolchain_log = ar.log;
    if (!ar.ok) {
      diags.emit_unlocated(DiagnosticKind::ToolchainFailed, {ar.log.substr(0, 4000)});
    } else {
      r.assembly = std::move(ar.assembly);
      r.code_object = std::move(ar.code_object);
    }
    return finish(r, diags);
  }
  toolchain::CudaCompileOptions co;
  co.arch = target.name;
  co.opt_level = options.opt_level;
  co.line_info = options.line_info;
  co.include_dirs = options.include_dirs;
  co.want_ptx = true;
  co.want_cubin = options.stop_after == Stage::code_object;
  try {
    toolchain::CudaCompileResult cr = toolchain::compile_cuda(cm.source, source.name() + ".cu", co);
    r.toolchain_log = cr.log;
    if (!cr.ok) {
      diags.emit_unlocated(DiagnosticKind::ToolchainFailed, {cr.log.substr(0, 4000)});
    } else {
      r.assembly = std::move(cr.ptx);
      r.code_object = std::move(cr.cubin);
    }
  } catch (const toolchain::ToolchainError& e) {
    diags.emit_unlocated(DiagnosticKind::ToolchainFailed, {e.what()});
  }
  finish(r, diags);
}

}  // namespace irisc::driver
