// iris_dsl_names <out.hpp>: the standard library's kernels by name, for libiris's host
// side. Every kernel of every dsl/ file embedded in libirisc (irisc::stdlib_files()),
// parsed, becomes a constant iris::library::dsl::<folder>_<file>::<kernel> of type
// DslKernel {file, name, compile-time parameters}; the library refers to its kernels
// only through these, so a kernel renamed in dsl/ without its caller fails the build,
// and a define that is not one of the kernel's parameters fails its first call. Run by the build (see
// runtime/CMakeLists.txt); exits 1, naming the file, when one does not parse.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "compiler/diagnostics/diagnostics.hpp"
#include "compiler/driver/stdlib.hpp"
#include "compiler/lex/lexer.hpp"
#include "compiler/parse/parser.hpp"

namespace {

// "ccl/all_reduce_push.iris" -> "ccl_all_reduce_push"
std::string namespace_of(const std::string& path) {
  std::string ns = path.substr(0, path.rfind('.'));
  for (char& c : ns) {
    if (c == '/' || c == '-' || c == '.') c = '_';
  }
  return ns;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: iris_dsl_names <out.hpp>\n");
    return 2;
  }
  std::ostringstream h;
  h << "// Generated at build time by iris_dsl_names from the embedded dsl/ files. Do not edit.\n"
       "// The standard library's kernels by name (tools/dsl_names/dsl_names.cpp).\n"
       "#pragma once\n\n"
       "namespace iris::library::dsl {\n\n"
       "struct DslKernel {\n"
       "  const char* file;  // under dsl/\n"
       "  const char* name;\n"
       "  const char* const* params;  // its compile-time parameters, then null\n"
       "};\n";
  for (const irisc::StdlibFile& f : irisc::stdlib_files()) {
    const std::string path = f.name;
    irisc::SourceBuffer source("dsl/" + path, f.text);
    irisc::Diagnostics diags(&source);
    const irisc::TokenBuffer tokens = irisc::lex(source, diags);
    const irisc::ast::Module module = irisc::parse(tokens, diags);
    if (diags.has_errors()) {
      std::fprintf(stderr, "iris_dsl_names: dsl/%s does not parse\n", path.c_str());
      return 1;
    }
    if (module.kernels.empty()) continue;
    h << "\n// dsl/" << path << "\nnamespace " << namespace_of(path) << " {\n";
    for (const irisc::ast::Kernel& k : module.kernels) {
      h << "inline constexpr const char* " << k.name << "_params[] = {";
      for (const irisc::ast::ConstParam& c : k.consts) h << "\"" << c.name << "\", ";
      h << "nullptr};\n";
      h << "inline constexpr DslKernel " << k.name << "{\"" << path << "\", \"" << k.name << "\", " << k.name
        << "_params};\n";
    }
    h << "}  // namespace " << namespace_of(path) << "\n";
  }
  h << "\n}  // namespace iris::library::dsl\n";
  // Written only when it changed, so that an edit to a dsl/ file's body rebuilds nothing.
  const std::string text = h.str();
  {
    std::ifstream in(argv[1], std::ios::binary);
    std::ostringstream old;
    old << in.rdbuf();
    if (in && old.str() == text) return 0;
  }
  std::ofstream out(argv[1], std::ios::binary);
  out << text;
  if (!out) {
    std::fprintf(stderr, "iris_dsl_names: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
