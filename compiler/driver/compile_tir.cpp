// The driver for TIR input (see compile.hpp): a .tir listing -> read -> verify, then the
// back half shared with compile() (lower.hpp): passes -> CUDA C++ -> PTX / cubin.
#include "compiler/driver/compile.hpp"
#include "compiler/driver/lower.hpp"
#include "compiler/target/target.hpp"
#include "compiler/tir/tir_read.hpp"
#include "compiler/tir/verify.hpp"

namespace irisc {
using driver::finish;

bool read_host_listing(std::string_view listing, tir::Module* module, std::string* why) {
  tir::ReadError err;
  if (!tir::read(listing, module, &err)) {
    *why = "its listing does not read at " + std::to_string(err.line) + ":" + std::to_string(err.column) + ": " +
           err.message;
    return false;
  }
  module->target = find_target("host");
  if (std::string bad = tir::verify(*module); !bad.empty()) {
    *why = "its listing does not verify: " + bad;
    return false;
  }
  return true;
}

CompileResult compile_tir(const SourceBuffer& source, const CompileOptions& options) {
  CompileResult r;
  Diagnostics diags(&source);
  diags.set_warnings_as_errors(options.warnings_as_errors);
  const Target* target = driver::find_target_or_report(options, diags);
  if (!target) {
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
  tm.target = target;  // the verifier checks each matmul's lowering against it
  if (std::string why = tir::verify(tm); !why.empty()) {
    diags.emit_unlocated(DiagnosticKind::BadTir, {"it does not verify: " + why});
    finish(r, diags);
    return r;
  }
  if (diags.has_errors() || !driver::select_kernels(tm, options, diags)) {  // -Werror and a -D; --kernel
    finish(r, diags);
    return r;
  }
  // A listing carries no source positions: the kernels' waits and trace events get none.
  const SourceBuffer unlocated(source.name(), "");
  driver::lower(tm, unlocated, options, *target, /*passes_for_listing=*/false, diags, r);
  return r;
}

}  // namespace irisc
