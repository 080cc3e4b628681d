// HIP C++ -> AMDGPU code object through ROCm comgr (see comgr.hpp).
#include "compiler/toolchain/comgr.hpp"

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <regex>
#include <string>
#include <type_traits>
#include <vector>

#include "compiler/toolchain/device_headers.hpp"
#include "compiler/toolchain/process_env.hpp"

namespace irisc::toolchain {
namespace {

// ---- the part of comgr's C ABI irisc uses (amd_comgr.h; the library is dlopen'd) -----
// Checked against comgr 2.4 (ROCm 5.2, Debian 12) and 3.0 (ROCm 6.3 and later). Handles
// and data kinds are the same in both; version 3 renumbered the languages and actions
// (HC and the deprecated actions were removed), so those come from the loaded major.
using Status = int;  // amd_comgr_status_t: 0 success
constexpr Status kSuccess = 0;
struct Handle {
  std::uint64_t handle;
};
using Data = Handle;
using DataSet = Handle;
using ActionInfo = Handle;
enum DataKind : int { kSource = 1, kInclude = 2, kLog = 5, kBc = 6, kRelocatable = 7, kExecutable = 8 };

struct Numbering {
  int hip;  // AMD_COMGR_LANGUAGE_HIP
  int compile_source_to_bc, codegen_bc_to_relocatable, codegen_bc_to_assembly, link_relocatable_to_executable;
};
constexpr Numbering kVersion2 = {4, 0x2, 0x6, 0x7, 0x9};
constexpr Numbering kVersion3 = {3, 0x2, 0x4, 0x5, 0x7};

struct Api {
  void (*get_version)(std::size_t*, std::size_t*);
  Status (*status_string)(Status, const char**);
  Status (*create_data)(int, Data*);
  Status (*release_data)(Data);
  Status (*set_data)(Data, std::size_t, const char*);
  Status (*set_data_name)(Data, const char*);
  Status (*get_data)(Data, std::size_t*, char*);
  Status (*create_data_set)(DataSet*);
  Status (*destroy_data_set)(DataSet);
  Status (*data_set_add)(DataSet, Data);
  Status (*action_data_count)(DataSet, int, std::size_t*);
  Status (*action_data_get_data)(DataSet, int, std::size_t, Data*);
  Status (*create_action_info)(ActionInfo*);
  Status (*destroy_action_info)(ActionInfo);
  Status (*action_info_set_isa_name)(ActionInfo, const char*);
  Status (*action_info_set_language)(ActionInfo, int);
  Status (*action_info_set_option_list)(ActionInfo, const char**, std::size_t);
  Status (*action_info_set_logging)(ActionInfo, bool);
  Status (*do_action)(int, ActionInfo, DataSet, DataSet);
  Status (*get_isa_count)(std::size_t*);
  Status (*get_isa_name)(std::size_t, const char**);
};

struct Loaded {
  Api api{};
  Numbering numbers{};
  std::string identity;  // "comgr 2.4; <library>"
  std::string why_not;   // empty when usable
};

// Fills `api` from `lib`; the first missing entry point, or "".
std::string resolve(void* lib, Api& api) {
  std::string missing;
  const auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (!fn && missing.empty()) missing = name;
  };
  sym(api.get_version, "amd_comgr_get_version");
  sym(api.status_string, "amd_comgr_status_string");
  sym(api.create_data, "amd_comgr_create_data");
  sym(api.release_data, "amd_comgr_release_data");
  sym(api.set_data, "amd_comgr_set_data");
  sym(api.set_data_name, "amd_comgr_set_data_name");
  sym(api.get_data, "amd_comgr_get_data");
  sym(api.create_data_set, "amd_comgr_create_data_set");
  sym(api.destroy_data_set, "amd_comgr_destroy_data_set");
  sym(api.data_set_add, "amd_comgr_data_set_add");
  sym(api.action_data_count, "amd_comgr_action_data_count");
  sym(api.action_data_get_data, "amd_comgr_action_data_get_data");
  sym(api.create_action_info, "amd_comgr_create_action_info");
  sym(api.destroy_action_info, "amd_comgr_destroy_action_info");
  sym(api.action_info_set_isa_name, "amd_comgr_action_info_set_isa_name");
  sym(api.action_info_set_language, "amd_comgr_action_info_set_language");
  sym(api.action_info_set_option_list, "amd_comgr_action_info_set_option_list");
  sym(api.action_info_set_logging, "amd_comgr_action_info_set_logging");
  sym(api.do_action, "amd_comgr_do_action");
  sym(api.get_isa_count, "amd_comgr_get_isa_count");
  sym(api.get_isa_name, "amd_comgr_get_isa_name");
  return missing;
}

Loaded load() {
  Loaded out;
  std::vector<std::string> candidates;
  if (std::string path = env("IRISC_COMGR_LIBRARY"); !path.empty()) {
    candidates = {path};
  } else {
    candidates = {"libamd_comgr.so.2", "libamd_comgr.so.3", "/opt/rocm/lib/libamd_comgr.so"};
  }
  std::string tried;
  for (const std::string& path : candidates) {
    // Kept loaded for the life of the process: compiles may come at any time.
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      tried += "\n  " + path + ": " + (why ? why : "not found");
      continue;
    }
    Api api{};
    if (std::string missing = resolve(lib, api); !missing.empty()) {
      tried += "\n  " + path + ": lacks " + missing;
      dlclose(lib);
      continue;
    }
    std::size_t major = 0, minor = 0;
    api.get_version(&major, &minor);
    if (major != 2 && major != 3) {
      tried += "\n  " + path + ": comgr " + std::to_string(major) + "." + std::to_string(minor) +
               " (irisc speaks versions 2 and 3)";
      dlclose(lib);
      continue;
    }
    out.api = api;
    out.numbers = major == 2 ? kVersion2 : kVersion3;
    out.identity = "comgr " + std::to_string(major) + "." + std::to_string(minor) + "; " + path;
    return out;
  }
  out.why_not = "no ROCm comgr: install libamd-comgr2 (Debian) or set IRISC_COMGR_LIBRARY; tried:" + tried;
  return out;
}

const Loaded& loaded() {
  static const Loaded state = load();
  return state;
}

// A data set, destroyed on scope exit; the data objects added to it are released as
// they are added (the set keeps its own reference).
class Set {
 public:
  explicit Set(const Api& api) : api_(api) { ok_ = api_.create_data_set(&set_) == kSuccess; }
  ~Set() {
    if (ok_) api_.destroy_data_set(set_);
  }
  Set(const Set&) = delete;
  Set& operator=(const Set&) = delete;
  bool ok() const { return ok_; }
  DataSet handle() const { return set_; }

  bool add(int kind, const std::string& name, std::string_view bytes) {
    Data d{};
    if (api_.create_data(kind, &d) != kSuccess) return false;
    const bool ok = api_.set_data(d, bytes.size(), bytes.data()) == kSuccess &&
                    api_.set_data_name(d, name.c_str()) == kSuccess && api_.data_set_add(set_, d) == kSuccess;
    api_.release_data(d);
    return ok;
  }

  // Every data object of `kind`, concatenated.
  std::string all(int kind) const {
    std::string out;
    std::size_t n = 0;
    if (api_.action_data_count(set_, kind, &n) != kSuccess) return out;
    for (std::size_t i = 0; i < n; ++i) {
      Data d{};
      if (api_.action_data_get_data(set_, kind, i, &d) != kSuccess) continue;
      std::size_t size = 0;
      if (api_.get_data(d, &size, nullptr) == kSuccess) {
        std::string bytes(size, '\0');
        if (api_.get_data(d, &size, bytes.data()) == kSuccess) out += bytes.substr(0, size);
      }
      api_.release_data(d);
    }
    return out;
  }

 private:
  const Api& api_;
  DataSet set_{};
  bool ok_ = false;
};

// Whether the loaded comgr compiles for `arch` (its ISA list names "...--<arch>" with or
// without feature suffixes); if not, *why_not says so.
bool knows_isa(const Loaded& l, const std::string& arch, std::string* why_not) {
  std::size_t n = 0;
  if (l.api.get_isa_count(&n) == kSuccess) {
    const std::string want = "amdgcn-amd-amdhsa--" + arch;
    for (std::size_t i = 0; i < n; ++i) {
      const char* name = nullptr;
      if (l.api.get_isa_name(i, &name) != kSuccess || !name) continue;
      const std::string_view isa(name);
      if (isa == want || (isa.starts_with(want) && isa[want.size()] == ':')) return true;
    }
  }
  if (why_not) {
    *why_not = l.identity + " does not compile for " + arch +
               " (a newer ROCm's comgr does; IRISC_AMDGPU_COMPILER=clang uses clang-19 instead)";
  }
  return false;
}

// Diagnostics name the source by its path in comgr's temporary input folder: keep the
// file name only.
std::string strip_input_dir(const std::string& log) {
  static const std::regex input_dir(R"(/[^ :\n]*comgr-[^/ \n]*/input/)");
  return std::regex_replace(log, input_dir, "");
}

}  // namespace

bool comgr_available(const std::string& arch, std::string* why_not) {
  std::string why = loaded().why_not;
  if (why.empty()) knows_isa(loaded(), arch, &why);
  if (why.empty()) device_library_bitcode(arch, &why);
  if (why_not) *why_not = why;
  return why.empty();
}

std::string comgr_identity() { return loaded().why_not.empty() ? loaded().identity : ""; }

AmdgpuCompileResult compile_hip_comgr(std::string_view source, std::string_view name, const AmdgpuCompileOptions& o) {
  AmdgpuCompileResult r;
  const Loaded& l = loaded();
  if (!l.why_not.empty()) {
    r.log = "cannot compile for " + o.arch + ": " + l.why_not;
    return r;
  }
  std::string why;
  std::vector<std::string> front = hip_bitcode_flags(o, &why);
  if (front.empty()) {
    r.log = "cannot compile for " + o.arch + ": " + why;
    return r;
  }
  front.push_back("-mcode-object-version=5");
  // comgr runs clang in-process; one compile at a time keeps its global state simple.
  static std::mutex serial;
  const std::lock_guard<std::mutex> lock(serial);
  const Api& api = l.api;
  const std::string file = name.empty() ? "iris_jit.hip" : std::string(name.substr(name.find_last_of('/') + 1));
  const auto status_text = [&](Status s) {
    const char* text = nullptr;
    return api.status_string(s, &text) == kSuccess && text ? std::string(text) : "status " + std::to_string(s);
  };

  ActionInfo info{};
  if (api.create_action_info(&info) != kSuccess) {
    r.log = "comgr could not create an action";
    return r;
  }
  struct InfoGuard {
    const Api& api;
    ActionInfo info;
    ~InfoGuard() { api.destroy_action_info(info); }
  } info_guard{api, info};
  const std::string isa = "amdgcn-amd-amdhsa--" + o.arch;
  if (!knows_isa(l, o.arch, &why) || api.action_info_set_isa_name(info, isa.c_str()) != kSuccess) {
    r.log = "cannot compile for " + o.arch + ": " + (why.empty() ? "comgr refused the ISA " + isa : why);
    return r;
  }
  if (api.action_info_set_language(info, l.numbers.hip) != kSuccess || api.action_info_set_logging(info, true) != kSuccess) {
    r.log = "comgr refused the HIP language or logging (" + l.identity + ")";
    return r;
  }
  const auto set_options = [&](const std::vector<std::string>& options) {
    std::vector<const char*> argv;
    for (const std::string& s : options) argv.push_back(s.c_str());
    return api.action_info_set_option_list(info, argv.empty() ? nullptr : argv.data(), argv.size()) == kSuccess;
  };
  // A step's log, with the temporary input folder taken out of the diagnostics.
  const auto failed = [&](const Set& out, const char* step, Status s) {
    const std::string log = strip_input_dir(out.all(kLog));
    if (log.find_first_not_of(" \n") != std::string::npos) r.log = log;
    else r.log = std::string(step) + (s == kSuccess ? "" : " failed (" + status_text(s) + ")");
    return r;
  };

  // 1. HIP source and the embedded device library -> bitcode with the device libraries.
  Set in(api), bc(api);
  if (!in.ok() || !bc.ok() || !in.add(kSource, file, source)) {
    r.log = "comgr could not hold the source";
    return r;
  }
  for (const EmbeddedHeader& h : device_headers()) {
    if (!in.add(kInclude, h.name, h.text)) {
      r.log = "comgr could not hold the device header " + std::string(h.name);
      return r;
    }
  }
  if (!set_options(front)) {
    r.log = "comgr refused the compile options";
    return r;
  }
  if (Status s = api.do_action(l.numbers.compile_source_to_bc, info, in.handle(), bc.handle()); s != kSuccess) {
    return failed(bc, "comgr (HIP to bitcode)", s);
  }
  std::string log = bc.all(kLog);

  // 2. Bitcode -> assembly and relocatable; 3. -> the executable code object.
  set_options({"-O" + std::to_string(o.opt_level), "-fno-vectorize", "-mcode-object-version=5"});
  if (o.want_assembly) {
    Set s_out(api);
    if (Status s = api.do_action(l.numbers.codegen_bc_to_assembly, info, bc.handle(), s_out.handle()); s != kSuccess) {
      return failed(s_out, "comgr (bitcode to assembly)", s);
    }
    r.assembly = s_out.all(kSource);  // assembly is source text to comgr
    if (r.assembly.empty()) return failed(s_out, "comgr gave no assembly", kSuccess);
  }
  if (o.want_code_object) {
    Set rel(api), exe(api);
    if (!rel.ok() || !exe.ok()) {
      r.log = "comgr could not create a data set";
      return r;
    }
    if (Status s = api.do_action(l.numbers.codegen_bc_to_relocatable, info, bc.handle(), rel.handle()); s != kSuccess) {
      return failed(rel, "comgr (bitcode to a relocatable object)", s);
    }
    set_options({});
    if (Status s = api.do_action(l.numbers.link_relocatable_to_executable, info, rel.handle(), exe.handle());
        s != kSuccess) {
      return failed(exe, "comgr (the executable code object)", s);
    }
    const std::string bytes = exe.all(kExecutable);
    if (bytes.empty()) return failed(exe, "comgr gave no code object", kSuccess);
    r.code_object = to_bytes(bytes);
  }
  r.log = strip_input_dir(log);
  r.ok = true;
  return r;
}

}  // namespace irisc::toolchain
