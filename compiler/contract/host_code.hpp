// The host code object: what `irisc --target=host` writes and the host backend loads.
// It is the compiled module's verified TIR listing with source positions, and the .iris
// source with what its compile depended on (name, defines, trace events), behind a
// magic line, as length-prefixed text:
//
//   IRIS-HOST-CODE 2\n
//   name <bytes>\n<name>\n
//   defines <count>\n (<name bytes> <name> <value>\n)*
//   trace <0|1>\n
//   source <bytes>\n<source>\n
//   [imports <count>\n (<path bytes> <path>\n<text bytes>\n<text>\n)*]   the imported files
//   files <count>\n (<name bytes> <name>\n<text bytes>\n<text>\n)*       the source's files after
//                                                                       the first, as compiled
//   tir <bytes>\n<listing>\n                                             tir::print with positions
//
// The loader reads the listing (tir::read, then the verifier), rebuilds the source
// buffer the positions point into (source, then `files` in order) for its checks'
// file:line, and interprets the module: no lexer, parser or sema at load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace irisc {

inline constexpr int kHostCodeFormat = 2;
inline constexpr std::string_view kHostCodeMagic = "IRIS-HOST-CODE 2\n";  // of kHostCodeFormat
// What every format's magic line starts with: an object of another format is still a
// host code object, which read_host_code refuses by its format.
inline constexpr std::string_view kHostCodePrefix = "IRIS-HOST-CODE ";

struct HostCode {
  std::string name;    // the source's name (a file name for positions)
  std::map<std::string, std::int64_t> defines;
  bool trace_events = false;
  std::string source;
  // The files the source imported: (the path its import wrote, the file's text).
  std::vector<std::pair<std::string, std::string>> imports;
  // The source buffer's files after the first, as the compile appended them: (the name
  // its positions show, the text).
  std::vector<std::pair<std::string, std::string>> files;
  std::string tir;  // the module's listing, with positions into source + files
};

// Whether `bytes` start as a host code object of any format (kHostCodePrefix).
bool is_host_code(std::span<const std::byte> bytes);

std::string write_host_code(const HostCode& code);

// Parses a host code object; false with `error` saying what is wrong when it is
// truncated or malformed (every length is checked against the buffer).
bool read_host_code(std::span<const std::byte> bytes, HostCode* out, std::string* error);

}  // namespace irisc
