// Diagnostics: one table of kinds (diagnostic_kinds.def) with stable ids, collected
// per source file and rendered like clang:
//   file.iris:3:14: error: unknown name 'x' [UnknownName]
//       store(y[i], x);
//                   ^
// User errors always become diagnostics, never asserts or exceptions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/source/source_buffer.hpp"

namespace irisc {

enum class DiagnosticKind : std::uint16_t {
#define IRISC_DIAG(Id, Severity, Format) Id,
#include "compiler/diagnostics/diagnostic_kinds.def"
  Count
};

enum class Severity { note, warning, error };

struct DiagnosticInfo {
  const char* id;
  Severity severity;
  const char* format;
};
const DiagnosticInfo& diagnostic_info(DiagnosticKind kind);
// All kinds, in table order (for coverage tests and --list-diagnostics).
std::vector<DiagnosticKind> all_diagnostic_kinds();

struct DiagnosticNote {
  SourceRange range;
  std::string message;
};

struct Diagnostic {
  DiagnosticKind kind;
  Severity severity;
  bool located = false;
  SourceRange range;
  std::string message;
  std::vector<DiagnosticNote> notes;
};

class Diagnostics {
 public:
  explicit Diagnostics(const SourceBuffer* source = nullptr) : source_(source) {}
  void set_source(const SourceBuffer* source) { source_ = source; }
  const SourceBuffer* source() const { return source_; }

  // Emits a diagnostic at `range`; {0}, {1}, ... in the kind's format take `args`.
  // Returns the stored diagnostic so notes can be attached.
  Diagnostic& emit(DiagnosticKind kind, SourceRange range, std::initializer_list<std::string> args = {});
  Diagnostic& emit_unlocated(DiagnosticKind kind, std::initializer_list<std::string> args = {});
  void note(Diagnostic& d, SourceRange range, std::string message);
  // While a context is pushed, every located diagnostic gets it as a note, innermost
  // first ("in function 'f', inlined from this call").
  void push_context(SourceRange range, std::string message) { context_.push_back({range, std::move(message)}); }
  void pop_context() { context_.pop_back(); }

  bool has_errors() const { return errors_ > 0; }
  // Errors reported, plus the silent follow-ups of one already reported (a use of a name
  // whose declaration failed): phases that stop on a new error stop on those too.
  int error_count() const { return errors_ + followups_; }
  void count_followup() { ++followups_; }
  int reported_error_count() const { return errors_; }
  int warning_count() const { return warnings_; }
  // After this many errors the rest are dropped and phases should stop.
  bool too_many_errors() const { return errors_ >= max_errors_; }
  void set_max_errors(int n) { max_errors_ = n; }
  // -Werror: warnings are reported and counted as errors.
  void set_warnings_as_errors(bool on) { werror_ = on; }

  const std::vector<Diagnostic>& all() const { return diags_; }
  std::string render(bool color = false) const;
  std::string render_one(const Diagnostic& d, bool color = false) const;

 private:
  const SourceBuffer* source_;
  std::vector<Diagnostic> diags_;
  std::vector<DiagnosticNote> context_;
  int errors_ = 0, warnings_ = 0, max_errors_ = 50, followups_ = 0;
  bool werror_ = false;
};

// Formats `format` replacing {0}, {1}, ... with args.
std::string format_message(std::string_view format, std::initializer_list<std::string> args);

}  // namespace irisc
