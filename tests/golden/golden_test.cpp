// irisc file tests (conventions: tests/golden/README.md).
//   Golden/GoldenTest         tokens|ast|tir|cuda/<name>.iris vs <name>.iris.<phase>;
//                             passes/<name>.iris (ARGS: --run-pass=P) vs <name>.iris.passes:
//                             the TIR after pass P alone, run on sema's output;
//                             passes/<name>.tir (ARGS: --run-pass=P) vs <name>.tir.passes:
//                             the same from a hand-written TIR listing (compile_tir)
//   GoldenFiles.EveryPassHasAFileTest  every pass of the pipeline has a passes/ test
//   Diagnostics/FailTest      diagnostics/fail_*.iris (and fail_*.tir, read as TIR) vs its
//                             CHECK:STDERR lines (id + line)
//   DiagnosticCoverage        every id in diagnostic_kinds.def has a fail_ test or an exemption
//   Samples/SampleCubin       samples/ and dsl/ *.iris -> cubin for sm_90a and sm_80 (NVRTC)
//   GoldenInputs/InputCubin   tir/ and cuda/ inputs -> cubin for sm_90a (NVRTC)
//   Cli                       the irisc executable: options, exit codes, outputs
//   Robustness                hostile inputs: no crash, no exception, always an error
//   KnownBugs                 DISABLED_ repros of compiler bugs (run with
//                             --gtest_also_run_disabled_tests; enable once fixed)
// IRIS_GOLDEN_UPDATE=1 makes Golden/GoldenTest rewrite the golden files instead of
// comparing (tools/scripts/autoupdate_goldens.sh). IRIS_GOLDEN_SOURCE_ONLY=1 stops
// Samples/SampleCubin and SampleCodeObject at the kernel source (CUDA or HIP C++): irisc's
// whole part of each compile without NVRTC's and clang's (tools/scripts/sanitize.sh: those
// are not instrumented, and the plain ctest runs them whole).
#include "golden_support.hpp"

#include "compiler/contract/launch_contract.hpp"
#include "compiler/passes/pipeline.hpp"
#include "compiler/target/target.hpp"
#include "compiler/toolchain/amdgpu.hpp"
#include "compiler/toolchain/comgr.hpp"

using namespace golden;

namespace {

struct Exemption {
  const char* id;
  const char* reason;
};
const Exemption kExempt[] = {
    {"FileNotReadable",
     "CLI-level: compile() takes a SourceBuffer; the CLI reads the file (Cli.MissingFileIsFileNotReadable)"},
    {"BadDefine", "CLI-level: the CLI parses -D values (Cli.DefineWithoutValueIsBadDefine, Cli.MalformedDefines)"},
    {"ToolchainFailed",
     "only a compiler bug produces it: generated CUDA or HIP that the toolchain rejects, or a TIR verifier failure"},
    {"ToolchainMissing",
     "needs a machine without the AMD tools (AmdgpuToolchain.MissingClangIsToolchainMissing sets IRISC_CLANG)"},
};

const char* const kPhases[] = {"tokens", "ast", "tir", "cuda", "passes"};


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
  // Per-pass tests may start from a TIR listing.
  for (const fs::path& p : tir_files(kGoldenDir / "passes")) out.push_back({"passes", p});
  return out;
}

std::string golden_case_name(const testing::TestParamInfo<GoldenCase>& info) {
  return info.param.phase + "_" + sanitize(info.param.input.stem().string()) +
         (is_tir_input(info.param.input) ? "_tir" : "");
}

const std::string& output_of(const irisc::CompileResult& r, const std::string& phase) {
  if (phase == "tokens") return r.tokens;
  if (phase == "ast") return r.ast;
  if (phase == "tir" || phase == "passes") return r.tir;
  return r.kernel_source;
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
  if (c.phase == "passes") {
    ASSERT_FALSE(o.only_pass.empty()) << "a passes/ test names its pass: // ARGS: --run-pass=NAME";
    o.stop_after = irisc::Stage::tir;
  } else {
    ASSERT_TRUE(o.only_pass.empty()) << "--run-pass belongs in passes/ tests";
    ASSERT_TRUE(stage_of(c.phase, &o.stop_after));
  }
  const irisc::SourceBuffer src(display_name(c.input), text);
  irisc::CompileResult r;
  ASSERT_TRUE(compile_no_throw(src, o, &r, is_tir_input(c.input)));
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
      if (p.extension() == ".iris" || (std::string(phase) == "passes" && is_tir_input(p))) {
        EXPECT_TRUE(fs::exists(p.string() + "." + phase)) << "no golden for " << display_name(p);
        EXPECT_FALSE(starts_with(p.filename().string(), "fail_"))
            << display_name(p) << ": fail_ tests belong in diagnostics/";
      } else if (p.extension() == std::string(".") + phase) {
        EXPECT_TRUE(fs::exists(p.parent_path() / p.stem())) << "orphan golden " << display_name(p);
      } else {
        ADD_FAILURE() << "unexpected file " << display_name(p) << " (expected <name>.iris and <name>.iris." << phase
                      << (std::string(phase) == "passes" ? ", or <name>.tir and <name>.tir.passes" : "") << ")";
      }
    }
  }
}

// Either input kind counts: a .iris test (the pass on sema's output) or a .tir test (the
// pass on a hand-written listing).
TEST(GoldenFiles, EveryPassHasAFileTest) {
  std::set<std::string> tested;
  std::vector<fs::path> inputs = iris_files(kGoldenDir / "passes", false);
  for (const fs::path& p : tir_files(kGoldenDir / "passes")) inputs.push_back(p);
  for (const fs::path& p : inputs) {
    irisc::CompileOptions o;
    std::string err;
    if (apply_args(read_directives(read_file(p)).args, o, nullptr, &err)) tested.insert(o.only_pass);
  }
  for (const std::string& pass : irisc::pass_names()) {
    EXPECT_TRUE(tested.count(pass)) << "pass '" << pass << "' has no test in tests/golden/passes/ (a .iris or .tir "
                                    << "file with ARGS: --run-pass=" << pass << ")";
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
  ASSERT_TRUE(compile_no_throw(src, o, &r, is_tir_input(path)));
  std::vector<Expectation> got;
  for (const irisc::Diagnostic& diag : r.diagnostics) {
    // A diagnostic in an imported file (past the main file's text) counts as NOLINE.
    const bool here = diag.located && diag.range.begin <= text.size();
    got.push_back({here ? src.line_col(diag.range.begin).line : 0u, irisc::diagnostic_info(diag.kind).id});
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

// fail_*.iris, and fail_*.tir: TIR listings (compile_tir), for BadTir.
std::vector<fs::path> fail_files() {
  std::vector<fs::path> out = iris_files(kGoldenDir / "diagnostics", false);
  for (const fs::path& p : tir_files(kGoldenDir / "diagnostics")) out.push_back(p);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Diagnostics, FailTest, testing::ValuesIn(fail_files()),
                         [](const testing::TestParamInfo<fs::path>& info) {
                           return sanitize(info.param.stem().string()) + (is_tir_input(info.param) ? "_tir" : "");
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FailTest);

TEST(DiagnosticCoverage, FailTestsAreNamedFail) {
  for (const auto& e : fs::directory_iterator(kGoldenDir / "diagnostics")) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(starts_with(name, "fail_") && (e.path().extension() == ".iris" || is_tir_input(e.path())))
        << "diagnostics/" << name << ": expected fail_<something>.iris (or .tir, a TIR listing)";
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

// Every sample and dsl/ file, for each of `targets`.
std::vector<CubinCase> sample_cases(std::initializer_list<const char*> targets) {
  std::vector<CubinCase> out;
  for (const char* dir : {"samples", "dsl"}) {
    for (const fs::path& p : iris_files(kSourceDir / dir, true)) {
      for (const char* t : targets) {
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

bool source_only() { return std::getenv("IRIS_GOLDEN_SOURCE_ONLY") != nullptr; }

// Whether the file declares a kernel (a library file such as dsl/ccl/common.iris holds
// functions only).
bool has_kernels(const std::string& text) {
  return text.starts_with("kernel ") || text.find("\nkernel ") != std::string::npos;
}

// Compiles a case's file for its target to a code object (to its kernel source alone
// under IRIS_GOLDEN_SOURCE_ONLY), into *text and *r.
void compile_case(const CubinCase& c, std::string* text, irisc::CompileResult* r) {
  *text = read_file(c.file);
  irisc::CompileOptions o;
  std::string err;
  ASSERT_TRUE(apply_args(read_directives(*text).args, o, nullptr, &err)) << err;
  o.target = c.target;
  o.stop_after = source_only() ? irisc::Stage::source : irisc::Stage::code_object;
  const irisc::SourceBuffer src(c.file.filename().string(), *text);
  ASSERT_TRUE(compile_no_throw(src, o, r));
  ASSERT_TRUE(r->ok) << c.file << " for " << c.target << ":\n" << r->rendered_diagnostics << r->toolchain_log;
}

// The kernel source alone (IRIS_GOLDEN_SOURCE_ONLY): made without a diagnostic, with a
// __global__ function exactly where the file has kernels.
void expect_source(const CubinCase& c) {
  std::string text;
  irisc::CompileResult r;
  compile_case(c, &text, &r);
  if (testing::Test::HasFatalFailure()) return;
  EXPECT_TRUE(r.diagnostics.empty()) << r.rendered_diagnostics;
  EXPECT_EQ(r.kernel_source.find("__global__") != std::string::npos, has_kernels(text)) << "kernels in the source";
}

void expect_cubin(const CubinCase& c) {
  if (source_only()) return expect_source(c);
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "NVRTC unavailable: " << why;
  std::string text;
  irisc::CompileResult r;
  compile_case(c, &text, &r);
  if (testing::Test::HasFatalFailure()) return;
  EXPECT_TRUE(r.diagnostics.empty()) << r.rendered_diagnostics;
  EXPECT_EQ(r.assembly.find(".entry") != std::string::npos, has_kernels(text)) << "kernel entries in the PTX";
  EXPECT_TRUE(has_elf_magic(r.code_object)) << "the cubin is not an ELF image (" << r.code_object.size() << " bytes)";
}

// AMD: every sample and dsl/ file gives an AMDGPU code object for gfx942 and gfx90a: an
// ELF for EM_AMDGPU holding each kernel, its descriptor (.kd) and the exported launch
// contract (iris_metadata). SKIPPED where the AMD tools are missing.
void expect_code_object(const CubinCase& c) {
  if (source_only()) return expect_source(c);
  std::string why;
  const irisc::Target* target = irisc::find_target(c.target);
  ASSERT_NE(target, nullptr);
  const bool comgr = irisc::toolchain_of(*target) == irisc::ToolchainKind::comgr;
  if (comgr ? !irisc::toolchain::comgr_available(c.target, &why) : !irisc::toolchain::amdgpu_toolchain_available(&why)) {
    GTEST_SKIP() << "AMD toolchain (" << (comgr ? "comgr" : "clang") << ") unavailable: " << why;
  }
  std::string text;
  irisc::CompileResult r;
  compile_case(c, &text, &r);
  if (testing::Test::HasFatalFailure()) return;
  ASSERT_TRUE(has_elf_magic(r.code_object)) << "the code object is not an ELF image (" << r.code_object.size() << " bytes)";
  ASSERT_GT(r.code_object.size(), 20u);
  const unsigned machine = static_cast<unsigned>(r.code_object[18]) | static_cast<unsigned>(r.code_object[19]) << 8;
  EXPECT_EQ(machine, 224u) << "e_machine is not EM_AMDGPU";
  // Code object v5 (EI_ABIVERSION 3): the device library reads the grid's workgroup counts
  // from v5's hidden arguments. e_flags names the processor (EF_AMDGPU_MACH).
  EXPECT_EQ(static_cast<unsigned>(r.code_object[8]), 3u) << "not code object v5";
  ASSERT_GT(r.code_object.size(), 52u);
  const unsigned mach = static_cast<unsigned>(r.code_object[48]);
  EXPECT_EQ(mach, c.target == "gfx942" ? 0x4cu : 0x3fu) << "EF_AMDGPU_MACH";
  const std::string bytes(reinterpret_cast<const char*>(r.code_object.data()), r.code_object.size());
  const irisc::contract::Module contract = irisc::contract::read(r.metadata);
  for (const auto& k : contract.kernels) {
    EXPECT_NE(bytes.find(k.symbol + std::string(".kd") + '\0'), std::string::npos) << "no descriptor for " << k.symbol;
  }
  EXPECT_NE(bytes.find(std::string("iris_metadata") + '\0'), std::string::npos) << "no iris_metadata symbol";
  EXPECT_NE(bytes.find(r.metadata), std::string::npos) << "the launch contract is not in the code object";
}

class SampleCodeObject : public testing::TestWithParam<CubinCase> {};
TEST_P(SampleCodeObject, CompilesForAmdgpu) { expect_code_object(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Samples, SampleCodeObject, testing::ValuesIn(sample_cases({"gfx942", "gfx90a"})),
                         [](const testing::TestParamInfo<CubinCase>& info) { return info.param.name; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SampleCodeObject);

class SampleCubin : public testing::TestWithParam<CubinCase> {};
TEST_P(SampleCubin, CompilesWithNvrtc) { expect_cubin(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Samples, SampleCubin, testing::ValuesIn(sample_cases({"sm_90a", "sm_80"})),
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


}  // namespace
