// Loads NVRTC (see nvrtc_api.def) and compiles CUDA C++ with it (see nvrtc.hpp).
#include "compiler/toolchain/nvrtc.hpp"

#include <dlfcn.h>
#include <nvrtc.h>  // types only: the library is dlopen'd
#include <sys/stat.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "compiler/toolchain/device_headers.hpp"
#include "compiler/toolchain/process_env.hpp"

namespace irisc::toolchain {
namespace {

#define IRISC_STRINGIZE2(x) #x
#define IRISC_STRINGIZE(x) IRISC_STRINGIZE2(x)

struct NvrtcApi {
#define IRISC_NVRTC_REQUIRED(name) decltype(&::name) name = nullptr;
#define IRISC_NVRTC_OPTIONAL(name) decltype(&::name) name = nullptr;
#include "compiler/toolchain/nvrtc_api.def"
};

struct Loaded {
  NvrtcApi api;
  std::string error;         // empty when usable
  std::string cuda_include;  // toolkit include dir with cuda_fp16.h, or empty
  std::string identity;      // see nvrtc_identity()
  std::string cuda_headers_identity;
};

std::vector<std::string> library_candidates() {
  if (std::string path = env("IRISC_NVRTC_PATH"); !path.empty()) return {path};
  std::vector<std::string> out = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  if (std::string home = env("CUDA_HOME"); !home.empty())
    out.push_back(home + "/lib64/libnvrtc.so");
  out.push_back("/usr/local/cuda/lib64/libnvrtc.so");
  return out;
}

// Fills `api` from `lib`; returns the first missing required entry point, or "".
std::string resolve(void* lib, NvrtcApi& api) {
  std::string missing;
#define IRISC_NVRTC_REQUIRED(name)                                                    \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, IRISC_STRINGIZE(name))); \
  if (!api.name && missing.empty()) missing = IRISC_STRINGIZE(name);
#define IRISC_NVRTC_OPTIONAL(name) \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, IRISC_STRINGIZE(name)));
#include "compiler/toolchain/nvrtc_api.def"
  return missing;
}

bool has_cuda_headers(const std::filesystem::path& dir) {
  std::error_code ec;
  return !dir.empty() && std::filesystem::exists(dir / "cuda_fp16.h", ec);
}

// $CUDA_HOME/include first (the user's explicit choice), then the include dir of the
// toolkit the loaded libnvrtc belongs to (headers of the same version), then the
// conventional /usr/local/cuda.
std::string find_cuda_include(const NvrtcApi& api) {
  std::vector<std::filesystem::path> dirs;
  if (std::string home = env("CUDA_HOME"); !home.empty()) dirs.emplace_back(home + "/include");
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(api.nvrtcVersion), &info) && info.dli_fname) {
    std::error_code ec;
    std::filesystem::path lib = std::filesystem::canonical(info.dli_fname, ec);
    if (!ec) dirs.push_back(lib.parent_path().parent_path() / "include");
  }
  dirs.emplace_back("/usr/local/cuda/include");
  for (const auto& dir : dirs)
    if (has_cuda_headers(dir)) return dir.string();
  return {};
}

// "<real path> size <bytes> mtime <seconds>" of the file defining `symbol`.
std::string library_identity(void* symbol) {
  Dl_info info{};
  if (!dladdr(symbol, &info) || !info.dli_fname) return "unknown library";
  std::error_code ec;
  std::filesystem::path lib = std::filesystem::canonical(info.dli_fname, ec);
  if (ec) lib = info.dli_fname;
  struct stat st {};
  if (::stat(lib.c_str(), &st) != 0) return lib.string();
  return lib.string() + " size " + std::to_string(st.st_size) + " mtime " +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

// FNV-1a, 64 bits: irisc has no cryptographic hash, and this one only has to change
// when a header does (nobody is forging CUDA headers to collide a cache key).
void fnv1a(std::uint64_t& h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string describe_cuda_headers(const std::string& include_dir) {
  if (include_dir.empty()) return "none";
  const std::filesystem::path dir(include_dir);
  std::string version = "unknown";
  const std::string cuda_h = read_text(dir / "cuda.h");
  if (const auto at = cuda_h.find("#define CUDA_VERSION "); at != std::string::npos) {
    const auto end = cuda_h.find('\n', at);
    version = cuda_h.substr(at + 21, end == std::string::npos ? std::string::npos : end - at - 21);
  }
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char* name : {"cuda_fp16.h", "cuda_fp16.hpp", "cuda_bf16.h", "cuda_bf16.hpp",
                           "vector_types.h", "vector_functions.h"}) {
    const std::string text = read_text(dir / name);
    // Name and length first, so a missing file and an empty one differ.
    fnv1a(h, name);
    fnv1a(h, std::to_string(text.size()) + ":");
    fnv1a(h, text);
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return include_dir + "; CUDA_VERSION " + version + "; fnv1a64 " + hex;
}

Loaded load() {
  Loaded out;
  std::string tried;
  for (const std::string& path : library_candidates()) {
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      tried += "\n  " + path + ": " + (why ? why : "not found");
      continue;
    }
    NvrtcApi api;
    if (std::string missing = resolve(lib, api); !missing.empty()) {
      tried += "\n  " + path + ": lacks " + missing + " (irisc needs NVRTC from CUDA 12 or newer)";
      dlclose(lib);
      continue;
    }
    // The library stays loaded for the life of the process: programs may be
    // compiled at any time, from any thread.
    out.api = api;
    out.cuda_include = find_cuda_include(api);
    int major = 0, minor = 0;
    if (api.nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
      out.identity = std::to_string(major) + "." + std::to_string(minor) + " ";
    out.identity += library_identity(reinterpret_cast<void*>(api.nvrtcVersion));
    out.cuda_headers_identity = describe_cuda_headers(out.cuda_include);
    return out;
  }
  out.error = "NVRTC could not be loaded (set IRISC_NVRTC_PATH to libnvrtc.so); tried:" + tried;
  return out;
}

const Loaded& loaded() {
  static const Loaded state = load();  // thread-safe one-time initialisation
  return state;
}

const NvrtcApi& api() {
  const Loaded& state = loaded();
  if (!state.error.empty()) throw ToolchainError(state.error);
  return state.api;
}

// sm_90, sm_90a, compute_80, sm_100f: a prefix, digits, at most one letter suffix.
// Returns the part after "sm_"/"compute_", or "" if `arch` is not of that form.
std::string arch_suffix(std::string_view arch, bool* is_real) {
  std::string_view rest;
  if (arch.starts_with("sm_")) {
    rest = arch.substr(3);
    *is_real = true;
  } else if (arch.starts_with("compute_")) {
    rest = arch.substr(8);
    *is_real = false;
  } else {
    return {};
  }
  std::size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  const std::size_t letters = rest.size() - digits;
  if (digits < 2 || letters > 1) return {};
  if (letters == 1 && !std::islower(static_cast<unsigned char>(rest.back()))) return {};
  return std::string(rest);
}

// "NVRTC 13.0 supports sm_75, sm_80, ...", or "" if this NVRTC cannot say.
std::string supported_archs(const NvrtcApi& nv) {
  if (!nv.nvrtcGetNumSupportedArchs || !nv.nvrtcGetSupportedArchs) return {};
  int major = 0, minor = 0;
  if (nv.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return {};
  int count = 0;
  if (nv.nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return {};
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (nv.nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return {};
  std::string out = "NVRTC " + std::to_string(major) + "." + std::to_string(minor) + " supports";
  for (std::size_t i = 0; i < archs.size(); ++i)
    out += (i ? ", sm_" : " sm_") + std::to_string(archs[i]);
  return out;
}

// Checks what NVRTC would reject with a vaguer message (or not at all).
std::string validate(const CudaCompileOptions& o) {
  bool real = false;
  if (arch_suffix(o.arch, &real).empty())
    return "invalid arch \"" + o.arch +
           "\": expected sm_<NN>[a] or compute_<NN>[a], e.g. sm_90a, sm_80, compute_90";
  if (o.opt_level < 0 || o.opt_level > 3)
    return "invalid opt_level " + std::to_string(o.opt_level) + ": expected 0, 1, 2 or 3";
  for (const std::string& d : o.defines)
    if (d.empty() || d.front() == '=')
      return "invalid define \"" + d + "\": expected NAME or NAME=VALUE";
  for (const std::string& dir : o.include_dirs)
    if (dir.empty()) return "invalid include dir: empty path";
  return {};
}

std::vector<std::string> nvrtc_options(const CudaCompileOptions& o,
                                       const std::string& cuda_include) {
  bool real = false;
  const std::string suffix = arch_suffix(o.arch, &real);
  // Without a wanted cubin, a virtual target skips ptxas; the PTX is the same.
  const bool assemble = real && o.want_cubin;
  std::vector<std::string> out;
  out.push_back(std::string("--gpu-architecture=") + (assemble ? "sm_" : "compute_") + suffix);
  out.push_back("-std=c++17");
  if (assemble) out.push_back("--ptxas-options=-O" + std::to_string(o.opt_level));
  if (o.line_info) out.push_back("-lineinfo");
  for (const std::string& d : o.defines) out.push_back("-D" + d);
  for (const std::string& dir : o.include_dirs) out.push_back("-I" + dir);
  if (!cuda_include.empty()) out.push_back("-I" + cuda_include);
  return out;
}

// A buffer NVRTC fills, minus the trailing NUL it counts in the size.
std::string strip_nul(std::string text) {
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

void append_line(std::string& log, std::string_view line) {
  if (!log.empty() && log.back() != '\n') log += '\n';
  log += line;
}

// Owns one NVRTC program, so every return path destroys it.
struct Program {
  const NvrtcApi& nv;
  nvrtcProgram handle = nullptr;
  explicit Program(const NvrtcApi& api) : nv(api) {}
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() {
    if (handle) nv.nvrtcDestroyProgram(&handle);
  }
};

}  // namespace

CudaCompileResult compile_cuda(std::string_view source, std::string_view name,
                               const CudaCompileOptions& options) {
  const NvrtcApi& nv = api();
  CudaCompileResult out;
  if (std::string why = validate(options); !why.empty()) {
    out.log = "irisc: " + why;
    return out;
  }

  std::vector<const char*> header_names, header_texts;
  for (const EmbeddedHeader& h : device_headers()) {
    header_names.push_back(h.name);
    header_texts.push_back(h.text);
  }
  const std::string src(source);
  const std::string file = name.empty() ? std::string("iris_jit.cu") : std::string(name);
  Program program(nv);
  nvrtcResult r = nv.nvrtcCreateProgram(&program.handle, src.c_str(), file.c_str(),
                                        static_cast<int>(header_names.size()), header_texts.data(),
                                        header_names.data());
  if (r != NVRTC_SUCCESS) {
    out.log = std::string("nvrtcCreateProgram failed: ") + nv.nvrtcGetErrorString(r);
    return out;
  }

  const std::vector<std::string> opts = nvrtc_options(options, loaded().cuda_include);
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  r = nv.nvrtcCompileProgram(program.handle, static_cast<int>(argv.size()), argv.data());

  std::size_t log_size = 0;
  if (nv.nvrtcGetProgramLogSize(program.handle, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    std::string log(log_size, '\0');
    if (nv.nvrtcGetProgramLog(program.handle, log.data()) == NVRTC_SUCCESS)
      out.log = strip_nul(log);
  }
  if (r != NVRTC_SUCCESS) {
    append_line(out.log, std::string("nvrtc: ") + nv.nvrtcGetErrorString(r) + " compiling " + file +
                             " for " + options.arch);
    if (r == NVRTC_ERROR_INVALID_OPTION) {
      if (std::string archs = supported_archs(nv); !archs.empty()) append_line(out.log, archs);
    }
    return out;
  }

  if (options.want_ptx) {
    std::size_t size = 0;
    if (nv.nvrtcGetPTXSize(program.handle, &size) == NVRTC_SUCCESS && size > 0) {
      std::string ptx(size, '\0');
      if (nv.nvrtcGetPTX(program.handle, ptx.data()) == NVRTC_SUCCESS) out.ptx = strip_nul(ptx);
    }
    if (out.ptx.empty()) {
      append_line(out.log, "nvrtc: no PTX was produced for " + options.arch);
      return out;
    }
  }
  if (options.want_cubin) {
    bool real = false;
    arch_suffix(options.arch, &real);
    if (!real) {
      // Not an error: asking for compute_NN means PTX is what the caller can use.
      append_line(out.log,
                  "note: no cubin for the virtual architecture " + options.arch + ", PTX only");
    } else {
      std::size_t size = 0;
      if (nv.nvrtcGetCUBINSize(program.handle, &size) == NVRTC_SUCCESS && size > 0) {
        out.cubin.resize(size);
        if (nv.nvrtcGetCUBIN(program.handle, reinterpret_cast<char*>(out.cubin.data())) !=
            NVRTC_SUCCESS)
          out.cubin.clear();
      }
      if (out.cubin.empty()) {
        append_line(out.log, "nvrtc: no cubin was produced for " + options.arch);
        return out;
      }
    }
  }
  out.ok = true;
  return out;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  const NvrtcApi& nv = api();
  if (nv.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) throw ToolchainError("nvrtcVersion failed");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string nvrtc_identity() { return loaded().identity; }

std::string cuda_headers_identity() { return loaded().cuda_headers_identity; }

bool nvrtc_available(std::string* why_not) {
  const Loaded& state = loaded();
  if (state.error.empty()) return true;
  if (why_not) *why_not = state.error;
  return false;
}

}  // namespace irisc::toolchain
