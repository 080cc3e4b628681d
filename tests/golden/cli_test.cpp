// The irisc command line: options, --emit kinds, exit codes, diagnostics on stderr.
#include "golden_support.hpp"

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

}  // namespace
