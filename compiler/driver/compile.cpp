// The phase sequence (see compile.hpp).
#include "compiler/driver/compile.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <set>

#include "compiler/ast/ast.hpp"
#include "compiler/contract/launch_contract.hpp"
#include "compiler/driver/imports.hpp"
#include "compiler/driver/lower.hpp"
#include "compiler/lex/lexer.hpp"
#include "compiler/parse/parser.hpp"
#include "compiler/sema/sema.hpp"
#include "compiler/toolchain/amdgpu.hpp"
#include "compiler/toolchain/comgr.hpp"
#include "compiler/toolchain/device_headers.hpp"
#include "compiler/tir/tir.hpp"
#include "compiler/toolchain/nvrtc.hpp"

namespace irisc {

const char* irisc_version() { return "0.1.0"; }

bool parse_define(const std::string& text, std::string* name, std::int64_t* value) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  const std::string v = text.substr(eq + 1);
  if (v.empty()) return false;
  for (int t = 0; t <= static_cast<int>(tir::ScalarType::int_); ++t) {  // a type parameter's: -DT=bf16
    if (v == ast::scalar_type_name(static_cast<ast::ScalarType>(t))) {
      *name = text.substr(0, eq);
      *value = type_define(static_cast<tir::ScalarType>(t));
      return true;
    }
  }
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v.c_str(), &end, 0);
  if (*end || errno) return false;
  *name = text.substr(0, eq);
  *value = x;
  return true;
}

const char* stage_name(Stage s) {
  static const char* n[] = {"tokens", "ast", "tir", "source", "assembly", "code object"};
  return n[static_cast<int>(s)];
}

CompilerIdentity compiler_identity() {
  CompilerIdentity id;
  id.version = irisc_version();
  // The contract version too: a cached code object whose contract this libiris cannot
  // read would otherwise be found again after an upgrade.
  id.contract = std::to_string(contract::kVersion);
  id.build_id = compiler_build_id();
  id.headers_digest = toolchain::device_headers_digest();
  if (toolchain::nvrtc_available()) {
    id.nvrtc = toolchain::nvrtc_identity();
    id.cuda_headers = toolchain::cuda_headers_identity();
  }
  return id;
}

std::string amd_compiler_identity(const Target& target) {
  return toolchain_of(target) == ToolchainKind::comgr ? toolchain::comgr_identity()
                                                      : toolchain::amdgpu_toolchain_identity();
}

std::string compiler_fingerprint() {
  const CompilerIdentity id = compiler_identity();
  std::string f = "irisc " + id.version + "; contract " + id.contract + "; build " +
                  id.build_id.substr(0, 16) + "; headers " + id.headers_digest.substr(0, 16);
  if (!id.nvrtc.empty()) f += "; nvrtc " + id.nvrtc.substr(0, id.nvrtc.find(' '));
  return f;
}

namespace {

bool only_whitespace_and_comments(const TokenBuffer& toks) { return toks.tokens.size() == 1; }

using driver::finish;

SemaOptions sema_options(const CompileOptions& o, const Target& t) {
  SemaOptions s;
  s.defines = o.defines;
  s.min_sms = t.min_sms;
  s.max_sms = t.max_sms;
  return s;
}

}  // namespace

namespace {

std::atomic<std::uint64_t> g_front_end_runs{0};

CompileResult compile_impl(const SourceBuffer& main, const CompileOptions& options, tir::Module* keep,
                           SourceBuffer* keep_sources) {
  g_front_end_runs.fetch_add(1, std::memory_order_relaxed);
  CompileResult r;
  SourceBuffer source = main;  // imported files are appended
  Diagnostics diags(&source);
  diags.set_warnings_as_errors(options.warnings_as_errors);
  const Target* target = driver::find_target_or_report(options, diags);
  if (!target) {
    finish(r, diags);
    return r;
  }

  TokenBuffer toks = lex(source, diags);
  if (options.stop_after == Stage::tokens) {
    r.tokens = toks.dump();
    finish(r, diags);
    return r;
  }
  if (only_whitespace_and_comments(toks) && !diags.has_errors()) {
    diags.emit_unlocated(DiagnosticKind::EmptyFile);
    finish(r, diags);
    return r;
  }
  ast::Module module = parse(toks, diags);
  if (options.stop_after == Stage::ast) {
    r.ast = ast::dump(module, source);
    finish(r, diags);
    return r;
  }
  if (diags.has_errors()) {
    finish(r, diags);
    return r;
  }
  load_imports(module, source, options, diags, &r.imports);
  if (diags.has_errors()) {
    finish(r, diags);
    return r;
  }
  // -D names must belong to some kernel.
  std::set<std::string> const_names;
  for (const ast::Kernel& k : module.kernels) {
    for (const ast::ConstParam& c : k.consts) const_names.insert(c.name);
  }
  for (const auto& [name, value] : options.defines) {
    if (!const_names.count(name)) diags.emit_unlocated(DiagnosticKind::UnknownDefine, {name});
  }
  tir::Module tm = check(module, sema_options(options, *target), diags);
  if (diags.has_errors() || !driver::select_kernels(tm, options, diags)) {
    finish(r, diags);
    return r;
  }
  driver::lower(tm, source, options, *target, /*passes_for_listing=*/true, diags, r);
  if (keep && r.ok) *keep = std::move(tm);
  if (keep_sources) *keep_sources = std::move(source);
  return r;
}

}  // namespace

std::uint64_t front_end_runs() { return g_front_end_runs.load(std::memory_order_relaxed); }

CompileResult compile(const SourceBuffer& source, const CompileOptions& options) {
  return compile_impl(source, options, nullptr, nullptr);
}

std::vector<std::pair<std::string, std::string>> imported_files(const SourceBuffer& main,
                                                                const CompileOptions& options) {
  std::vector<std::pair<std::string, std::string>> out;
  SourceBuffer source = main;
  Diagnostics diags(&source);
  TokenBuffer toks = lex(source, diags);
  ast::Module module = parse(toks, diags);
  if (diags.has_errors()) return out;
  load_imports(module, source, options, diags, &out);
  return out;
}

CompileResult compile_to_tir(const SourceBuffer& source, const CompileOptions& options, tir::Module* module,
                             SourceBuffer* sources) {
  CompileOptions o = options;
  o.stop_after = Stage::tir;
  return compile_impl(source, o, module, sources);
}

}  // namespace irisc
