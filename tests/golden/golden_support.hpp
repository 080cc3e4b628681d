// Shared by the irisc file-test binaries (golden_test.cpp, cli_test.cpp,
// robustness_test.cpp): paths, file helpers, the ARGS/XFAIL directives, compile().
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>
#include "compiler/driver/compile.hpp"
#include "compiler/toolchain/nvrtc.hpp"

namespace golden {

namespace fs = std::filesystem;


inline const fs::path kGoldenDir = IRIS_GOLDEN_DIR;
inline const fs::path kSourceDir = IRIS_SOURCE_DIR;
inline const char* const kIrisc = IRISC_EXE;

// Diagnostic ids without a fail_ test, and why. DiagnosticCoverage fails if an id here
// gains a fail_ test (remove it from the table then) or no longer exists.
// ---- small helpers ----------------------------------------------------------------------

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

inline bool write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

inline std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t nl = s.find('\n', begin);
    if (nl == std::string::npos) {
      out.push_back(s.substr(begin));
      return out;
    }
    out.push_back(s.substr(begin, nl - begin));
    begin = nl + 1;
  }
}

inline std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

inline bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

inline std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

// The name diagnostics and generated code show: the path relative to tests/golden.
inline std::string display_name(const fs::path& p) { return p.lexically_relative(kGoldenDir).generic_string(); }

inline std::vector<fs::path> iris_files(const fs::path& dir, bool recursive) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  auto take = [&](const fs::directory_entry& e) {
    if (e.is_regular_file() && e.path().extension() == ".iris") out.push_back(e.path());
  };
  if (recursive) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) take(e);
  } else {
    for (const auto& e : fs::directory_iterator(dir)) take(e);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// TIR listings (.tir): inputs of passes/ tests and of fail_ tests for BadTir.
inline bool is_tir_input(const fs::path& p) { return p.extension() == ".tir"; }

inline std::vector<fs::path> tir_files(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && is_tir_input(e.path())) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline bool known_id(const std::string& id) {
  for (irisc::DiagnosticKind k : irisc::all_diagnostic_kinds()) {
    if (id == irisc::diagnostic_info(k).id) return true;
  }
  return false;
}

// A unified diff of one hunk: the common prefix and suffix are cut, the rest shown as
// - (golden) and + (actual) lines with three lines of context.
inline std::string unified_diff(const std::string& expected, const std::string& actual, const std::string& name) {
  const std::vector<std::string> e = split_lines(expected), a = split_lines(actual);
  std::size_t pre = 0;
  while (pre < e.size() && pre < a.size() && e[pre] == a[pre]) ++pre;
  std::size_t suf = 0;
  while (pre + suf < e.size() && pre + suf < a.size() && e[e.size() - 1 - suf] == a[a.size() - 1 - suf]) ++suf;
  const std::size_t ctx = 3, limit = 40;
  const std::size_t from = pre > ctx ? pre - ctx : 0;
  const std::size_t e_end = e.size() - suf, a_end = a.size() - suf, after = std::min(suf, ctx);
  std::ostringstream os;
  os << "--- " << name << " (golden)\n+++ " << name << " (actual)\n";
  os << "@@ -" << from + 1 << "," << e_end + after - from << " +" << from + 1 << "," << a_end + after - from
     << " @@  first difference at line " << pre + 1 << "\n";
  for (std::size_t i = from; i < pre; ++i) os << " " << e[i] << "\n";
  auto lines = [&](const std::vector<std::string>& v, std::size_t b, std::size_t end, char sign) {
    for (std::size_t i = b; i < end && i < b + limit; ++i) os << sign << v[i] << "\n";
    if (end > b + limit) os << sign << "... (" << end - b - limit << " more lines)\n";
  };
  lines(e, pre, e_end, '-');
  lines(a, pre, a_end, '+');
  for (std::size_t i = e_end; i < e_end + after; ++i) os << " " << e[i] << "\n";
  return os.str();
}

// ---- directives: `// ARGS:` (first line) and `// XFAIL: reason` ------------------------

struct Directives {
  std::vector<std::string> args;
  std::string xfail;  // non-empty: the test is expected to fail, for this reason
};

inline Directives read_directives(const std::string& text) {
  Directives d;
  const std::vector<std::string> lines = split_lines(text);
  if (!lines.empty() && starts_with(lines[0], "// ARGS:")) d.args = split_words(lines[0].substr(8));
  for (const std::string& l : lines) {
    if (starts_with(l, "// XFAIL:")) {
      d.xfail = l.substr(9);
      if (d.xfail.find_first_not_of(' ') == std::string::npos) d.xfail = "(no reason given)";
    }
  }
  return d;
}

// A stage by its --emit spelling (a golden folder's name): tokens, ast, tir, cuda or hip,
// ptx or asm, cubin or co.
inline bool stage_of(const std::string& name, irisc::Stage* out) {
  static const std::pair<const char*, irisc::Stage> names[] = {
      {"tokens", irisc::Stage::tokens},       {"ast", irisc::Stage::ast},        {"tir", irisc::Stage::tir},
      {"cuda", irisc::Stage::source},         {"hip", irisc::Stage::source},     {"ptx", irisc::Stage::assembly},
      {"asm", irisc::Stage::assembly},        {"cubin", irisc::Stage::code_object}, {"co", irisc::Stage::code_object}};
  for (const auto& [n, s] : names) {
    if (name == n) {
      *out = s;
      return true;
    }
  }
  return false;
}

// The ARGS words the harness understands, spelled as on the irisc command line.
inline bool apply_args(const std::vector<std::string>& args, irisc::CompileOptions& o, bool* emit_given, std::string* err) {
  for (const std::string& a : args) {
    if (starts_with(a, "-D")) {
      const std::string body = a.substr(2);
      const std::size_t eq = body.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == body.size()) {
        *err = "ARGS: bad -D '" + a + "' (a CLI-level BadDefine; test it in Cli)";
        return false;
      }
      std::string name;
      std::int64_t v = 0;
      if (!irisc::parse_define(body, &name, &v)) {
        *err = "ARGS: bad -D value in '" + a + "'";
        return false;
      }
      o.defines[name] = v;
    } else if (starts_with(a, "-I")) {  // relative to tests/golden
      o.include_dirs.push_back((kGoldenDir / a.substr(2)).string());
    } else if (starts_with(a, "--target=")) {
      o.target = a.substr(9);
    } else if (a == "-Werror" || a == "--Werror" || a == "-W") {
      o.warnings_as_errors = true;
    } else if (starts_with(a, "--emit=")) {
      if (!stage_of(a.substr(7), &o.stop_after)) {
        *err = "ARGS: unknown stage in '" + a + "'";
        return false;
      }
      if (emit_given) *emit_given = true;
    } else if (starts_with(a, "--run-pass=")) {
      o.only_pass = a.substr(11);
    } else if (a == "--trace-events") {
      o.trace_events = true;
    } else if (a == "--tma-stores") {
      o.tma_stores = true;
    } else if (starts_with(a, "--kernel=")) {
      o.kernels.push_back(a.substr(9));
    } else if (a.size() == 3 && starts_with(a, "-O") && a[2] >= '0' && a[2] <= '3') {
      o.opt_level = a[2] - '0';
    } else {
      *err = "ARGS: unsupported argument '" + a + "' (supported: -DNAME=VALUE, -Idir, --target=, -Werror, --emit=, --run-pass=, --trace-events, --tma-stores, --kernel=, -O0..3)";
      return false;
    }
  }
  return true;
}

// compile() (compile_tir() for a TIR listing), with any exception turned into a test
// failure.
inline bool compile_no_throw(const irisc::SourceBuffer& src, const irisc::CompileOptions& o, irisc::CompileResult* r,
                             bool tir_input = false) {
  try {
    *r = tir_input ? irisc::compile_tir(src, o) : irisc::compile(src, o);
    return true;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "compile() threw: " << e.what();
  } catch (...) {
    ADD_FAILURE() << "compile() threw a non-std exception";
  }
  return false;
}

inline bool has_elf_magic(const std::vector<std::byte>& b) {
  return b.size() >= 4 && b[0] == std::byte{0x7f} && b[1] == std::byte{'E'} && b[2] == std::byte{'L'} &&
         b[3] == std::byte{'F'};
}

inline bool nvrtc_available(std::string* why) { return irisc::toolchain::nvrtc_available(why); }

// =========================================================================================
// Golden outputs per phase.
// =========================================================================================


class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "irisc_golden_XXXXXX").string();
    if (mkdtemp(tmpl.data())) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct CliRun {
  int code = -1;    // exit status, -1 if killed by a signal
  int signal = 0;   // the signal, if any
  std::string out, err;
};

// Runs irisc with `args` (stdout and stderr captured through files).
inline CliRun run_irisc(const std::vector<std::string>& args) {
  CliRun r;
  TempDir tmp;
  const std::string out_path = (tmp.path() / "stdout").string(), err_path = (tmp.path() / "stderr").string();
  std::vector<std::string> argv_s = {kIrisc};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = fork();
  if (pid == 0) {
    const int fo = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int fe = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int fi = open("/dev/null", O_RDONLY);
    if (fo < 0 || fe < 0 || fi < 0) _exit(126);
    const rlimit no_core{0, 0};  // a crash (KnownBugs) should not spend seconds on a core dump
    setrlimit(RLIMIT_CORE, &no_core);
    dup2(fi, 0);
    dup2(fo, 1);
    dup2(fe, 2);
    execv(kIrisc, argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) {
    ADD_FAILURE() << "cannot run " << kIrisc;
    return r;
  }
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

inline std::string show(const CliRun& r) {
  return "exit " + std::to_string(r.code) + (r.signal ? " signal " + std::to_string(r.signal) : "") +
         "\n--- stdout:\n" + r.out.substr(0, 2000) + "\n--- stderr:\n" + r.err.substr(0, 2000);
}

inline const fs::path kCliInput = kGoldenDir / "cuda" / "blocks_loop.iris";

#define SKIP_WITHOUT_NVRTC()                                          \
  do {                                                                \
    std::string why_;                                                 \
    if (!nvrtc_available(&why_)) GTEST_SKIP() << "NVRTC unavailable: " << why_; \
  } while (0)

}  // namespace golden
