// irisc: the .iris compiler's command line (clang-like).
//   irisc file.iris [-o out] [--target=sm_90a|gfx942|...] [--emit=STAGE]
//         STAGE: tokens, ast, tir, cuda|hip (the kernel source), ptx|asm (assembly),
//         cubin|co (the code object, the default), header, metadata
//         [-DNAME=VALUE] [-I dir] [-O0..3] [-g] [-Werror] [--tma-stores] [--dump-ir-after=PASS] [--time-passes]
//   irisc file.tir [--run-pass=PASS] --emit=tir    a TIR listing: read, verify, run PASS (or
//         nothing), print; --emit=cuda and later stages run the whole pipeline first
// Exit codes: 0 success, 1 compile errors, 2 bad usage, 3 output not writable.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "compiler/contract/launch_contract.hpp"
#include "compiler/driver/compile.hpp"
#include "compiler/target/target.hpp"
#include "compiler/passes/pipeline.hpp"
#include "compiler/contract/host_code.hpp"
#include "emit_header.hpp"

namespace {

bool write_file(const std::string& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"irisc: compiles .iris tile kernels (compute + communication over a symmetric heap) to GPU code",
               "irisc"};
  app.set_version_flag("--version", std::string("irisc ") + irisc::irisc_version());
  std::string input, output, target = "sm_90a", emit, dump_after, color = "auto", run_pass;
  std::vector<std::string> defines, includes, kernels;
  int opt = 3;
  bool werror = false, time_passes = false, line_info = false, list_diags = false, trace_events = false,
       tma_stores = false;
  app.add_option("input", input, "the .iris source file, or a .tir listing (as --emit=tir writes it)");
  app.add_option("-o", output, "output file (default: <input stem>.<ext>; '-' for stdout)");
  std::vector<std::string> target_names;
  std::string target_help = "target:";
  for (const irisc::Target& t : irisc::all_targets()) {
    target_names.emplace_back(t.name);
    target_help += std::string("\n  ") + t.name + ": " + t.gpus;
  }
  app.add_option("--target", target, target_help)->check(CLI::IsMember(target_names));
  app.add_option("--emit", emit,
                 "what to produce: tokens, ast, tir; the kernel source (cuda, or hip for AMD targets); assembly "
                 "(ptx, or asm); the code object (cubin, or co; the default); header; metadata")
      ->check(CLI::IsMember({"tokens", "ast", "tir", "cuda", "hip", "ptx", "asm", "cubin", "co", "header", "metadata"}));
  app.add_option("-D", defines, "set a compile-time parameter: -DNAME=VALUE")->allow_extra_args(false);
  app.add_option("--kernel", kernels,
                 "compile only this kernel of the file (repeat for more; the file is still checked whole)")
      ->allow_extra_args(false);
  app.add_option("-I", includes, "where import looks, and an extra include directory for the CUDA or HIP toolchain")->allow_extra_args(false);
  app.add_option("-O", opt, "optimization level 0-3 (default 3)")->check(CLI::Range(0, 3));
  app.add_flag("-g", line_info, "keep source line information in the assembly and the code object");
  app.add_flag("--trace-events", trace_events,
               "kernels record trace events (programs, puts, signals, waits with their lines) when the job "
               "traces (IRIS_TRACE); without it they carry no trace code");
  app.add_flag("--Werror,-W", werror, "treat warnings as errors");
  app.add_flag("--tma-stores", tma_stores,
               "the sm_90a GEMM's epilogue stores its 16-bit tiles by TMA where nothing in it waits for them "
               "(the launch passes each such tensor's map; the JIT's IRIS_TMA_STORES=1)");
  app.add_option("--dump-ir-after", dump_after, "print the TIR after this pass (or 'all')");
  app.add_flag("--time-passes", time_passes, "print the time each pass took");
  app.add_option("--run-pass", run_pass,
                 "run only this pass on the checked TIR and print the result (with --emit=tir; per-pass tests)");
  app.add_option("--color", color, "colour diagnostics: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_flag("--list-diagnostics", list_diags, "list every diagnostic id and exit");
  app.footer(
      "Exit codes: 0 success, 1 compile errors, 2 bad usage, 3 output not writable.\n"
      "Environment: IRISC_NVRTC_PATH (libnvrtc to use), CUDA_HOME (CUDA headers); for AMD targets IRISC_CLANG,\n"
      "IRISC_LLD and IRISC_ROCM_DEVICE_LIBS (default: clang-19, lld-19 and Debian's rocm-device-libs).");
  // -Werror is spelled the clang way; CLI11 needs it as a long option.
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    args.push_back(a == "-Werror" ? "--Werror" : a);
  }
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (list_diags) {
    for (irisc::DiagnosticKind k : irisc::all_diagnostic_kinds()) {
      const auto& info = irisc::diagnostic_info(k);
      std::printf("%-28s %s\n", info.id, info.format);
    }
    return 0;
  }
  if (input.empty()) {
    std::fprintf(stderr, "irisc: error: no input file (see --help)\n");
    return 2;
  }
  if (std::error_code ec; !output.empty() && output != "-" && std::filesystem::equivalent(input, output, ec)) {
    std::fprintf(stderr, "irisc: error: -o %s is the input file; writing it would overwrite the source\n",
                 output.c_str());
    return 2;
  }
  for (const auto& [flag, pass, all_ok] : {std::tuple{"--dump-ir-after", dump_after, true}, {"--run-pass", run_pass, false}}) {
    if (pass.empty() || (all_ok && pass == "all")) continue;
    const auto& names = irisc::pass_names();
    if (std::find(names.begin(), names.end(), pass) == names.end()) {
      std::string all;
      for (const auto& n : names) all += " " + n;
      std::fprintf(stderr, "irisc: error: %s: no pass named '%s' (passes:%s%s)\n", flag, pass.c_str(), all.c_str(),
                   all_ok ? ", or all" : "");
      return 2;
    }
  }
  // The stage names of the target's vendor: cuda/ptx/cubin for NVIDIA, hip/asm/co for AMD.
  const irisc::Target* tgt = irisc::find_target(target);
  const bool amd = tgt && tgt->vendor == irisc::Vendor::amd;
  if (emit.empty()) emit = amd ? "co" : "cubin";
  static const std::map<std::string, std::string> amd_name = {{"cuda", "hip"}, {"ptx", "asm"}, {"cubin", "co"}};
  for (const auto& [nv, am] : amd_name) {
    if (emit == (amd ? nv : am) && tgt && tgt->vendor != irisc::Vendor::host) {
      std::fprintf(stderr, "irisc: error: --emit=%s is for %s targets; for %s use --emit=%s\n", emit.c_str(),
                   amd ? "NVIDIA" : "AMD", target.c_str(), (amd ? am : nv).c_str());
      return 2;
    }
  }
  const bool tir_input = std::filesystem::path(input).extension() == ".tir";
  if (tir_input && (emit == "tokens" || emit == "ast")) {
    std::fprintf(stderr, "irisc: error: a .tir input has no %s; it starts at --emit=tir\n", emit.c_str());
    return 2;
  }
  if (!run_pass.empty() && emit != "tir") {
    std::fprintf(stderr, "irisc: error: --run-pass runs one pass of the pipeline, so it goes with --emit=tir\n");
    return 2;
  }
  irisc::CompileOptions o;
  o.target = target;
  o.opt_level = opt;
  o.line_info = line_info;
  o.trace_events = trace_events;
  o.include_dirs = includes;
  o.kernels = kernels;
  o.warnings_as_errors = werror;
  o.tma_stores = tma_stores;
  o.dump_ir_after = dump_after;
  o.time_passes = time_passes;
  o.only_pass = run_pass;
  for (const std::string& d : defines) {
    std::string name;
    std::int64_t value = 0;
    if (!irisc::parse_define(d, &name, &value)) {
      std::fprintf(stderr, "irisc: error: bad -D definition '%s': expected NAME=VALUE with an integer or a type name as VALUE [BadDefine]\n",
                   d.c_str());
      return 2;
    }
    o.defines[name] = value;
  }
  static const std::map<std::string, irisc::Stage> stages = {
      {"tokens", irisc::Stage::tokens}, {"ast", irisc::Stage::ast},   {"tir", irisc::Stage::tir},
      {"cuda", irisc::Stage::source},   {"hip", irisc::Stage::source},         {"ptx", irisc::Stage::assembly},
      {"asm", irisc::Stage::assembly},  {"cubin", irisc::Stage::code_object},  {"co", irisc::Stage::code_object},
      {"header", irisc::Stage::code_object},  {"metadata", irisc::Stage::source}};
  o.stop_after = stages.at(emit);
  // The host target's contract comes with its code object (there is no kernel source).
  if (emit == "metadata" && target == "host") o.stop_after = irisc::Stage::code_object;

  std::string read_error;
  auto source = irisc::SourceBuffer::from_file(input, &read_error);
  if (!source) {
    std::fprintf(stderr, "irisc: error: cannot read %s [FileNotReadable]\n", (read_error.empty() ? input : read_error).c_str());
    return 1;
  }
  irisc::CompileResult r = tir_input ? irisc::compile_tir(*source, o) : irisc::compile(*source, o);
  const bool use_color = color == "always" || (color == "auto" && isatty(2));
  std::fputs((use_color ? r.rendered_diagnostics_color : r.rendered_diagnostics).c_str(), stderr);
  std::fputs(r.pass_dumps.c_str(), stderr);
  std::fputs(r.pass_timing.c_str(), stderr);
  if (!r.ok) {
    if (r.errors) std::fprintf(stderr, "%d error(s)%s\n", r.errors, r.warnings ? (", " + std::to_string(r.warnings) + " warning(s)").c_str() : "");
    return 1;
  }

  const std::string stem = std::filesystem::path(input).stem().string();
  std::string text;
  const void* data = nullptr;
  std::size_t size = 0;
  std::string default_out;
  if (emit == "tokens") text = r.tokens;
  else if (emit == "ast") text = r.ast;
  else if (emit == "tir") text = r.tir;
  else if (emit == "cuda" || emit == "hip") text = r.kernel_source;
  else if (emit == "ptx" || emit == "asm") text = r.assembly;
  else if (emit == "metadata") text = irisc::contract::write(irisc::contract::read(r.metadata), 2) + "\n";
  else if (emit == "header") {
    // The header carries the host code object too, so that the same binary runs on the
    // host backend (IRIS_BACKEND=host): the same source compiled for the host target.
    irisc::CompileOptions ho = o;
    ho.target = "host";
    ho.stop_after = irisc::Stage::code_object;
    const irisc::CompileResult hr = irisc::compile(*source, ho);
    if (!hr.ok) {
      std::fputs(hr.rendered_diagnostics.c_str(), stderr);
      return 1;
    }
    text = irisc::emit_header(r, stem, target,
                              std::string(reinterpret_cast<const char*>(hr.code_object.data()), hr.code_object.size()));
    default_out = stem + ".iris.hpp";
  } else {
    data = r.code_object.data();
    size = r.code_object.size();
    default_out = stem + (target == "host" ? ".host" : amd ? ".co" : ".cubin");
  }
  if (!data) {
    data = text.data();
    size = text.size();
  }
  if (output.empty()) output = default_out.empty() ? "-" : default_out;
  if (output == "-") {
    std::fwrite(data, 1, size, stdout);
    return 0;
  }
  if (!write_file(output, data, size)) {
    std::fprintf(stderr, "irisc: error: cannot write %s\n", output.c_str());
    return 3;
  }
  return 0;
}
