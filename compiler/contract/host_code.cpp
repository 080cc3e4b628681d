// The host code object (see host_code.hpp).
#include "compiler/contract/host_code.hpp"

#include <charconv>

namespace irisc {

bool is_host_code(std::span<const std::byte> bytes) {
  return bytes.size() >= kHostCodePrefix.size() &&
         std::string_view(reinterpret_cast<const char*>(bytes.data()), kHostCodePrefix.size()) == kHostCodePrefix;
}

std::string write_host_code(const HostCode& code) {
  std::string s(kHostCodeMagic);
  s += "name " + std::to_string(code.name.size()) + "\n" + code.name + "\n";
  s += "defines " + std::to_string(code.defines.size()) + "\n";
  for (const auto& [name, value] : code.defines) {
    s += std::to_string(name.size()) + " " + name + " " + std::to_string(value) + "\n";
  }
  s += std::string("trace ") + (code.trace_events ? "1" : "0") + "\n";
  s += "source " + std::to_string(code.source.size()) + "\n" + code.source + "\n";
  const auto named_texts = [&](const char* section, const std::vector<std::pair<std::string, std::string>>& texts) {
    s += std::string(section) + " " + std::to_string(texts.size()) + "\n";
    for (const auto& [name, text] : texts) {
      s += std::to_string(name.size()) + " " + name + "\n" + std::to_string(text.size()) + "\n" + text + "\n";
    }
  };
  if (!code.imports.empty()) named_texts("imports", code.imports);
  named_texts("files", code.files);
  s += "tir " + std::to_string(code.tir.size()) + "\n" + code.tir + "\n";
  return s;
}

namespace {

// A cursor over the text that fails (returns false) instead of reading past the end.
struct Reader {
  std::string_view text;
  std::size_t at = 0;
  std::string* error;

  bool fail(const std::string& what) {
    *error = what + " at byte " + std::to_string(at);
    return false;
  }
  bool literal(std::string_view word) {
    if (text.substr(at, word.size()) != word) return fail("expected '" + std::string(word) + "'");
    at += word.size();
    return true;
  }
  template <class T>
  bool number(T* out) {
    const char* b = text.data() + at;
    const char* e = text.data() + text.size();
    auto [p, ec] = std::from_chars(b, e, *out);
    if (ec != std::errc() || p == b) return fail("expected a number");
    at += static_cast<std::size_t>(p - b);
    return true;
  }
  bool bytes(std::size_t n, std::string* out) {
    if (n > text.size() - at) return fail("a field of " + std::to_string(n) + " bytes runs past the end (" +
                                          std::to_string(text.size()) + " bytes)");
    out->assign(text.substr(at, n));
    at += n;
    return true;
  }
  // `<section> <count>\n` then (<name bytes> <name>\n<text bytes>\n<text>\n)* (imports, files).
  bool named_texts(std::string_view section, std::vector<std::pair<std::string, std::string>>* out) {
    std::size_t count = 0, n = 0;
    if (!literal(section) || !literal(" ") || !number(&count) || !literal("\n")) return false;
    if (count > 4096) return fail("too many " + std::string(section) + " (" + std::to_string(count) + ")");
    for (std::size_t i = 0; i < count; ++i) {
      std::string name, body;
      if (!number(&n) || !literal(" ") || !bytes(n, &name) || !literal("\n") || !number(&n) || !literal("\n") ||
          !bytes(n, &body) || !literal("\n")) {
        return false;
      }
      out->emplace_back(std::move(name), std::move(body));
    }
    return true;
  }
};

}  // namespace

bool read_host_code(std::span<const std::byte> bytes, HostCode* out, std::string* error) {
  Reader r{std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), 0, error};
  std::size_t n = 0, count = 0;
  if (r.text.starts_with(kHostCodePrefix) && !r.text.starts_with(kHostCodeMagic)) {
    const std::string_view format = r.text.substr(kHostCodePrefix.size(), r.text.find('\n') - kHostCodePrefix.size());
    *error = "it is of format " + std::string(format) + ", and this libiris reads format " +
             std::to_string(kHostCodeFormat) + " (the verified TIR listing): compile the kernel again with this irisc";
    return false;
  }
  if (!r.literal(kHostCodeMagic)) return false;
  if (!r.literal("name ") || !r.number(&n) || !r.literal("\n") || !r.bytes(n, &out->name) || !r.literal("\n")) return false;
  if (!r.literal("defines ") || !r.number(&count) || !r.literal("\n")) return false;
  if (count > 4096) return r.fail("too many defines (" + std::to_string(count) + ")");
  out->defines.clear();
  for (std::size_t i = 0; i < count; ++i) {
    std::string name;
    std::int64_t value = 0;
    if (!r.number(&n) || !r.literal(" ") || !r.bytes(n, &name) || !r.literal(" ") || !r.number(&value) || !r.literal("\n")) {
      return false;
    }
    out->defines[name] = value;
  }
  int trace = 0;
  if (!r.literal("trace ") || !r.number(&trace) || !r.literal("\n")) return false;
  if (trace != 0 && trace != 1) return r.fail("trace must be 0 or 1");
  out->trace_events = trace == 1;
  if (!r.literal("source ") || !r.number(&n) || !r.literal("\n") || !r.bytes(n, &out->source) || !r.literal("\n")) {
    return false;
  }
  out->imports.clear();
  if (r.text.substr(r.at, 8) == "imports " && !r.named_texts("imports", &out->imports)) return false;
  out->files.clear();
  if (!r.named_texts("files", &out->files)) return false;
  if (!r.literal("tir ") || !r.number(&n) || !r.literal("\n") || !r.bytes(n, &out->tir) || !r.literal("\n")) return false;
  // A trailing NUL (the loader's terminator) is allowed; anything else is not.
  while (r.at < r.text.size() && r.text[r.at] == '\0') ++r.at;
  if (r.at != r.text.size()) return r.fail("unexpected bytes after the listing");
  return true;
}

}  // namespace irisc
