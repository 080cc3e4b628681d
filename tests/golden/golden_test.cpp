// irisc file tests (conventions: tests/golden/README.md).
//   Golden/GoldenTest         tokens|ast|tir|cuda/<name>.iris vs <name>.iris.<phase>
//   Diagnostics/FailTest      diagnostics/fail_*.iris vs its CHECK:STDERR lines (id + line)
//   DiagnosticCoverage        every id in diagnostic_kinds.def has a fail_ test or an exemption
//   Samples/SampleCubin       samples/ and dsl/ *.iris -> cubin for sm_90a and sm_80 (NVRTC)
//   GoldenInputs/InputCubin   tir/ and cuda/ inputs -> cubin for sm_90a (NVRTC)
//   Cli                       the irisc executable: options, exit codes, outputs
//   Robustness                hostile inputs: no crash, no exception, always an error
//   KnownBugs                 DISABLED_ repros of compiler bugs (run with
//                             --gtest_also_run_disabled_tests; enable once fixed)
// IRIS_GOLDEN_UPDATE=1 makes Golden/GoldenTest rewrite the golden files instead of
// comparing (tools/scripts/autoupdate_goldens.sh).
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

namespace fs = std::filesystem;

namespace {

const fs::path kGoldenDir = IRIS_GOLDEN_DIR;
const fs::path kSourceDir = IRIS_SOURCE_DIR;
const char* const kIrisc = IRISC_EXE;

// Diagnostic ids without a fail_ test, and why. DiagnosticCoverage fails if an id here
// gains a fail_ test (remove it from the table then) or no longer exists.
struct Exemption {
  const char* id;
  const char* reason;
};
const Exemption kExempt[] = {
    {"FileNotReadable",
     "CLI-level: compile() takes a SourceBuffer; the CLI reads the file (Cli.MissingFileIsFileNotReadable)"},
    {"BadDefine", "CLI-level: the CLI parses -D values (Cli.DefineWithoutValueIsBadDefine, Cli.MalformedDefines)"},
    {"ToolchainFailed",
     "only a compiler bug produces it: generated CUDA that NVRTC rejects, or a TIR verifier failure"},
};

const char* const kPhases[] = {"tokens", "ast", "tir", "cuda"};

// ---- small helpers ----------------------------------------------------------------------

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

bool write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

std::vector<std::string> split_lines(const std::string& s) {
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

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

// The name diagnostics and generated code show: the path relative to tests/golden.
std::string display_name(const fs::path& p) { return p.lexically_relative(kGoldenDir).generic_string(); }

std::vector<fs::path> iris_files(const fs::path& dir, bool recursive) {
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

bool known_id(const std::string& id) {
  for (irisc::DiagnosticKind k : irisc::all_diagnostic_kinds()) {
    if (id == irisc::diagnostic_info(k).id) return true;
  }
  return false;
}

// A unified diff of one hunk: the common prefix and suffix are cut, the rest shown as
// - (golden) and + (actual) lines with three lines of context.
std::string unified_diff(const std::string& expected, const std::string& actual, const std::string& name) {
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

Directives read_directives(const std::string& text) {
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

bool stage_of(const std::string& name, irisc::Stage* out) {
  for (int s = 0; s <= static_cast<int>(irisc::Stage::cubin); ++s) {
    if (name == irisc::stage_name(static_cast<irisc::Stage>(s))) {
      *out = static_cast<irisc::Stage>(s);
      return true;
    }
  }
  return false;
}

// The ARGS words the harness understands, spelled as on the irisc command line.
bool apply_args(const std::vector<std::string>& args, irisc::CompileOptions& o, bool* emit_given, std::string* err) {
  for (const std::string& a : args) {
    if (starts_with(a, "-D")) {
      const std::string body = a.substr(2);
      const std::size_t eq = body.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == body.size()) {
        *err = "ARGS: bad -D '" + a + "' (a CLI-level BadDefine; test it in Cli)";
        return false;
      }
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(body.c_str() + eq + 1, &end, 0);
      if (*end || errno) {
        *err = "ARGS: bad -D value in '" + a + "'";
        return false;
      }
      o.defines[body.substr(0, eq)] = v;
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
    } else if (a.size() == 3 && starts_with(a, "-O") && a[2] >= '0' && a[2] <= '3') {
      o.opt_level = a[2] - '0';
    } else {
      *err = "ARGS: unsupported argument '" + a + "' (supported: -DNAME=VALUE, --target=, -Werror, --emit=, -O0..3)";
      return false;
    }
  }
  return true;
}

// compile(), with any exception turned into a test failure.
bool compile_no_throw(const irisc::SourceBuffer& src, const irisc::CompileOptions& o, irisc::CompileResult* r) {
  try {
    *r = irisc::compile(src, o);
    return true;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "compile() threw: " << e.what();
  } catch (...) {
    ADD_FAILURE() << "compile() threw a non-std exception";
  }
  return false;
}

bool has_elf_magic(const std::vector<std::byte>& b) {
  return b.size() >= 4 && b[0] == std::byte{0x7f} && b[1] == std::byte{'E'} && b[2] == std::byte{'L'} &&
         b[3] == std::byte{'F'};
}

bool nvrtc_available(std::string* why) { return irisc::toolchain::nvrtc_available(why); }

// =========================================================================================
// Golden outputs per phase.
// =========================================================================================

struct GoldenCase {
  std::string phase;
  fs::path input;
};
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << display_name(c.input); }

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> out;
  for (const char* phase : kPhases) {
    for (const fs::path& p : iris_files(kGoldenDir / phase, false)) out.push_back({phase, p});
  }
  return out;
}

std::string golden_case_name(const testing::TestParamInfo<GoldenCase>& info) {
  return info.param.phase + "_" + sanitize(info.param.input.stem().string());
}

const std::string& output_of(const irisc::CompileResult& r, const std::string& phase) {
  if (phase == "tokens") return r.tokens;
  if (phase == "ast") return r.ast;
  if (phase == "tir") return r.tir;
  return r.cuda;
}

class GoldenTest : public testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, MatchesGolden) {
  const GoldenCase& c = GetParam();
  const std::string text = read_file(c.input);
  const Directives d = read_directives(text);
  irisc::CompileOptions o;
  bool emit_given = false;
  std::string err;
  ASSERT_TRUE(apply_args(d.args, o, &emit_given, &err)) << err;
  ASSERT_FALSE(emit_given) << "the folder (" << c.phase << "/) names the phase; drop --emit from ARGS";
  ASSERT_TRUE(d.xfail.empty()) << "XFAIL is for fail_ tests only";
  ASSERT_TRUE(stage_of(c.phase, &o.stop_after));
  const irisc::SourceBuffer src(display_name(c.input), text);
  irisc::CompileResult r;
  ASSERT_TRUE(compile_no_throw(src, o, &r));
  ASSERT_TRUE(r.diagnostics.empty())
      << "a golden input must compile without diagnostics (errors belong in diagnostics/fail_*.iris):\n"
      << r.rendered_diagnostics;
  const std::string& actual = output_of(r, c.phase);
  ASSERT_FALSE(actual.empty()) << "no " << c.phase << " output";
  const fs::path golden = c.input.string() + "." + c.phase;
  if (std::getenv("IRIS_GOLDEN_UPDATE")) {
    if (!fs::exists(golden) || read_file(golden) != actual) {
      ASSERT_TRUE(write_file(golden, actual)) << "cannot write " << golden;
      std::cout << "updated " << display_name(golden) << "\n";
    }
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << "missing golden " << display_name(golden)
                                  << "; create it with tools/scripts/autoupdate_goldens.sh";
  const std::string expected = read_file(golden);
  if (expected != actual) {
    FAIL() << display_name(golden) << " differs from the compiler output; if the change is intended, run "
           << "tools/scripts/autoupdate_goldens.sh and review `git diff`.\n"
           << unified_diff(expected, actual, display_name(golden));
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenTest, testing::ValuesIn(golden_cases()), golden_case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenTest);

TEST(GoldenFiles, EveryGoldenHasAnInputAndEveryInputAGolden) {
  for (const char* phase : kPhases) {
    const fs::path dir = kGoldenDir / phase;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      const fs::path p = e.path();
      if (p.extension() == ".iris") {
        EXPECT_TRUE(fs::exists(p.string() + "." + phase)) << "no golden for " << display_name(p);
        EXPECT_FALSE(starts_with(p.filename().string(), "fail_"))
            << display_name(p) << ": fail_ tests belong in diagnostics/";
      } else if (p.extension() == std::string(".") + phase) {
        EXPECT_TRUE(fs::exists(p.parent_path() / p.stem())) << "orphan golden " << display_name(p);
      } else {
        ADD_FAILURE() << "unexpected file " << display_name(p) << " (expected <name>.iris and <name>.iris." << phase
                      << ")";
      }
    }
  }
}

// =========================================================================================
// fail_ tests: expected diagnostics by id and line.
// =========================================================================================

struct Expectation {
  unsigned line;  // 0: no location (CHECK:STDERR:NOLINE)
  std::string id;
  bool operator<(const Expectation& o) const { return std::tie(line, id) < std::tie(o.line, o.id); }
};

// `CHECK:STDERR: Id` (this line), `CHECK:STDERR:+N Id` / `-N` (N lines below / above),
// `CHECK:STDERR:NOLINE Id` (no location). Several may share one line.
bool parse_checks(const std::string& text, std::vector<Expectation>* out, std::string* err) {
  const std::vector<std::string> lines = split_lines(text);
  const std::string tag = "CHECK:STDERR:";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    const unsigned here = static_cast<unsigned>(i + 1);
    for (std::size_t pos = l.find(tag); pos != std::string::npos; pos = l.find(tag, pos)) {
      pos += tag.size();
      long target = here;
      if (l.compare(pos, 6, "NOLINE") == 0) {
        target = 0;
        pos += 6;
      } else if (pos < l.size() && (l[pos] == '+' || l[pos] == '-')) {
        const bool minus = l[pos] == '-';
        std::size_t q = pos + 1;
        long n = 0;
        while (q < l.size() && std::isdigit(static_cast<unsigned char>(l[q]))) n = n * 10 + (l[q++] - '0');
        if (q == pos + 1) {
          *err = "line " + std::to_string(here) + ": expected a number after CHECK:STDERR:" + l[pos];
          return false;
        }
        target = minus ? here - n : here + n;
        pos = q;
        if (target < 1 || target > static_cast<long>(lines.size())) {
          *err = "line " + std::to_string(here) + ": CHECK:STDERR points outside the file";
          return false;
        }
      }
      while (pos < l.size() && l[pos] == ' ') ++pos;
      std::size_t end = pos;
      while (end < l.size() && (std::isalnum(static_cast<unsigned char>(l[end])) || l[end] == '_')) ++end;
      const std::string id = l.substr(pos, end - pos);
      if (id.empty()) {
        *err = "line " + std::to_string(here) + ": CHECK:STDERR without a diagnostic id";
        return false;
      }
      if (!known_id(id)) {
        *err = "line " + std::to_string(here) + ": '" + id + "' is not an id in diagnostic_kinds.def";
        return false;
      }
      out->push_back({static_cast<unsigned>(target), id});
      pos = end;
    }
  }
  return true;
}

std::string describe(const std::vector<Expectation>& v) {
  std::string s;
  for (const Expectation& e : v) {
    s += "  " + (e.line ? "line " + std::to_string(e.line) : std::string("no location")) + ": " + e.id + "\n";
  }
  return s;
}

class FailTest : public testing::TestWithParam<fs::path> {};

TEST_P(FailTest, ReportsExpectedDiagnostics) {
  const fs::path& path = GetParam();
  const std::string text = read_file(path);
  const Directives d = read_directives(text);
  irisc::CompileOptions o;
  o.stop_after = irisc::Stage::tir;
  std::string err;
  ASSERT_TRUE(apply_args(d.args, o, nullptr, &err)) << err;
  std::vector<Expectation> want;
  ASSERT_TRUE(parse_checks(text, &want, &err)) << display_name(path) << ": " << err;
  ASSERT_FALSE(want.empty()) << display_name(path) << " has no CHECK:STDERR line";

  const irisc::SourceBuffer src(display_name(path), text);
  irisc::CompileResult r;
  ASSERT_TRUE(compile_no_throw(src, o, &r));
  std::vector<Expectation> got;
  for (const irisc::Diagnostic& diag : r.diagnostics) {
    got.push_back({diag.located ? src.line_col(diag.range.begin).line : 0u, irisc::diagnostic_info(diag.kind).id});
  }
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  std::vector<Expectation> missing, unexpected;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(unexpected));
  const bool match = missing.empty() && unexpected.empty();
  std::string report;
  if (!missing.empty()) report += "expected but not reported:\n" + describe(missing);
  if (!unexpected.empty()) report += "reported but not expected:\n" + describe(unexpected);
  report += "compiler output:\n" + r.rendered_diagnostics;
  if (!d.xfail.empty()) {
    EXPECT_FALSE(match) << "XPASS: " << display_name(path)
                        << " now reports exactly the expected diagnostics; remove its XFAIL line";
    if (!match) {
      std::cout << "[  XFAIL   ] " << display_name(path) << ":" << d.xfail << "\n";
      if (!missing.empty()) std::cout << "expected but not reported:\n" << describe(missing);
      if (!unexpected.empty()) std::cout << "reported but not expected:\n" << describe(unexpected);
    }
    return;
  }
  EXPECT_TRUE(match) << display_name(path) << "\n" << report;
}

std::vector<fs::path> fail_files() { return iris_files(kGoldenDir / "diagnostics", false); }

INSTANTIATE_TEST_SUITE_P(Diagnostics, FailTest, testing::ValuesIn(fail_files()),
                         [](const testing::TestParamInfo<fs::path>& info) {
                           return sanitize(info.param.stem().string());
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FailTest);

TEST(DiagnosticCoverage, FailTestsAreNamedFail) {
  for (const auto& e : fs::directory_iterator(kGoldenDir / "diagnostics")) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(starts_with(name, "fail_") && e.path().extension() == ".iris")
        << "diagnostics/" << name << ": expected fail_<something>.iris";
  }
}

TEST(DiagnosticCoverage, EveryIdHasAFailTest) {
  std::map<std::string, std::vector<std::string>> covered;  // id -> fail_ tests naming it
  std::set<std::string> xfail_only;
  std::map<std::string, bool> passing;  // id -> named by some test that is not XFAIL
  for (const fs::path& p : fail_files()) {
    const std::string text = read_file(p);
    std::vector<Expectation> want;
    std::string err;
    if (!parse_checks(text, &want, &err)) continue;  // reported by the test itself
    const bool xfail = !read_directives(text).xfail.empty();
    for (const Expectation& e : want) {
      covered[e.id].push_back(p.filename().string());
      passing[e.id] = passing[e.id] || !xfail;
    }
  }
  std::vector<std::string> missing;
  for (irisc::DiagnosticKind k : irisc::all_diagnostic_kinds()) {
    const std::string id = irisc::diagnostic_info(k).id;
    const Exemption* ex = nullptr;
    for (const Exemption& e : kExempt) {
      if (id == e.id) ex = &e;
    }
    if (ex) {
      EXPECT_FALSE(covered.count(id)) << id << " is exempt but has a fail_ test (" << covered[id][0]
                                      << "); remove it from kExempt";
      continue;
    }
    if (!covered.count(id)) missing.push_back(id);
    else if (!passing[id]) xfail_only.insert(id);
  }
  for (const Exemption& e : kExempt) EXPECT_TRUE(known_id(e.id)) << "stale exemption: " << e.id << " is not an id";
  std::string list;
  for (const std::string& id : missing) list += "  " + id + "\n";
  EXPECT_TRUE(missing.empty()) << "diagnostic ids with no tests/golden/diagnostics/fail_*.iris naming them in a "
                                  "CHECK:STDERR line (add a test, or an exemption with a reason):\n"
                               << list;
  for (const std::string& id : xfail_only) {
    std::cout << "note: " << id << " is only covered by XFAIL tests (a known compiler bug)\n";
  }
  for (const Exemption& e : kExempt) std::cout << "exempt: " << e.id << ": " << e.reason << "\n";
}

// =========================================================================================
// NVRTC: samples and golden inputs compile to cubins.
// =========================================================================================

struct CubinCase {
  fs::path file;
  std::string target;
  std::string name;
};
void PrintTo(const CubinCase& c, std::ostream* os) { *os << c.file.generic_string() << " " << c.target; }

std::vector<CubinCase> sample_cases() {
  std::vector<CubinCase> out;
  for (const char* dir : {"samples", "dsl"}) {
    for (const fs::path& p : iris_files(kSourceDir / dir, true)) {
      for (const char* t : {"sm_90a", "sm_80"}) {
        const std::string rel = p.lexically_relative(kSourceDir).replace_extension().generic_string();
        out.push_back({p, t, sanitize(rel) + "_" + t});
      }
    }
  }
  return out;
}

std::vector<CubinCase> golden_input_cases() {
  std::vector<CubinCase> out;
  for (const char* phase : {"tir", "cuda"}) {
    for (const fs::path& p : iris_files(kGoldenDir / phase, false)) {
      out.push_back({p, "sm_90a", std::string(phase) + "_" + sanitize(p.stem().string())});
    }
  }
  return out;
}

void expect_cubin(const CubinCase& c) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "NVRTC unavailable: " << why;
  const std::string text = read_file(c.file);
  irisc::CompileOptions o;
  std::string err;
  ASSERT_TRUE(apply_args(read_directives(text).args, o, nullptr, &err)) << err;
  o.target = c.target;
  o.stop_after = irisc::Stage::cubin;
  const irisc::SourceBuffer src(c.file.filename().string(), text);
  irisc::CompileResult r;
  ASSERT_TRUE(compile_no_throw(src, o, &r));
  ASSERT_TRUE(r.ok) << c.file << " for " << c.target << ":\n" << r.rendered_diagnostics << r.toolchain_log;
  EXPECT_TRUE(r.diagnostics.empty()) << r.rendered_diagnostics;
  EXPECT_NE(r.ptx.find(".entry"), std::string::npos) << "no kernel entry in the PTX";
  EXPECT_TRUE(has_elf_magic(r.cubin)) << "the cubin is not an ELF image (" << r.cubin.size() << " bytes)";
}

class SampleCubin : public testing::TestWithParam<CubinCase> {};
TEST_P(SampleCubin, CompilesWithNvrtc) { expect_cubin(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Samples, SampleCubin, testing::ValuesIn(sample_cases()),
                         [](const testing::TestParamInfo<CubinCase>& info) { return info.param.name; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SampleCubin);

class InputCubin : public testing::TestWithParam<CubinCase> {};
TEST_P(InputCubin, CompilesWithNvrtc) { expect_cubin(GetParam()); }
INSTANTIATE_TEST_SUITE_P(GoldenInputs, InputCubin, testing::ValuesIn(golden_input_cases()),
                         [](const testing::TestParamInfo<CubinCase>& info) { return info.param.name; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(InputCubin);

// =========================================================================================
// The irisc command line.
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
CliRun run_irisc(const std::vector<std::string>& args) {
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

std::string show(const CliRun& r) {
  return "exit " + std::to_string(r.code) + (r.signal ? " signal " + std::to_string(r.signal) : "") +
         "\n--- stdout:\n" + r.out.substr(0, 2000) + "\n--- stderr:\n" + r.err.substr(0, 2000);
}

// A small valid input with a compile-time parameter B.
const fs::path kCliInput = kGoldenDir / "cuda" / "blocks_loop.iris";

#define SKIP_WITHOUT_NVRTC()                                          \
  do {                                                                \
    std::string why_;                                                 \
    if (!nvrtc_available(&why_)) GTEST_SKIP() << "NVRTC unavailable: " << why_; \
  } while (0)

TEST(Cli, HelpMentionsEmit) {
  const CliRun r = run_irisc({"--help"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("--emit"), std::string::npos) << show(r);
}

TEST(Cli, VersionPrintsTheVersion) {
  const CliRun r = run_irisc({"--version"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find(irisc::irisc_version()), std::string::npos) << show(r);
}

TEST(Cli, NoInputIsAUsageError) {
  const CliRun r = run_irisc({});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_NE(r.err.find("no input file"), std::string::npos) << show(r);
}

TEST(Cli, MissingFileIsFileNotReadable) {
  const CliRun r = run_irisc({"/nonexistent/dir/missing.iris", "--emit=tir"});
  EXPECT_EQ(r.code, 1) << show(r);
  EXPECT_NE(r.err.find("[FileNotReadable]"), std::string::npos) << show(r);
}

TEST(Cli, DefineWithoutValueIsBadDefine) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=tir", "-DB"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_NE(r.err.find("[BadDefine]"), std::string::npos) << show(r);
}

TEST(Cli, MalformedDefines) {
  for (const char* d : {"-DB=", "-D=4", "-DB=abc", "-DB=1.5", "-DB=99999999999999999999"}) {
    const CliRun r = run_irisc({kCliInput.string(), "--emit=tir", d});
    EXPECT_EQ(r.code, 2) << d << "\n" << show(r);
    EXPECT_NE(r.err.find("[BadDefine]"), std::string::npos) << d << "\n" << show(r);
  }
}

TEST(Cli, DefineOverridesTheDefault) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=tir", "-DB=2048"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("with B=2048"), std::string::npos) << show(r);
  EXPECT_NE(r.out.find("blocks(#N, 2048)"), std::string::npos) << show(r);
}

TEST(Cli, UnknownDefineIsAWarning) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=tir", "-DNOPE=1"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("warning:"), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("[UnknownDefine]"), std::string::npos) << show(r);
  EXPECT_NE(r.out.find("kernel scale"), std::string::npos) << "the output is still produced\n" << show(r);
}

TEST(Cli, UnknownDefineWithWerrorIsAnError) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=tir", "-DNOPE=1", "-Werror"});
  EXPECT_EQ(r.code, 1) << show(r);
  EXPECT_NE(r.err.find("error:"), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("[UnknownDefine]"), std::string::npos) << show(r);
  EXPECT_TRUE(r.out.empty()) << show(r);
}

TEST(Cli, UnknownTargetIsAUsageError) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=tir", "--target=sm_70"});
  EXPECT_EQ(r.code, 2) << show(r);
}

TEST(Cli, CompileErrorsExitOneWithClangStyleDiagnostics) {
  const CliRun r = run_irisc({(kGoldenDir / "diagnostics" / "fail_unknown_name.iris").string(), "--emit=tir",
                           "--color=never"});
  EXPECT_EQ(r.code, 1) << show(r);
  EXPECT_NE(r.err.find("fail_unknown_name.iris:2:17: error: unknown name 'y' [UnknownName]\n"
                       "        store(x[0], y);          // CHECK:STDERR: UnknownName\n"
                       "                    ^\n"),
            std::string::npos)
      << show(r);
  EXPECT_NE(r.err.find("4 error(s)"), std::string::npos) << show(r);
  EXPECT_TRUE(r.out.empty()) << show(r);
}

TEST(Cli, ListDiagnosticsListsEveryId) {
  const CliRun r = run_irisc({"--list-diagnostics"});
  EXPECT_EQ(r.code, 0) << show(r);
  for (irisc::DiagnosticKind k : irisc::all_diagnostic_kinds()) {
    EXPECT_NE(r.out.find(std::string(irisc::diagnostic_info(k).id) + " "), std::string::npos)
        << irisc::diagnostic_info(k).id;
  }
}

TEST(Cli, EmitTokens) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=tokens"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("2:1 Kernel 'kernel'\n"), std::string::npos) << show(r);
  EXPECT_NE(r.out.find(" EndOfFile\n"), std::string::npos) << show(r);
}

TEST(Cli, EmitAst) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=ast"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(r.out.rfind("Kernel scale  @2:1\n", 0), 0u) << show(r);
}

TEST(Cli, EmitTir) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=tir"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(r.out.rfind("kernel scale(", 0), 0u) << show(r);
}

TEST(Cli, EmitCuda) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=cuda"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("extern \"C\" __global__ void"), std::string::npos) << show(r);
  EXPECT_NE(r.out.find("iris_metadata"), std::string::npos) << show(r);
}

TEST(Cli, EmitPtx) {
  SKIP_WITHOUT_NVRTC();
  const CliRun r = run_irisc({kCliInput.string(), "--emit=ptx"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find(".entry iris_k_scale"), std::string::npos) << show(r);
}

TEST(Cli, EmitCubin) {
  SKIP_WITHOUT_NVRTC();
  TempDir tmp;
  const fs::path out = tmp.path() / "k.cubin";
  const CliRun r = run_irisc({kCliInput.string(), "--emit=cubin", "-o", out.string()});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(read_file(out).substr(0, 4), std::string("\x7f" "ELF")) << show(r);
}

TEST(Cli, EmitCubinForSm80) {
  SKIP_WITHOUT_NVRTC();
  TempDir tmp;
  const fs::path out = tmp.path() / "k.cubin";
  const CliRun r = run_irisc({kCliInput.string(), "--target=sm_80", "-o", out.string()});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(read_file(out).substr(0, 4), std::string("\x7f" "ELF")) << show(r);
}

TEST(Cli, EmitHeader) {
  SKIP_WITHOUT_NVRTC();
  TempDir tmp;
  const fs::path out = tmp.path() / "k.iris.hpp";
  const CliRun r = run_irisc({kCliInput.string(), "--emit=header", "-o", out.string()});
  EXPECT_EQ(r.code, 0) << show(r);
  const std::string h = read_file(out);
  EXPECT_NE(h.find("class Kernels"), std::string::npos) << h.substr(0, 2000);
  EXPECT_NE(h.find("void scale("), std::string::npos) << h.substr(0, 2000);
}

TEST(Cli, EmitMetadataIsJson) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=metadata"});
  ASSERT_EQ(r.code, 0) << show(r);
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << show(r);
  EXPECT_EQ(j["format"], "irisc-metadata");
  ASSERT_EQ(j["kernels"].size(), 1u);
  EXPECT_EQ(j["kernels"][0]["name"], "scale");
  EXPECT_EQ(j["kernels"][0]["constants"]["B"], 1024);
  EXPECT_EQ(j["kernels"][0]["sizes"], nlohmann::json::array({"N"}));
}

TEST(Cli, UnwritableOutputExitsThree) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=tir", "-o", "/nonexistent/dir/out.tir"});
  EXPECT_EQ(r.code, 3) << show(r);
  EXPECT_NE(r.err.find("cannot write"), std::string::npos) << show(r);
}

TEST(Cli, DumpIrAfterPrintsToStderr) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=tir", "--dump-ir-after=fold-constants"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("// after fold-constants"), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("kernel scale("), std::string::npos) << show(r);
  EXPECT_EQ(r.out.rfind("kernel scale(", 0), 0u) << "stdout keeps the requested output\n" << show(r);
}

TEST(Cli, DumpIrAfterAll) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=tir", "--dump-ir-after=all"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("// after fold-constants"), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("// after remove-dead-lets"), std::string::npos) << show(r);
}

TEST(Cli, DumpIrAfterUnknownPassIsAUsageError) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=tir", "--dump-ir-after=nope"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_NE(r.err.find("no pass named 'nope'"), std::string::npos) << show(r);
}

TEST(Cli, TimePassesPrintsToStderr) {
  const CliRun r = run_irisc({kCliInput.string(), "--emit=tir", "--time-passes"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("fold-constants"), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("remove-dead-lets"), std::string::npos) << show(r);
  EXPECT_NE(r.err.find(" ms"), std::string::npos) << show(r);
}

TEST(Cli, GarbageInputExitsOne) {
  TempDir tmp;
  const fs::path p = tmp.path() / "garbage.iris";
  std::string text = "kernel k(x: tensor<f32>[N]) {\n\xff\xfe";
  text += '\0';
  text += "\x01 store(x[0], 1.0);\n}\n";
  ASSERT_TRUE(write_file(p, text));
  const CliRun r = run_irisc({p.string(), "--emit=tir"});
  EXPECT_EQ(r.code, 1) << show(r);
  EXPECT_EQ(r.signal, 0) << show(r);
  EXPECT_NE(r.err.find("[InvalidUtf8]"), std::string::npos) << show(r);
}

// =========================================================================================
// Robustness: hostile inputs end in diagnostics, never in a crash or an exception.
// =========================================================================================

void expect_rejected(const std::string& name, const std::string& text) {
  SCOPED_TRACE(name);
  const irisc::SourceBuffer src("robustness/" + name + ".iris", text);
  irisc::CompileOptions o;
  o.stop_after = irisc::Stage::cuda;
  irisc::CompileResult r;
  ASSERT_TRUE(compile_no_throw(src, o, &r));
  EXPECT_FALSE(r.ok);
  EXPECT_GT(r.errors, 0);
  ASSERT_FALSE(r.diagnostics.empty());
  EXPECT_FALSE(r.rendered_diagnostics.empty());
  EXPECT_LE(r.diagnostics.size(), 51u) << "more than the error limit (50) plus TooManyErrors";
  for (const irisc::Diagnostic& d : r.diagnostics) {
    if (!d.located) continue;
    EXPECT_LE(d.range.begin, d.range.end) << irisc::diagnostic_info(d.kind).id;
    EXPECT_LE(d.range.end, text.size()) << irisc::diagnostic_info(d.kind).id << " points past the end of the file";
  }
}

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

const std::string kHead = "kernel k(x: tensor<i64>[N]) {\n";

TEST(Robustness, HundredThousandNestedParentheses) {
  expect_rejected("parens_top", repeat("(", 100000));
  expect_rejected("parens_let", kHead + "    let a = " + repeat("(", 100000) + "\n}\n");
  expect_rejected("parens_balanced", kHead + "    let a = " + repeat("(", 100000) + "1" + repeat(")", 100000) + ";\n}\n");
}

TEST(Robustness, TenThousandNestedBraces) {
  expect_rejected("braces_top", repeat("{", 10000));
  expect_rejected("braces_body", "kernel k(x: tensor<i64>[N]) " + repeat("{", 10000));
  expect_rejected("braces_for", kHead + repeat("for i in range(0, 1) {", 10000) + repeat("}", 10000) + "}\n");
  expect_rejected("brackets", kHead + "    let a = " + repeat("[", 10000) + "\n}\n");
}

TEST(Robustness, FiveThousandNestedIfs) {
  expect_rejected("ifs_open", kHead + repeat("if true {\n", 5000));
  expect_rejected("ifs_closed", kHead + repeat("if true {\n", 5000) + repeat("}\n", 5000) + "}\n");
  expect_rejected("else_ifs", kHead + "if true {}" + repeat(" else if true {}", 5000) + "\n}\n");
}

TEST(Robustness, TenMegabytesOfRandomBytes) {
  std::mt19937_64 rng(20240611);
  std::string text(10u << 20, '\0');
  for (std::size_t i = 0; i < text.size(); i += 8) {
    const std::uint64_t v = rng();
    for (std::size_t k = 0; k < 8 && i + k < text.size(); ++k) text[i + k] = static_cast<char>(v >> (8 * k));
  }
  expect_rejected("random", text);
}

TEST(Robustness, InvalidUtf8) {
  for (const std::string& bad : {std::string("\xff"), std::string("\xc0\xaf"), std::string("\xed\xa0\x80"),
                                 std::string("\xf4\x90\x80\x80"), std::string("\x80"), std::string("\xe2\x82")}) {
    expect_rejected("utf8_top", bad);
    expect_rejected("utf8_expr", kHead + "    store(x[0], 1 " + bad + " 2);\n}\n");
    expect_rejected("utf8_eof", kHead + "    store(x[0], 1);\n}\n" + bad);
  }
}

TEST(Robustness, NulByteInTheMiddle) {
  std::string text = kHead + "    store(x[0], 1);";
  text += '\0';
  text += "\n    store(x[1], 2);\n}\n";
  expect_rejected("nul", text);
  expect_rejected("nul_only", std::string(1, '\0'));
}

TEST(Robustness, UnterminatedBlockComment) {
  expect_rejected("comment_body", kHead + "    /* never closed\n    store(x[0], 1);\n");
  expect_rejected("comment_only", "/*");
  expect_rejected("comment_star", "/*/");
}

TEST(Robustness, UnterminatedString) {
  expect_rejected("string_body", kHead + "    let s = \"never closed\n}\n");
  expect_rejected("string_eof", "\"");
  expect_rejected("string_escape_eof", "\"\\");
}

TEST(Robustness, ThousandDigitNumbers) {
  const std::string digits = repeat("9", 1000);
  expect_rejected("int", kHead + "    store(x[0], " + digits + ");\n}\n");
  expect_rejected("hex", kHead + "    store(x[0], 0x" + repeat("f", 1000) + ");\n}\n");
  expect_rejected("float", kHead + "    store(x[0], " + digits + ".0);\n}\n");
  expect_rejected("exponent", kHead + "    store(x[0], 1e" + digits + ");\n}\n");
}

// =========================================================================================
// Known compiler bugs (found while writing these tests). Each is a DISABLED_ repro:
// run with --gtest_also_run_disabled_tests; once fixed, drop the DISABLED_ prefix.
// =========================================================================================

// Left-associative operator chains and postfix `as` chains are built iteratively by the
// parser, so kMaxNesting does not bound their depth; ast::dump, sema's expr() and codegen
// then recurse once per operator and overflow the stack (SIGSEGV from about 40000 terms with the default 8 MiB stack).
// Run through the CLI so that a crash fails only this test.
TEST(KnownBugs, LongOperatorChainDoesNotCrash) {
  TempDir tmp;
  std::string terms = "m";
  for (int i = 1; i < 50000; ++i) terms += " + m";
  const fs::path p = tmp.path() / "chain.iris";
  ASSERT_TRUE(write_file(p, "kernel k(x: tensor<i64>[N], m: int) {\n    store(x[0], " + terms + ");\n}\n"));
  for (const char* emit : {"--emit=tir", "--emit=cuda"}) {
    const CliRun r = run_irisc({p.string(), emit});
    EXPECT_EQ(r.signal, 0) << emit << " crashed\n" << show(r);
    EXPECT_TRUE(r.code == 0 || r.code == 1) << emit << "\n" << show(r);
  }
}

TEST(KnownBugs, LongCastChainDoesNotCrash) {
  TempDir tmp;
  const fs::path p = tmp.path() / "casts.iris";
  ASSERT_TRUE(write_file(p, "kernel k(x: tensor<i64>[N]) {\n    store(x[0], 1" + repeat(" as i64", 100000) + ");\n}\n"));
  const CliRun r = run_irisc({p.string(), "--emit=tir"});
  EXPECT_EQ(r.signal, 0) << "crashed\n" << show(r);
  EXPECT_TRUE(r.code == 0 || r.code == 1) << show(r);
}

// emit_cuda zero-initializes an atomic's result tile with a functional cast,
// `unsigned long long(0)` / `long long(0)`, which is not C++ for multi-word type names.
TEST(KnownBugs, TileAtomicsOn64BitElementsCompile) {
  SKIP_WITHOUT_NVRTC();
  for (const char* t : {"u64", "i64"}) {
    const std::string text = std::string("kernel k(c: symmetric tensor<") + t +
                             ">[N]) {\n    for i in blocks(N, 64) {\n        atomic_add(c[i], 1);\n    }\n}\n";
    const irisc::SourceBuffer src(std::string("atomic_") + t + ".iris", text);
    irisc::CompileOptions o;
    o.stop_after = irisc::Stage::ptx;
    irisc::CompileResult r;
    ASSERT_TRUE(compile_no_throw(src, o, &r));
    EXPECT_TRUE(r.ok) << t << ":\n" << r.rendered_diagnostics;
  }
}

// emit_cuda includes <cuda_fp16.h> / <cuda_bf16.h> only when a parameter or a let has
// that type, not when a cast or fill produces it.
TEST(KnownBugs, HalfTypesOnlyInCastsCompile) {
  SKIP_WITHOUT_NVRTC();
  for (const char* t : {"f16", "bf16"}) {
    const std::string text = std::string("kernel k(x: tensor<f32>[N], s: f32) {\n    store(x[0], (s as ") + t +
                              ") as f32);\n}\n";
    const irisc::SourceBuffer src(std::string("cast_") + t + ".iris", text);
    irisc::CompileOptions o;
    o.stop_after = irisc::Stage::ptx;
    irisc::CompileResult r;
    ASSERT_TRUE(compile_no_throw(src, o, &r));
    EXPECT_TRUE(r.ok) << t << ":\n" << r.rendered_diagnostics;
  }
}

// check_expr.cpp passes token_kind_spelling(op), which is already quoted, into a format
// that quotes again: "operator ''%'' needs integers".
TEST(KnownBugs, IntegerOpOnFloatQuotesTheOperatorOnce) {
  const irisc::SourceBuffer src("q.iris", "kernel k(x: tensor<f32>[N], f: f32) {\n    store(x[0], f % 2.0);\n}\n");
  irisc::CompileOptions o;
  o.stop_after = irisc::Stage::tir;
  irisc::CompileResult r;
  ASSERT_TRUE(compile_no_throw(src, o, &r));
  EXPECT_NE(r.rendered_diagnostics.find("operator '%' needs integers"), std::string::npos) << r.rendered_diagnostics;
}

// emit_cuda prints user names unchanged, so they can collide with the names of the
// generated code: a parameter `s` is shadowed by the per-slot loop counter
// `for (int s = 0; ...)` and `load(x[i]) * s` silently multiplies by the slot index
// (NVRTC accepts it: a miscompile).
TEST(KnownBugs, ParameterNamedSIsNotShadowedBySlotLoops) {
  const irisc::SourceBuffer src(
      "s.iris", "kernel k(x: tensor<f32>[N], s: f32) {\n    for i in blocks(N, 64) {\n"
                "        store(x[i], load(x[i]) * s);\n    }\n}\n");
  irisc::CompileOptions o;
  o.stop_after = irisc::Stage::cuda;
  irisc::CompileResult r;
  ASSERT_TRUE(compile_no_throw(src, o, &r));
  ASSERT_TRUE(r.ok) << r.rendered_diagnostics;
  EXPECT_EQ(r.cuda.find("[s] * s)"), std::string::npos) << "the slot counter shadows parameter s:\n" << r.cuda;
}

// ... and other names give CUDA that NVRTC rejects (ToolchainFailed): parameters named
// like the context, a C++ keyword or a generated temporary, kernels named like a CUDA
// math function or main. Either accept them (mangle) or reject them with a diagnostic.
TEST(KnownBugs, UserNamesDoNotBreakTheGeneratedCode) {
  SKIP_WITHOUT_NVRTC();
  std::vector<std::pair<std::string, std::string>> cases;
  for (const char* p : {"ctx", "class", "float", "bound0", "blockIdx", "iris_sms"}) {
    cases.push_back({std::string("param_") + p,
                     std::string("kernel k(x: tensor<f32>[N], ") + p + ": f32) {\n    for i in blocks(N, 64) {\n" +
                         "        store(x[i], load(x[i]) * " + p + ");\n    }\n}\n"});
  }
  for (const char* k : {"norm", "sin", "main"}) {
    cases.push_back({std::string("kernel_") + k,
                     std::string("kernel ") + k + "(x: tensor<f32>[N]) {\n    store(x[0], 1.0);\n}\n"});
  }
  for (const auto& [name, text] : cases) {
    const irisc::SourceBuffer src(name + ".iris", text);
    irisc::CompileOptions o;
    o.stop_after = irisc::Stage::ptx;
    irisc::CompileResult r;
    ASSERT_TRUE(compile_no_throw(src, o, &r));
    for (const irisc::Diagnostic& d : r.diagnostics) {
      EXPECT_NE(d.kind, irisc::DiagnosticKind::ToolchainFailed) << name << ":\n" << r.rendered_diagnostics;
    }
  }
}

// -D and -I are multi-value CLI11 options, so `irisc -DB=2048 file.iris` takes the file
// name as a second -D value ("no input file", exit 2).
TEST(KnownBugs, CliDefineBeforeTheInputFile) {
  const CliRun r = run_irisc({"-DB=2048", kCliInput.string(), "--emit=tir"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("with B=2048"), std::string::npos) << show(r);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Inputs the fuzzer once found crashing (or miscompiling): each must now compile to PTX
// or stop with user diagnostics -- never with a compiler-bug diagnostic.
TEST(FuzzRegressions, EveryInputCompilesOrIsRejectedCleanly) {
  std::string why;
  const bool have_nvrtc = irisc::toolchain::nvrtc_available(&why);
  int seen = 0;
  for (const auto& e : fs::directory_iterator(kSourceDir / "tests/fuzz/regressions")) {
    if (e.path().extension() != ".iris") continue;
    ++seen;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    irisc::SourceBuffer src(e.path().filename().string(), os.str());
    irisc::CompileOptions o;
    o.stop_after = have_nvrtc ? irisc::Stage::ptx : irisc::Stage::cuda;
    const irisc::CompileResult r = irisc::compile(src, o);
    for (const irisc::Diagnostic& d : r.diagnostics) {
      EXPECT_NE(d.kind, irisc::DiagnosticKind::ToolchainFailed) << e.path() << ":\n" << r.rendered_diagnostics;
    }
    if (e.path().filename() == "passes_dead_let_drops_nested_atomic.iris") {
      EXPECT_NE(r.cuda.find("atomic_add"), std::string::npos) << "the atomic in the index was dropped";
    }
  }
  EXPECT_GT(seen, 0);
}
