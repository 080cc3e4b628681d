// Hostile inputs (deep nesting, random bytes, invalid UTF-8, huge literals), known-bug
// repros and fuzzer regressions: irisc must report diagnostics, never crash.
#include "golden_support.hpp"

#include "compiler/toolchain/amdgpu.hpp"

using namespace golden;

namespace {


// =========================================================================================
// Robustness: hostile inputs end in diagnostics, never in a crash or an exception.
// =========================================================================================

void expect_rejected(const std::string& name, const std::string& text) {
  SCOPED_TRACE(name);
  const irisc::SourceBuffer src("robustness/" + name + ".iris", text);
  irisc::CompileOptions o;
  o.stop_after = irisc::Stage::source;
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
    o.stop_after = irisc::Stage::assembly;
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
    o.stop_after = irisc::Stage::assembly;
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
  o.stop_after = irisc::Stage::source;
  irisc::CompileResult r;
  ASSERT_TRUE(compile_no_throw(src, o, &r));
  ASSERT_TRUE(r.ok) << r.rendered_diagnostics;
  EXPECT_EQ(r.kernel_source.find("[s] * s)"), std::string::npos) << "the slot counter shadows parameter s:\n" << r.kernel_source;
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
    o.stop_after = irisc::Stage::assembly;
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


// Inputs the fuzzer once found crashing (or miscompiling): each must now compile to PTX
// (amdgpu_*: to a gfx942 code object) or stop with user diagnostics -- never with a
// compiler-bug diagnostic.
TEST(FuzzRegressions, EveryInputCompilesOrIsRejectedCleanly) {
  std::string why;
  const bool have_nvrtc = irisc::toolchain::nvrtc_available(&why);
  const bool have_amdgpu = irisc::toolchain::amdgpu_toolchain_available(&why);
  int seen = 0;
  for (const auto& e : fs::directory_iterator(kSourceDir / "tests/fuzz/regressions")) {
    if (e.path().extension() != ".iris") continue;
    ++seen;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    irisc::SourceBuffer src(e.path().filename().string(), os.str());
    irisc::CompileOptions o;
    o.stop_after = have_nvrtc ? irisc::Stage::assembly : irisc::Stage::source;
    if (e.path().filename().string().starts_with("amdgpu_")) {
      o.target = "gfx942";
      o.stop_after = have_amdgpu ? irisc::Stage::code_object : irisc::Stage::source;
    }
    const irisc::CompileResult r = irisc::compile(src, o);
    for (const irisc::Diagnostic& d : r.diagnostics) {
      EXPECT_NE(d.kind, irisc::DiagnosticKind::ToolchainFailed) << e.path() << ":\n" << r.rendered_diagnostics;
    }
    if (e.path().filename() == "passes_dead_let_drops_nested_atomic.iris") {
      EXPECT_NE(r.kernel_source.find("atomic_add"), std::string::npos) << "the atomic in the index was dropped";
    }
  }
  EXPECT_GT(seen, 0);
}

}  // namespace
