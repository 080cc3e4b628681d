// The .iris standard library (dsl/), embedded in libirisc at build time
// (embed_stdlib.cmake), so `import "ccl/common.iris"` and libiris's collectives work
// on machines without the source tree.
#pragma once

#include <span>
#include <string_view>

namespace irisc {

struct StdlibFile {
  const char* name;  // the path under dsl/: "ccl/all_reduce.iris"
  const char* text;
};

// Every file, sorted by name.
std::span<const StdlibFile> stdlib_files();

// The text of dsl/<name>, or null.
inline const char* stdlib_file(std::string_view name) {
  for (const StdlibFile& f : stdlib_files()) {
    if (name == f.name) return f.text;
  }
  return nullptr;
}

}  // namespace irisc
