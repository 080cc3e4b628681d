// SourceBuffer: file loading and offset -> file, line and column mapping.
#include "compiler/source/source_buffer.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace irisc {

SourceBuffer::SourceBuffer(std::string name, std::string text) {
  text_ = std::move(text);
  files_.push_back(File{std::move(name), 0, static_cast<std::uint32_t>(text_.size()), 0});
  line_starts_.push_back(0);
  for (std::uint32_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

std::optional<std::string> SourceBuffer::read_file(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (error) *error = "cannot open '" + path + "'";
    return std::nullopt;
  }
  std::ostringstream os;
  os << in.rdbuf();
  if (in.bad()) {
    if (error) *error = "cannot read '" + path + "'";
    return std::nullopt;
  }
  std::string text = os.str();
  if (text.size() > (std::uint32_t{1} << 30)) {
    if (error) *error = "'" + path + "' is larger than 1 GiB";
    return std::nullopt;
  }
  return text;
}

std::optional<SourceBuffer> SourceBuffer::from_file(const std::string& path, std::string* error) {
  auto text = read_file(path, error);
  if (!text) return std::nullopt;
  return SourceBuffer(path, std::move(*text));
}

int SourceBuffer::add_file(std::string name, std::string_view text) {
  // A newline that belongs to no file separates it from the previous one, so an offset
  // at a file's end (its end-of-file token) still falls in that file.
  text_ += '\n';
  const auto begin = static_cast<std::uint32_t>(text_.size());
  const auto first_line = static_cast<std::uint32_t>(line_starts_.size());
  line_starts_.push_back(begin);
  text_ += text;
  for (std::uint32_t i = begin; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
  files_.push_back(File{std::move(name), begin, static_cast<std::uint32_t>(text_.size()), first_line});
  return static_cast<int>(files_.size()) - 1;
}

int SourceBuffer::file_of(std::uint32_t offset) const {
  int f = static_cast<int>(files_.size()) - 1;
  while (f > 0 && files_[static_cast<std::size_t>(f)].begin > offset) --f;
  return f;
}

LineCol SourceBuffer::line_col(std::uint32_t offset) const {
  const File& f = files_[static_cast<std::size_t>(file_of(offset))];
  auto it = std::upper_bound(line_starts_.begin() + f.first_line, line_starts_.end(), offset);
  const auto global = static_cast<std::uint32_t>(it - line_starts_.begin());  // 1-based
  return {global - f.first_line, offset - line_starts_[global - 1] + 1};
}

std::string_view SourceBuffer::line_text_at(std::uint32_t offset, std::uint32_t line) const {
  const File& f = files_[static_cast<std::size_t>(file_of(offset))];
  const std::uint32_t global = f.first_line + line;  // 1-based index into line_starts_
  if (line == 0 || global > line_starts_.size()) return {};
  const std::uint32_t begin = line_starts_[global - 1];
  if (begin > f.end) return {};
  std::uint32_t end = global < line_starts_.size() ? line_starts_[global] : static_cast<std::uint32_t>(text_.size());
  if (end > f.end) end = f.end;
  if (end > begin && text_[end - 1] == '\n') --end;
  if (end > begin && text_[end - 1] == '\r') --end;
  return std::string_view(text_).substr(begin, end - begin);
}

}  // namespace irisc
