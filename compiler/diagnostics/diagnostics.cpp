// Diagnostic table, collection and rendering (see diagnostics.hpp).
#include "compiler/diagnostics/diagnostics.hpp"

#include <algorithm>

namespace irisc {
namespace {

const DiagnosticInfo kInfos[] = {
#define IRISC_DIAG(Id, Sev, Format) {#Id, Severity::Sev, Format},
#include "compiler/diagnostics/diagnostic_kinds.def"
};

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::note: return "note";
    case Severity::warning: return "warning";
    case Severity::error: return "error";
  }
  return "?";
}

const char* severity_color(Severity s) {
  switch (s) {
    case Severity::note: return "\033[1;36m";
    case Severity::warning: return "\033[1;35m";
    case Severity::error: return "\033[1;31m";
  }
  return "";
}

}  // namespace

const DiagnosticInfo& diagnostic_info(DiagnosticKind kind) { return kInfos[static_cast<std::size_t>(kind)]; }

std::vector<DiagnosticKind> all_diagnostic_kinds() {
  std::vector<DiagnosticKind> out;
  for (std::size_t i = 0; i < static_cast<std::size_t>(DiagnosticKind::Count); ++i) {
    out.push_back(static_cast<DiagnosticKind>(i));
  }
  return out;
}

std::string format_message(std::string_view format, std::initializer_list<std::string> args) {
  std::string out;
  const std::string* a = args.begin();
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '{' && i + 2 < format.size() && format[i + 2] == '}' && format[i + 1] >= '0' &&
        format[i + 1] <= '9') {
      const auto k = static_cast<std::size_t>(format[i + 1] - '0');
      if (k < args.size()) out += a[k];
      i += 2;
    } else {
      out += format[i];
    }
  }
  return out;
}

Diagnostic& Diagnostics::emit(DiagnosticKind kind, SourceRange range, std::initializer_list<std::string> args) {
  Diagnostic& d = emit_unlocated(kind, args);
  d.located = source_ != nullptr;
  d.range = range;
  // The innermost contexts and the outermost (a chain of calls as deep as the checker
  // allows would otherwise print a note per level).
  constexpr std::size_t kEnds = 4;
  const std::size_t n = context_.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (n > 2 * kEnds && i == kEnds) {
      DiagnosticNote skipped = context_[n - 1 - i];
      skipped.message = "... " + std::to_string(n - 2 * kEnds) + " more calls ...";
      d.notes.push_back(std::move(skipped));
      i = n - kEnds - 1;
      continue;
    }
    d.notes.push_back(context_[n - 1 - i]);
  }
  return d;
}

Diagnostic& Diagnostics::emit_unlocated(DiagnosticKind kind, std::initializer_list<std::string> args) {
  const DiagnosticInfo& info = diagnostic_info(kind);
  Severity sev = info.severity;
  if (sev == Severity::warning && werror_) sev = Severity::error;
  if (sev == Severity::error && errors_ >= max_errors_) {
    // Past the limit: keep one TooManyErrors and hand back a scratch diagnostic.
    static thread_local Diagnostic scratch;
    scratch = Diagnostic{kind, sev, false, {}, {}, {}};
    return scratch;
  }
  diags_.push_back(Diagnostic{kind, sev, false, {}, format_message(info.format, args), {}});
  if (sev == Severity::error) ++errors_;
  if (info.severity == Severity::warning) ++warnings_;
  if (sev == Severity::error && errors_ == max_errors_) {
    diags_.push_back(Diagnostic{DiagnosticKind::TooManyErrors, Severity::error, false, {},
                                diagnostic_info(DiagnosticKind::TooManyErrors).format, {}});
    return diags_[diags_.size() - 2];
  }
  return diags_.back();
}

void Diagnostics::note(Diagnostic& d, SourceRange range, std::string message) {
  d.notes.push_back({range, std::move(message)});
}

std::string Diagnostics::render_one(const Diagnostic& d, bool color) const {
  const char* bold = color ? "\033[1m" : "";
  const char* reset = color ? "\033[0m" : "";
  std::string out;
  auto snippet = [&](SourceRange r) {
    if (!source_) return;
    const LineCol lc = source_->line_col(r.begin);
    const std::string_view line = source_->line_text_at(r.begin, lc.line);
    out += "    ";
    out += line;
    out += "\n    ";
    for (std::uint32_t i = 1; i < lc.column && i - 1 < line.size(); ++i) out += line[i - 1] == '\t' ? '\t' : ' ';
    if (color) out += "\033[1;32m";
    out += '^';
    // Underline the rest of the range on this line.
    const std::uint32_t line_end_col = static_cast<std::uint32_t>(line.size()) + 1;
    std::uint32_t span = r.end > r.begin ? r.end - r.begin : 1;
    for (std::uint32_t i = 1; i < span && lc.column + i < line_end_col; ++i) out += '~';
    out += reset;
    out += '\n';
  };
  auto location = [&](SourceRange r, bool located) {
    if (source_ && located) {
      const LineCol lc = source_->line_col(r.begin);
      return source_->name_of(r.begin) + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.column) + ": ";
    }
    return source_ ? source_->name() + ": " : std::string("irisc: ");
  };
  out += bold + location(d.range, d.located) + reset;
  out += color ? severity_color(d.severity) : "";
  out += severity_name(d.severity);
  out += reset;
  out += std::string(": ") + bold + d.message + reset + " [" + diagnostic_info(d.kind).id + "]\n";
  if (d.located) snippet(d.range);
  for (const DiagnosticNote& n : d.notes) {
    out += bold + location(n.range, true) + reset + (color ? severity_color(Severity::note) : "") + "note" + reset +
           ": " + n.message + "\n";
    snippet(n.range);
  }
  return out;
}

std::string Diagnostics::render(bool color) const {
  std::string out;
  for (const Diagnostic& d : diags_) out += render_one(d, color);
  return out;
}

}  // namespace irisc
