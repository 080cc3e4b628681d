// The AMDGPU toolchain (see amdgpu.hpp).
#include "compiler/toolchain/amdgpu.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "compiler/toolchain/device_headers.hpp"
#include "compiler/toolchain/process_env.hpp"

extern char** environ;

namespace irisc::toolchain {
namespace {

namespace fs = std::filesystem;

struct Tools {
  std::string clang, lld, device_libs;
  std::string why_not;  // empty when all were found
  std::string clang_version;
};

// Runs argv with stdout and stderr into `log_file`; the exit status, or -1 when it
// could not start.
int run(const std::vector<std::string>& argv, const fs::path& log_file) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A private temporary folder, removed on scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string base = env("TMPDIR");
    if (base.empty()) base = "/tmp";
    std::string t = base + "/irisc-amdgpu-XXXXXX";
    if (const char* d = ::mkdtemp(t.data())) path = d;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

struct DeviceLibs {
  std::string dir;
  std::string why_not;  // empty when found
};

const DeviceLibs& device_libs() {
  static const DeviceLibs libs = [] {
    DeviceLibs l;
    std::vector<std::string> dirs;
    if (!env("IRISC_ROCM_DEVICE_LIBS").empty()) {
      dirs.push_back(env("IRISC_ROCM_DEVICE_LIBS"));
    } else {
      dirs = {"/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", "/opt/rocm/amdgcn/bitcode"};
      std::error_code ec;
      for (const auto& e : fs::directory_iterator("/opt/rocm/lib/llvm/lib/clang", ec)) {
        dirs.push_back((e.path() / "lib/amdgcn/bitcode").string());
      }
    }
    for (const std::string& d : dirs) {
      if (fs::exists(fs::path(d) / "ocml.bc")) {
        l.dir = d;
        return l;
      }
    }
    l.why_not = "no ROCm device libraries (ocml.bc) in " + dirs.front() + (dirs.size() > 1 ? " or the ROCm folders" : "") +
                ": install rocm-device-libs (Debian) or set IRISC_ROCM_DEVICE_LIBS";
    return l;
  }();
  return libs;
}

const Tools& tools() {
  static const Tools t = [] {
    Tools t;
    std::string clang = env("IRISC_CLANG");
    if (clang.empty()) clang = on_path("clang-19");
    for (const char* c : {"/usr/lib/llvm-19/bin/clang", "/opt/rocm/llvm/bin/clang"}) {
      if (clang.empty() && executable(c)) clang = c;
    }
    if (clang.empty() || !executable(clang)) {
      t.why_not = clang.empty() ? "no clang for AMDGPU: install clang-19 (Debian: apt-get install clang-19 lld-19) or set IRISC_CLANG"
                                : "IRISC_CLANG=" + clang + " is not an executable";
      return t;
    }
    t.clang = clang;
    std::string lld = env("IRISC_LLD");
    if (lld.empty()) {
      const fs::path beside = fs::path(fs::canonical(clang)).parent_path() / "ld.lld";
      lld = executable(beside) ? beside.string() : on_path("ld.lld-19");
    }
    if (lld.empty() || !executable(lld)) {
      t.why_not = lld.empty() ? "no ld.lld beside " + clang + ": install lld-19 (Debian) or set IRISC_LLD"
                              : "IRISC_LLD=" + lld + " is not an executable";
      return t;
    }
    t.lld = lld;
    if (const DeviceLibs& libs = device_libs(); !libs.why_not.empty()) {
      t.why_not = libs.why_not;
      return t;
    } else {
      t.device_libs = libs.dir;
    }
    // clang's version line, for cache keys.
    if (TempDir tmp; !tmp.path.empty() && run({clang, "--version"}, tmp.path / "version.txt") == 0) {
      const std::string v = read_text(tmp.path / "version.txt");
      t.clang_version = v.substr(0, v.find('\n'));
    }
    return t;
  }();
  return t;
}

// The device library's ISA control library for `arch`: its own, else the nearest
// earlier stepping of the same family the installed libraries have (Debian's ROCm 5.2
// predates gfx942 and has 940; ocml's code paths are the same for the family).
std::string isa_library(const std::string& dir, const std::string& arch) {
  const std::string digits = arch.substr(3);  // "942", "90a"
  const fs::path own = fs::path(dir) / ("oclc_isa_version_" + digits + ".bc");
  if (fs::exists(own)) return own.string();
  std::string stepping = digits;
  while (!stepping.empty() && stepping.back() > '0') {
    --stepping.back();
    const fs::path p = fs::path(dir) / ("oclc_isa_version_" + stepping + ".bc");
    if (fs::exists(p)) return p.string();
  }
  return "";
}

}  // namespace

std::vector<std::string> device_library_bitcode(const std::string& arch, std::string* why_not) {
  const DeviceLibs& l = device_libs();
  if (!l.why_not.empty()) {
    if (why_not) *why_not = l.why_not;
    return {};
  }
  const std::string isa = isa_library(l.dir, arch);
  if (isa.empty()) {
    if (why_not) *why_not = "the device libraries in " + l.dir + " have no oclc_isa_version library for " + arch;
    return {};
  }
  return {l.dir + "/ocml.bc", l.dir + "/ockl.bc", isa, l.dir + "/oclc_finite_only_off.bc", l.dir + "/oclc_daz_opt_off.bc",
          l.dir + "/oclc_unsafe_math_off.bc", l.dir + "/oclc_correctly_rounded_sqrt_on.bc",
          l.dir + "/oclc_wavefrontsize64_on.bc", l.dir + "/oclc_abi_version_500.bc"};
}

std::vector<std::string> hip_bitcode_flags(const AmdgpuCompileOptions& o, std::string* why_not) {
  const std::vector<std::string> libs = device_library_bitcode(o.arch, why_not);
  if (libs.empty()) return {};
  // No loop vectorizer: the device library vectorizes its accesses itself, and LLVM 19's
  // AMDGPU backend crashes ("SI Fix SGPR copies") on the <N x i1> masks it makes of a
  // tile's per-slot bounds checks.
  std::vector<std::string> flags = {"-O" + std::to_string(o.opt_level), "-std=c++20", "-nogpuinc", "-fno-vectorize"};
  for (const std::string& d : o.include_dirs) flags.insert(flags.end(), {"-I", d});
  if (o.line_info) flags.push_back("-gline-tables-only");
  for (const std::string& lib : libs) flags.insert(flags.end(), {"-Xclang", "-mlink-builtin-bitcode", "-Xclang", lib});
  return flags;
}

bool amdgpu_toolchain_available(std::string* why_not) {
  const Tools& t = tools();
  if (why_not) *why_not = t.why_not;
  return t.why_not.empty();
}

std::string amdgpu_toolchain_identity() {
  const Tools& t = tools();
  if (!t.why_not.empty()) return "";
  return t.clang_version + "; " + t.clang + "; " + t.lld + "; " + t.device_libs;
}

AmdgpuCompileResult compile_hip(std::string_view source, std::string_view name, const AmdgpuCompileOptions& o) {
  AmdgpuCompileResult r;
  const Tools& t = tools();
  if (!t.why_not.empty()) {
    r.log = "cannot compile for " + o.arch + ": " + t.why_not;
    return r;
  }
  std::string why;
  const std::vector<std::string> flags = hip_bitcode_flags(o, &why);
  if (flags.empty()) {
    r.log = "cannot compile for " + o.arch + ": " + why;
    return r;
  }
  TempDir tmp;
  if (tmp.path.empty()) {
    r.log = "cannot create a temporary folder for the AMDGPU toolchain";
    return r;
  }
  // The embedded device library, as files clang can include.
  for (const EmbeddedHeader& h : device_headers()) {
    const fs::path p = tmp.path / "include" / h.name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << h.text;
  }
  const std::string file = name.empty() ? "iris_jit.hip" : fs::path(std::string(name)).filename().string();
  const fs::path src = tmp.path / file, bc = tmp.path / "kernels.bc", obj = tmp.path / "kernels.o",
                 asm_file = tmp.path / "kernels.s", co = tmp.path / "kernels.co", log = tmp.path / "log.txt";
  std::ofstream(src, std::ios::binary) << source;
  const std::string opt = "-O" + std::to_string(o.opt_level);
  std::vector<std::string> front = {t.clang, "-x", "hip", "--offload-arch=" + o.arch, "--cuda-device-only", "-nogpulib",
                                    "-emit-llvm", "-c", "-I", (tmp.path / "include").string()};
  front.insert(front.end(), flags.begin(), flags.end());
  front.insert(front.end(), {src.string(), "-o", bc.string()});
  const auto failed = [&](const std::string& step) {
    std::string text = read_text(log);
    // Diagnostics name the source file by its path in the temporary folder.
    for (std::size_t at; (at = text.find(src.string())) != std::string::npos;) text.replace(at, src.string().size(), file);
    r.log = text.empty() ? step + " failed" : text;
    return r;
  };
  if (run(front, log) != 0) return failed("clang (HIP to bitcode)");
  // The backend steps optimize the bitcode again: no loop vectorizer there either.
  const std::vector<std::string> target = {t.clang,    "-target", "amdgcn-amd-amdhsa", "-mcpu=" + o.arch,
                                           "-nogpulib", opt,      "-fno-vectorize"};
  if (o.want_assembly) {
    std::vector<std::string> a = target;
    a.insert(a.end(), {"-S", bc.string(), "-o", asm_file.string()});
    if (run(a, log) != 0) return failed("clang (bitcode to assembly)");
    r.assembly = read_text(asm_file);
  }
  if (o.want_code_object) {
    std::vector<std::string> c = target;
    c.insert(c.end(), {"-c", bc.string(), "-o", obj.string()});
    if (run(c, log) != 0) return failed("clang (bitcode to a relocatable object)");
    if (run({t.lld, "-m", "elf64_amdgpu", "--no-undefined", "-shared", obj.string(), "-o", co.string()}, log) != 0) {
      return failed("ld.lld (the executable code object)");
    }
    r.code_object = to_bytes(read_text(co));
  }
  r.log = read_text(log);
  r.ok = true;
  return r;
}

}  // namespace irisc::toolchain
