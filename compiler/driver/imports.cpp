// Import resolution and loading (see imports.hpp).
#include "compiler/driver/imports.hpp"

#include <filesystem>
#include <map>
#include <optional>

#include "compiler/driver/stdlib.hpp"
#include "compiler/lex/lexer.hpp"
#include "compiler/parse/parser.hpp"

namespace irisc {
namespace {

namespace fs = std::filesystem;

struct Found {
  std::string key;      // what identifies the file: "dsl:ccl/common.iris", a canonical path
  std::string display;  // its name in diagnostics
  std::string text;
  std::string base;     // where its own relative imports start: a folder, or "dsl:<folder>"
};

class Loader {
 public:
  Loader(SourceBuffer& source, const CompileOptions& options, Diagnostics& diags,
         std::vector<std::pair<std::string, std::string>>* imported)
      : source_(source), options_(options), diags_(diags), imported_(imported) {}

  void run(ast::Module& module) {
    const std::string main = source_.name();
    std::error_code ec;
    const fs::path dir = fs::path(main).parent_path();
    // The standard library's own kernels (libiris compiles dsl/<file> from its embedded
    // text under that name) import from the embedded library, never from a dsl/ folder
    // that happens to lie in the working directory.
    if (main.starts_with("dsl/")) {
      const std::string name = main.substr(4);
      const char* text = stdlib_file(name);
      if (text && std::string_view(text) == source_.file_text(0)) {
        loaded_.emplace("dsl:" + name, true);
        stack_.push_back({"dsl:" + name, main});
        follow(module, "dsl:" + fs::path(name).parent_path().string(), module);
        return;
      }
    }
    const std::string key = fs::exists(main, ec) ? fs::weakly_canonical(main, ec).string() : "main:" + main;
    loaded_.emplace(key, true);
    stack_.push_back({key, main});
    follow(module, dir.empty() ? "." : dir.string(), module);
  }

 private:
  // Imports nested deeper than this are an error, not a crash (each level is a frame of
  // follow() and of the parser's).
  static constexpr std::size_t kMostNested = 128;

  void follow(const ast::Module& from, const std::string& base, ast::Module& into) {
    if (stack_.size() > kMostNested && !from.imports.empty()) {
      diags_.emit(DiagnosticKind::NestingTooDeep, from.imports.front().range,
                  {"imports", std::to_string(kMostNested),
                   " (" + stack_.front().second + " -> ... -> " + stack_.back().second + ")"});
      return;
    }
    for (const ast::Import& imp : from.imports) {
      if (diags_.too_many_errors()) return;
      // Imports name .iris files by a relative path, found beside the importer, under an
      // include directory or in the standard library: not any readable file, whose first
      // line a diagnostic would then show.
      if (fs::path(imp.path).is_absolute() || !imp.path.ends_with(".iris")) {
        diags_.emit(DiagnosticKind::BadImportPath, imp.range,
                    {imp.path, fs::path(imp.path).is_absolute()
                                   ? "imports take a relative path (beside the importing file, under -I, or in the "
                                     "standard library), not an absolute one"
                                   : "only .iris files are imported"});
        continue;
      }
      std::vector<std::string> looked;
      std::optional<Found> f = resolve(imp.path, base, &looked);
      if (!f) {
        std::string where;
        for (std::size_t i = 0; i < looked.size(); ++i) where += (i ? ", " : "") + looked[i];
        diags_.emit(DiagnosticKind::ImportNotFound, imp.range, {imp.path, where});
        continue;
      }
      bool cycle = false;
      for (std::size_t i = 0; i < stack_.size() && !cycle; ++i) {
        if (stack_[i].first != f->key) continue;
        std::string chain;
        for (std::size_t j = i; j < stack_.size(); ++j) chain += stack_[j].second + " -> ";
        diags_.emit(DiagnosticKind::ImportCycle, imp.range, {chain + f->display});
        cycle = true;
      }
      if (cycle || loaded_.count(f->key)) continue;
      loaded_.emplace(f->key, true);
      if (imported_) imported_->emplace_back(imp.path, f->text);
      const int file = source_.add_file(f->display, f->text);
      TokenBuffer toks = lex(source_, file, diags_);
      ast::Module m = parse(toks, diags_);
      stack_.push_back({f->key, f->display});
      follow(m, f->base, into);
      stack_.pop_back();
      for (ast::Kernel& fn : m.functions) into.functions.push_back(std::move(fn));
    }
  }

  std::optional<Found> resolve(const std::string& path, const std::string& base, std::vector<std::string>* looked) {
    if (auto v = options_.import_files.find(path); v != options_.import_files.end()) {
      return Found{"supplied:" + path, path, v->second, "."};
    }
    auto on_disk = [&](const fs::path& p) -> std::optional<Found> {
      looked->push_back(p.parent_path().empty() ? "." : p.parent_path().string());
      std::error_code ec;
      if (!fs::is_regular_file(p, ec)) return std::nullopt;
      std::string why;
      auto text = SourceBuffer::read_file(p.string(), &why);
      if (!text) return std::nullopt;
      const fs::path canon = fs::weakly_canonical(p, ec);
      return Found{canon.string(), p.lexically_normal().string(), std::move(*text), p.parent_path().string()};
    };
    const bool in_stdlib = base.starts_with("dsl:");
    if (in_stdlib) {
      // Relative to an embedded file: its folder in dsl/ first.
      const std::string name = (fs::path(base.substr(4)) / path).lexically_normal().string();
      if (const char* text = stdlib_file(name)) return stdlib(name, text);
    }
    // A path that names a standard-library file is that file, wherever the importer is:
    // a file of the same name on disk cannot stand in for it.
    if (const char* text = stdlib_file(fs::path(path).lexically_normal().string())) {
      return stdlib(fs::path(path).lexically_normal().string(), text);
    }
    if (!in_stdlib) {
      if (auto f = on_disk(fs::path(base) / path)) return f;
    }
    for (const std::string& dir : options_.include_dirs) {
      if (auto f = on_disk(fs::path(dir) / path)) return f;
    }
    looked->push_back("the standard library (dsl/)");
    const std::string name = fs::path(path).lexically_normal().string();
    if (const char* text = stdlib_file(name)) return stdlib(name, text);
    return std::nullopt;
  }

  static Found stdlib(const std::string& name, const char* text) {
    const std::string dir = fs::path(name).parent_path().string();
    return Found{"dsl:" + name, "dsl/" + name, text, "dsl:" + dir};
  }

  SourceBuffer& source_;
  const CompileOptions& options_;
  Diagnostics& diags_;
  std::vector<std::pair<std::string, std::string>>* imported_;
  std::map<std::string, bool> loaded_;
  std::vector<std::pair<std::string, std::string>> stack_;  // (key, display) of the files being loaded
};

}  // namespace

void load_imports(ast::Module& module, SourceBuffer& source, const CompileOptions& options, Diagnostics& diags,
                  std::vector<std::pair<std::string, std::string>>* imported) {
  Loader(source, options, diags, imported).run(module);
}

}  // namespace irisc
