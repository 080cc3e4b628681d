// A source file held in memory, with line lookup for diagnostics. Every later phase
// refers to source text by byte offsets into one SourceBuffer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace irisc {

// A half-open byte range [begin, end) in a SourceBuffer.
struct SourceRange {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  static SourceRange join(SourceRange a, SourceRange b) {
    return {a.begin < b.begin ? a.begin : b.begin, a.end > b.end ? a.end : b.end};
  }
};

struct LineCol {
  std::uint32_t line = 1;    // 1-based
  std::uint32_t column = 1;  // 1-based, in bytes
};

class SourceBuffer {
 public:
  SourceBuffer(std::string name, std::string text);
  // Reads a file; nullopt (and `error` set) if it cannot be read.
  static std::optional<SourceBuffer> from_file(const std::string& path, std::string* error);

  const std::string& name() const { return name_; }
  std::string_view text() const { return text_; }
  std::string_view slice(SourceRange r) const { return std::string_view(text_).substr(r.begin, r.end - r.begin); }
  LineCol line_col(std::uint32_t offset) const;
  // The text of 1-based line `line`, without its newline.
  std::string_view line_text(std::uint32_t line) const;

 private:
  std::string name_;
  std::string text_;
  std::vector<std::uint32_t> line_starts_;
};

}  // namespace irisc
