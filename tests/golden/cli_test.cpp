// The irisc command line: options, --emit kinds, exit codes, diagnostics on stderr.
#include "golden_support.hpp"

#include <regex>

using namespace golden;

namespace {



// A small valid input with a compile-time parameter B.

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

// A file name is the user's to choose: in the generated header it stays inside its
// string literal (quotes and backslashes escaped), never ending it and going on as code.
TEST(Cli, EmitHeaderEscapesTheFileName) {
  SKIP_WITHOUT_NVRTC();
  TempDir tmp;
  const fs::path src = tmp.path() / "k\"); int pwned = 1; (\"\\.iris";
  fs::copy_file(kCliInput, src);
  const fs::path out = tmp.path() / "k.iris.hpp";
  const CliRun r = run_irisc({src.string(), "--emit=header", "-o", out.string()});
  EXPECT_EQ(r.code, 0) << show(r);
  const std::string h = read_file(out);
  EXPECT_NE(h.find("k\\\"); int pwned = 1; (\\\"\\\\ (embedded)\")"), std::string::npos) << h.substr(0, 3000);
  EXPECT_EQ(h.find("k\"); int pwned"), std::string::npos) << h.substr(0, 3000);
}

// A chain of imports deeper than irisc follows is a diagnostic, not a crash (20000
// nested imports overflowed the stack).
TEST(Cli, ImportsNestedTooDeepAreReported) {
  TempDir tmp;
  constexpr int kFiles = 200;
  for (int i = 0; i < kFiles; ++i) {
    std::ofstream f(tmp.path() / ("m" + std::to_string(i) + ".iris"));
    if (i + 1 < kFiles) f << "import \"m" << i + 1 << ".iris\";\n";
    f << "fn h" << i << "(n: int) { return n; }\n";
    if (i == 0) f << "kernel k(y: tensor<i64>[N]) { store(y[0], h0(1)); }\n";
  }
  const CliRun r = run_irisc({(tmp.path() / "m0.iris").string(), "--emit=tir"});
  EXPECT_EQ(r.code, 1) << show(r);
  EXPECT_NE(r.err.find("imports nest more than 128 deep"), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("[NestingTooDeep]"), std::string::npos) << show(r);
}

// A type parameter given an integer (-DT=7) is reported once: its uses say nothing more;
// and mutual recursion names the way round.
TEST(Cli, DiagnosticsSayItOnceAndSayItRight) {
  TempDir tmp;
  const fs::path typed = tmp.path() / "typed.iris";
  std::ofstream(typed) << "kernel k<T: type = f32>(x: tensor<T>[N]) { store(x[0], 1 as T); }\n";
  const CliRun r = run_irisc({typed.string(), "--emit=tir", "-DT=7"});
  EXPECT_EQ(r.code, 1) << show(r);
  EXPECT_NE(r.err.find("[DefineKindMismatch]"), std::string::npos) << show(r);
  EXPECT_EQ(r.err.find("unknown type 'T'"), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("1 error(s)"), std::string::npos) << show(r);
  const CliRun rec = run_irisc({(kGoldenDir / "diagnostics" / "fail_recursive_call.iris").string(), "--emit=tir"});
  EXPECT_NE(rec.err.find("'ping' calls itself through pong;"), std::string::npos) << show(rec);
  EXPECT_NE(rec.err.find("'down' calls itself;"), std::string::npos) << show(rec);
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

// -o naming the input (by any path) is refused before anything is written: the source
// stays as it was.
TEST(Cli, OutputThatIsTheInputIsRefused) {
  TempDir tmp;
  const fs::path src = tmp.path() / "k.iris";
  fs::copy_file(kCliInput, src);
  const auto before = fs::file_size(src);
  const CliRun r = run_irisc({src.string(), "--emit=cuda", "-o", (tmp.path() / "." / "k.iris").string()});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_NE(r.err.find("is the input file"), std::string::npos) << show(r);
  EXPECT_EQ(fs::file_size(src), before);
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

// ---- TIR listings (.tir): irisc reads them as TIR -------------------------------------------

// The line after `// Generated by irisc from NAME.`, which names the input.
std::string without_first_line(const std::string& s) { return s.substr(std::min(s.size(), s.find('\n') + 1)); }

// Generated CUDA without what only a source file has: the lines of trace events and the
// file:line of wait sites (a TIR listing carries no positions).
std::string without_source_positions(const std::string& s) {
  static const std::regex site("WaitSite\\{\"kernel '([^']*)'[^\"]*\"");
  static const std::regex trace_line("(TraceKind::[a-z_]+, [0-9]+u, )[0-9]+");
  return std::regex_replace(std::regex_replace(s, site, "WaitSite{\"kernel '$1'\""), trace_line, "$1?");
}

TEST(Cli, TirInputRunsOnePass) {
  const fs::path in = kGoldenDir / "passes" / "fold_constants.tir";
  const CliRun r = run_irisc({in.string(), "--run-pass=fold-constants", "--emit=tir"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(r.out, read_file(in.string() + ".passes")) << show(r);
}

TEST(Cli, TirInputWithoutAPassIsReadVerifyPrint) {
  for (const char* name : {"tir/tiles_matmul.iris.tir", "tir/values_everywhere.iris.tir", "passes/fold_constants.tir"}) {
    const fs::path in = kGoldenDir / name;
    const CliRun r = run_irisc({in.string(), "--emit=tir"});
    EXPECT_EQ(r.code, 0) << name << "\n" << show(r);
    if (fs::path(name).parent_path() == "tir") {
      EXPECT_EQ(r.out, read_file(in)) << name << ": a listing of the compiler's prints as itself";
    } else {
      EXPECT_EQ(r.out.rfind("kernel fold(", 0), 0u) << "comments are dropped\n" << show(r);
    }
  }
}

// From the listing --emit=tir writes, the whole pipeline and codegen give the CUDA the
// source gives.
TEST(Cli, TirInputCompilesToTheSameCudaAsItsSource) {
  TempDir tmp;
  for (const char* name : {"blocks_loop", "roles", "signal_wait", "tiles_matmul"}) {
    const fs::path src = kGoldenDir / "cuda" / (std::string(name) + ".iris");
    const fs::path listing = tmp.path() / (std::string(name) + ".tir");
    const CliRun tir = run_irisc({src.string(), "--emit=tir", "-o", listing.string()});
    ASSERT_EQ(tir.code, 0) << show(tir);
    const CliRun from_tir = run_irisc({listing.string(), "--emit=cuda"});
    ASSERT_EQ(from_tir.code, 0) << name << "\n" << show(from_tir);
    const CliRun from_src = run_irisc({src.string(), "--emit=cuda"});
    ASSERT_EQ(from_src.code, 0) << show(from_src);
    EXPECT_EQ(without_source_positions(without_first_line(from_tir.out)),
              without_source_positions(without_first_line(from_src.out)))
        << name;
  }
}

TEST(Cli, BadTirIsALocatedDiagnostic) {
  TempDir tmp;
  const fs::path p = tmp.path() / "bad.tir";
  ASSERT_TRUE(write_file(p, "kernel k(x: tensor<f32>[#N]) {\n  store x[0:int] <- 1:f33\n}\n"));
  const CliRun r = run_irisc({p.string(), "--emit=tir", "--color=never"});
  EXPECT_EQ(r.code, 1) << show(r);
  EXPECT_EQ(r.signal, 0) << show(r);
  EXPECT_NE(r.err.find("bad.tir:2:23: error: malformed TIR: unknown element type 'f33' [BadTir]"), std::string::npos)
      << show(r);
  EXPECT_TRUE(r.out.empty()) << show(r);
}

TEST(Cli, TirInputHasNoTokensOrAst) {
  const fs::path in = kGoldenDir / "tir" / "atomics.iris.tir";
  for (const char* emit : {"--emit=tokens", "--emit=ast"}) {
    const CliRun r = run_irisc({in.string(), emit});
    EXPECT_EQ(r.code, 2) << emit << "\n" << show(r);
  }
}

TEST(Cli, DefineOnTirInputIsAWarning) {
  const CliRun r = run_irisc({(kGoldenDir / "tir" / "atomics.iris.tir").string(), "--emit=tir", "-DB=4"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("[UnknownDefine]"), std::string::npos) << show(r);
}

}  // namespace
