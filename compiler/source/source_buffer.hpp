// The source files of one compile held in memory, with line lookup for diagnostics.
// The main file comes first; files it imports are appended to the same offset space,
// so every later phase refers to source text by byte offsets into one SourceBuffer and
// a position names its file without carrying a file id.
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
  std::uint32_t line = 1;    // 1-based, within the file holding the offset
  std::uint32_t column = 1;  // 1-based, in bytes
};

class SourceBuffer {
 public:
  SourceBuffer(std::string name, std::string text);
  // Reads a file; nullopt (and `error` set) if it cannot be read.
  static std::optional<SourceBuffer> from_file(const std::string& path, std::string* error);
  // Reads a file's text (at most 1 GiB); nullopt (and `error` set) if it cannot be read.
  static std::optional<std::string> read_file(const std::string& path, std::string* error);

  // Appends another file (an import) after the existing ones; returns its file id.
  int add_file(std::string name, std::string_view text);
  int file_count() const { return static_cast<int>(files_.size()); }
  // File 0, the main file.
  const std::string& name() const { return files_[0].name; }
  const std::string& file_name(int file) const { return files_[static_cast<std::size_t>(file)].name; }
  // The offsets of a file's text: [begin, end).
  SourceRange file_range(int file) const {
    const File& f = files_[static_cast<std::size_t>(file)];
    return {f.begin, f.end};
  }
  std::string_view file_text(int file) const { return slice(file_range(file)); }
  // The file an offset falls in (the last file for offsets past the end).
  int file_of(std::uint32_t offset) const;
  const std::string& name_of(std::uint32_t offset) const { return file_name(file_of(offset)); }

  // Every file's text, back to back.
  std::string_view text() const { return text_; }
  std::string_view slice(SourceRange r) const { return std::string_view(text_).substr(r.begin, r.end - r.begin); }
  LineCol line_col(std::uint32_t offset) const;
  // The text of 1-based line `line` of the file holding `offset`, without its newline.
  std::string_view line_text_at(std::uint32_t offset, std::uint32_t line) const;
  // The same in the main file.
  std::string_view line_text(std::uint32_t line) const { return line_text_at(0, line); }

 private:
  struct File {
    std::string name;
    std::uint32_t begin = 0, end = 0;
    std::uint32_t first_line = 0;  // index into line_starts_
  };
  std::vector<File> files_;
  std::string text_;
  std::vector<std::uint32_t> line_starts_;
};

}  // namespace irisc
