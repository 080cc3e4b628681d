// SourceBuffer: file loading and offset -> line/column mapping.
#include "compiler/source/source_buffer.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace irisc {

SourceBuffer::SourceBuffer(std::string name, std::string text) : name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (std::uint32_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

std::optional<SourceBuffer> SourceBuffer::from_file(const std::string& path, std::string* error) {
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
  return SourceBuffer(path, std::move(text));
}

LineCol SourceBuffer::line_col(std::uint32_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const auto line = static_cast<std::uint32_t>(it - line_starts_.begin());
  return {line, offset - line_starts_[line - 1] + 1};
}

std::string_view SourceBuffer::line_text(std::uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  const std::uint32_t begin = line_starts_[line - 1];
  std::uint32_t end = line < line_starts_.size() ? line_starts_[line] - 1 : static_cast<std::uint32_t>(text_.size());
  if (end > begin && text_[end - 1] == '\r') --end;
  return std::string_view(text_).substr(begin, end - begin);
}

}  // namespace irisc
