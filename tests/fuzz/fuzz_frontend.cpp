// libFuzzer target for irisc's front end: the input bytes are a .iris source file.
// Each input goes through
//   * lex() directly, checking the lexer's documented invariants (always ends with
//     EndOfFile, token ranges inside the text, in order),
//   * compile() with stop_after = tokens and ast (the --emit=tokens / --emit=ast dumps),
//   * compile() with stop_after = tir (lex -> parse -> sema -> passes -> TIR print),
//     once plain and once with -D defines, a different target, -Werror, --time-passes
//     and --dump-ir-after=all (chosen by the input's last byte, so the fuzzer steers them),
//   * for inputs that check cleanly: the pass pipeline once more by hand, checking that
//     no pass drops a side effect (the number of atomics in the TIR stays the same), and
//     the CUDA C++ emitter (stop_after = cuda), with and without the -D defines.
// Nothing here reaches the CUDA toolchain: stop_after never goes past Stage::source, so
// NVRTC is never loaded (irisc_fuzz_nvrtc, fuzz_nvrtc.cpp, is the fuzzer with NVRTC as
// its oracle).
//
// The compiler promises never to throw, assert or crash on bad input; any exception
// that escapes, any sanitizer report and any broken invariant below is a bug. So is a
// ToolchainFailed diagnostic before the toolchain runs: it means the TIR verifier (which
// runs after sema and after every pass) caught a pass breaking the IR.
//
// Byte-level mutation alone rarely turns "64" into "9223372036854775807" or "2.5" into
// "1e30", which is where integer and float edge cases hide, so a custom mutator
// replaces, a quarter of the time, one number literal (or a word) of the input with an
// extreme value (or a keyword/builtin); otherwise libFuzzer mutates as usual.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compiler/diagnostics/diagnostics.hpp"
#include "compiler/driver/compile.hpp"
#include "compiler/lex/lexer.hpp"
#include "compiler/parse/parser.hpp"
#include "compiler/passes/pipeline.hpp"
#include "compiler/sema/sema.hpp"
#include "compiler/tir/tir.hpp"
#include "compiler/source/source_buffer.hpp"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_frontend: invariant broken: %s\n", what);
  std::abort();
}

void check_result(const irisc::CompileResult& r) {
  if (r.ok != (r.errors == 0)) fail("CompileResult.ok disagrees with the error count");
  if (r.errors > 0 && r.rendered_diagnostics.empty()) fail("errors but no rendered diagnostics");
  // Every stored error counts, except the one TooManyErrors marker past the limit.
  int errors = 0;
  for (const irisc::Diagnostic& d : r.diagnostics)
    errors += d.severity == irisc::Severity::error && d.kind != irisc::DiagnosticKind::TooManyErrors;
  if (errors != r.errors) fail("error diagnostics disagree with the error count");
  for (const irisc::Diagnostic& d : r.diagnostics) {
    if (d.kind == irisc::DiagnosticKind::ToolchainFailed) {
      std::fprintf(stderr, "%s\n", r.rendered_diagnostics.c_str());
      fail("ToolchainFailed without the toolchain (TIR verifier error after a pass)");
    }
  }
}

std::size_t count(const std::string& text, const char* what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Runs lex -> parse -> check -> passes by hand and checks that the passes keep every
// atomic (each has an effect on memory, wherever it sits: a let's value, an index,
// a rank argument). Only for programs that check without errors.
void check_passes_keep_effects(const irisc::SourceBuffer& src) {
  irisc::Diagnostics diags(&src);
  irisc::TokenBuffer toks = irisc::lex(src, diags);
  if (diags.has_errors()) return;
  irisc::ast::Module ast = irisc::parse(toks, diags);
  if (diags.has_errors()) return;
  irisc::tir::Module tm = irisc::check(ast, irisc::SemaOptions{}, diags);
  if (diags.has_errors()) return;
  const std::string before = irisc::tir::print(tm);
  const irisc::PipelineLog log = irisc::run_pipeline(tm, {});
  if (!log.verify_error.empty()) {
    std::fprintf(stderr, "%s\n", log.verify_error.c_str());
    fail("TIR verifier error after a pass");
  }
  const std::string after = irisc::tir::print(tm);
  if (count(after, "atomic_") != count(before, "atomic_")) {
    std::fprintf(stderr, "---- TIR before the passes ----\n%s---- after ----\n%s", before.c_str(), after.c_str());
    fail("a pass dropped (or duplicated) an atomic");
  }
}

void check_tokens(const irisc::SourceBuffer& src) {
  irisc::Diagnostics diags(&src);
  irisc::TokenBuffer toks = irisc::lex(src, diags);
  if (toks.tokens.empty() || toks.tokens.back().kind != irisc::TokenKind::EndOfFile)
    fail("token buffer does not end with EndOfFile");
  const std::size_t n = src.text().size();
  std::uint32_t last_end = 0;
  for (const irisc::Token& t : toks.tokens) {
    if (t.range.begin > t.range.end || t.range.end > n) fail("token range outside the source");
    if (t.range.begin < last_end) fail("tokens overlap or go backwards");
    last_end = t.range.end;
    (void)toks.text(t);
  }
  // Rendering every diagnostic (line lookup, caret lines) must work for any range.
  (void)diags.render(false);
}

// ---- custom mutator ---------------------------------------------------------------------
const char* const kLiterals[] = {
    "0", "1", "2", "3", "-1", "31", "32", "33", "63", "64", "255", "256", "1024", "16384", "16385",
    "65536", "2147483647", "2147483648", "4294967295", "4294967296", "4611686018427387904",
    "9223372036854775807", "9223372036854775808", "18446744073709551615", "0x8000000000000000",
    "0xffffffffffffffff", "(0-9223372036854775807-1)", "0.0", "0.5", "-0.0", "1.5e-3", "1e30",
    "-1e30", "3.5e38", "1e39", "1e-45", "1e308", "1e-320", "sms", "world", "rank", "programs"};
const char* const kWords[] = {
    "kernel", "let", "for", "in", "if", "else", "role", "symmetric", "tensor", "persistent", "as",
    "true", "false", "f32", "f16", "bf16", "i32", "i64", "u32", "u64", "bool", "int", "blocks",
    "ranks", "peers", "range", "load", "store", "put", "get", "signal", "wait", "atomic_add",
    "atomic_cas", "atomic_xchg", "atomic_min", "fill", "zeros", "ones", "index", "sum", "max", "min",
    "abs", "sqrt", "exp", "log", "rank", "world", "sms", "program", "programs", "relaxed", "acquire",
    "release", "acq_rel", "block", "device", "system", "set", "add", "to", "from", "order", "scope", "op"};

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Spans [begin, end) of number literals (digits, '.', exponent, hex) or of words.
std::vector<std::pair<std::size_t, std::size_t>> spans(const std::string& s, bool numbers) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < s.size();) {
    if (!is_word_char(s[i]) && !(numbers && s[i] == '.')) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && (is_word_char(s[j]) || (numbers && s[j] == '.') ||
                            (numbers && (s[j] == '+' || s[j] == '-') && j > i && (s[j - 1] == 'e' || s[j - 1] == 'E'))))
      ++j;
    const bool is_number = (s[i] >= '0' && s[i] <= '9') || s[i] == '.';
    if (is_number == numbers) out.emplace_back(i, j);
    i = j;
  }
  return out;
}

}  // namespace

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  std::minstd_rand rng(seed);
  if (size > 0 && rng() % 4 == 0) {
    std::string s(reinterpret_cast<const char*>(data), size);
    const bool numbers = rng() % 3 != 0;
    const auto sp = spans(s, numbers);
    if (!sp.empty()) {
      const auto [b, e] = sp[rng() % sp.size()];
      const char* with = numbers ? kLiterals[rng() % std::size(kLiterals)] : kWords[rng() % std::size(kWords)];
      s.replace(b, e - b, with);
      if (s.size() <= max_size) {
        std::memcpy(data, s.data(), s.size());
        return s.size();
      }
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const irisc::SourceBuffer src("fuzz.iris", text);

  check_tokens(src);

  irisc::CompileOptions o;
  o.stop_after = irisc::Stage::tokens;
  check_result(irisc::compile(src, o));
  o.stop_after = irisc::Stage::ast;
  check_result(irisc::compile(src, o));

  o.stop_after = irisc::Stage::tir;
  const irisc::CompileResult plain = irisc::compile(src, o);
  check_result(plain);

  // A second run with -D overrides. The last byte picks the values, a target and flags,
  // so the fuzzer can reach the extreme values (zero, negative, huge) deterministically.
  const std::uint8_t sel = size ? data[size - 1] : 0;
  static const std::int64_t kValues[] = {0, 1, -1, 3, 64, 1000, 1 << 20, INT64_MAX, INT64_MIN, 4096};
  irisc::CompileOptions d = o;
  d.defines["B"] = kValues[sel % 10];
  if (sel & 0x20) d.defines["N"] = kValues[(sel / 10) % 10];
  d.target = (sel & 0x40) ? "sm_80" : "sm_90";
  d.warnings_as_errors = (sel & 0x80) != 0;
  d.dump_ir_after = "all";
  d.time_passes = true;
  const irisc::CompileResult with_defines = irisc::compile(src, d);
  check_result(with_defines);
  if (with_defines.ok) {
    d.stop_after = irisc::Stage::source;
    check_result(irisc::compile(src, d));
  }

  // The CUDA C++ emitter has no dependence on NVRTC; run it on what checked cleanly.
  if (plain.ok) {
    check_passes_keep_effects(src);
    o.stop_after = irisc::Stage::source;
    const irisc::CompileResult c = irisc::compile(src, o);
    check_result(c);
    if (c.ok && c.kernel_source.empty()) fail("stop_after=cuda succeeded without CUDA source");
  }
  return 0;
}
