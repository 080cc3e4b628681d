// JIT compilation with an on-disk cache (see iris/jit.hpp).
#include "iris/jit.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "backend/backend.hpp"
#include "compiler/driver/compile.hpp"
#include "iris/error.hpp"
#include "iris/log.hpp"
#include "jit/jit_cache.hpp"
#include "jit/jit_target.hpp"

namespace iris {
namespace {

// Threads of one process compile a given key once; the others wait and then hit.
std::mutex& key_mutex(const std::string& key) {
  static std::mutex table_mu;
  static std::map<std::string, std::unique_ptr<std::mutex>> table;
  std::lock_guard<std::mutex> lock(table_mu);
  auto& m = table[key];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

}  // namespace

std::int64_t type_define_of(DType t) {
  const std::int64_t d = irisc::type_define_named(dtype_name(t));
  if (d < 0) throw Error("JitOptions::types: DType " + std::to_string(static_cast<int>(t)) + " is not an element type");
  return d;
}

namespace {

// IRIS_TMA_STORES=1: the GEMM kernels the JIT compiles store their epilogue's tiles by
// TMA (irisc --tma-stores). Read once.
bool tma_stores_from_env() {
  static const bool on = [] {
    const char* v = std::getenv("IRIS_TMA_STORES");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

irisc::CompileOptions compile_options(const JitOptions& options) {
  irisc::CompileOptions co;
  co.target = options.target.empty() ? irisc::default_target_name() : options.target;
  co.defines = options.defines;
  for (const auto& [name, type] : options.types) {
    if (co.defines.count(name)) {
      throw Error("JitOptions: '" + name + "' is in both defines and types; a parameter is an integer or a type");
    }
    co.defines[name] = type_define_of(type);
  }
  co.trace_events = options.trace_events;
  co.tma_stores = tma_stores_from_env();
  co.include_dirs = options.include_dirs;
  co.kernels = options.kernels;
  return co;
}

// Count, then each define as length-prefixed name and value: no two define sets
// encode alike, whatever their names contain ({"A=1;B": 2} vs {"A": 1, "B": 2}).
std::string encode_defines(const std::map<std::string, std::int64_t>& defines) {
  std::string out = std::to_string(defines.size());
  for (const auto& [name, value] : defines) {
    const std::string v = std::to_string(value);
    out += ";" + std::to_string(name.size()) + ":" + name + "=" + std::to_string(v.size()) + ":" + v;
  }
  return out;
}

std::string key_for(std::string_view source, const std::string& name, const irisc::CompileOptions& co) {
  const irisc::CompilerIdentity id = irisc::compiler_identity();
  // Every option that can change the output, not just those JitOptions sets today.
  const std::string options = "O" + std::to_string(co.opt_level) + " lineinfo " + std::to_string(co.line_info) +
                              " werror " + std::to_string(co.warnings_as_errors) + " trace " +
                              std::to_string(co.trace_events) + " tma_stores " + std::to_string(co.tma_stores);
  std::string include_dirs = std::to_string(co.include_dirs.size());
  for (const std::string& dir : co.include_dirs) include_dirs += ";" + std::to_string(dir.size()) + ":" + dir;
  std::string kernels = std::to_string(co.kernels.size());
  for (const std::string& k : co.kernels) kernels += ";" + std::to_string(k.size()) + ":" + k;
  // The imported files' texts: an edit to one is a new key, as an edit to the source is.
  const auto files = irisc::imported_files(irisc::SourceBuffer(name, std::string(source)), co);
  std::string imports = std::to_string(files.size());
  for (const auto& [path, text] : files) {
    imports += ";" + std::to_string(path.size()) + ":" + path + "=" + std::to_string(text.size()) + ":" + text;
  }
  // The compiler behind the generated source: NVRTC and the CUDA headers, or for AMD
  // targets the one of clang and comgr that compiles this target, and which.
  const std::string compiler = irisc::code_object_compiler(co.target);
  return cache_key({"irisc-cubin-v4", id.version, id.contract, id.build_id, id.headers_digest, compiler,
                    co.target, options, include_dirs, encode_defines(co.defines), kernels, name, source, imports});
}

// A GPU target compiles through NVRTC, which the JIT finds at run time: its library and
// the CUDA headers device code includes. Say what is missing and where it was looked
// for, before irisc reports it as a failed compile.
void require_gpu_toolchain(const irisc::CompileOptions& co) {
  std::string why;
  if (!irisc::toolchain_ready(co.target, &why)) throw Error("the JIT compiles .iris for " + co.target + " " + why);
}

}  // namespace

std::string jit_target_for_gfx(std::string_view gfx_arch) {
  if (std::string t = irisc::target_for_gfx_arch_named(gfx_arch); !t.empty()) return t;
  const std::string_view gfx = gfx_arch.substr(0, gfx_arch.find(':'));
  throw Error("irisc has no target for " + std::string(gfx) + " (this GPU's architecture, " + std::string(gfx_arch) +
              "); supported: " + irisc::every_target_name());
}

std::string jit_target_for(const Context& ctx) {
  auto& bk = backend::active();
  if (ctx.on_host()) return "host";
  // AMD GPUs are named by their gfx architecture; they have no compute capability.
  if (std::string_view(bk.name()) == "hip") return jit_target_for_gfx(bk.device_arch(ctx.device()));
  const int major = bk.device_attribute(ctx.device(), backend::DeviceAttribute::compute_capability_major);
  const int minor = bk.device_attribute(ctx.device(), backend::DeviceAttribute::compute_capability_minor);
  if (std::string t = irisc::target_for_compute_capability_named(major, minor); !t.empty()) return t;
  throw Error("irisc has no target for this GPU (compute capability " + std::to_string(major) + "." +
              std::to_string(minor) + "); supported: " + irisc::every_target_name());
}

std::string jit_cache_key(std::string_view source, const std::string& name, const JitOptions& options) {
  return key_for(source, name, compile_options(options));
}

JitResult jit_compile(std::string_view source, const std::string& name, const JitOptions& options) {
  JitResult out;
  const irisc::CompileOptions co = compile_options(options);
  const std::string key = key_for(source, name, co);
  // A cache that is refused or cannot be created says so once and is skipped: the
  // compile goes on without it.
  std::optional<JitCache> cache;
  if (options.use_cache) {
    cache.emplace(options.cache_dir.empty() ? JitCache::default_dir() : options.cache_dir);
    if (!cache->usable()) cache.reset();
  }
  std::lock_guard<std::mutex> lock(key_mutex(key));
  if (cache) {
    if (auto hit = cache->get(key)) {
      out.code = std::move(*hit);
      out.cache_hit = true;
      return out;
    }
  }
  require_gpu_toolchain(co);
  const auto t0 = std::chrono::steady_clock::now();
  irisc::SourceBuffer buf(name, std::string(source));
  // Progress on a long compile: a note after note_after_seconds, then every 30 s.
  std::mutex note_mu;
  std::condition_variable note_cv;
  bool done = false, noted = false;
  std::thread notes;
  if (options.note_after_seconds > 0) {
    notes = std::thread([&] {
      std::unique_lock<std::mutex> lock(note_mu);
      auto wait = std::chrono::duration<double>(options.note_after_seconds);
      while (!note_cv.wait_for(lock, wait, [&] { return done; })) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        log_warn("jit: still compiling ", name, " for ", co.target, " (", static_cast<long>(s),
                 " s so far); the result is cached, so later runs load it at once");
        noted = true;
        wait = std::chrono::seconds(30);
      }
    });
  }
  const auto stop_notes = [&] {
    if (!notes.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(note_mu);
      done = true;
    }
    note_cv.notify_all();
    notes.join();
  };
  irisc::CompileResult r;
  try {
    r = irisc::compile(buf, co);
  } catch (...) {
    stop_notes();
    throw;
  }
  stop_notes();
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (options.note_after_seconds > 0 && (noted || out.compile_ms > options.note_after_seconds * 1e3)) {
    log_warn("jit: compiled ", name, " for ", co.target, " in ", out.compile_ms / 1e3, " s");
  }
  if (!r.ok) throw Error("irisc could not compile " + name + ":\n" + r.rendered_diagnostics);
  out.warnings = r.rendered_diagnostics;
  if (!out.warnings.empty()) log_warn(out.warnings);
  out.code = std::move(r.code_object);
  if (cache) cache->put(key, out.code);
  log_info("jit: compiled ", name, " for ", co.target, " in ", out.compile_ms, " ms");
  return out;
}

std::string jit_fallback_target(const std::string& target) {
  return irisc::gemm_fallback_target(target);
}

Program jit_program(Context& ctx, std::string_view source, const std::string& name, const JitOptions& options) {
  JitOptions o = options;
  if (o.target.empty()) o.target = jit_target_for(ctx);
  if (ctx.tracing()) o.trace_events = true;
  const std::int64_t begin = ctx.tracing() ? Context::trace_clock_ns() : 0;
  JitResult r = jit_compile(source, name, o);
  if (ctx.tracing()) ctx.trace_span("jit " + name, begin, Context::trace_clock_ns());
  Program p(ctx, r.code, name);
  // The wgmma GEMM reads its operands through TMA, which takes rows of a multiple of 16
  // bytes only: for other shapes the same source compiled without it, on first need.
  if (const std::string fallback = jit_fallback_target(o.target); !fallback.empty()) {
    JitOptions f = o;
    f.target = fallback;
    p.set_fallback([&ctx, src = std::string(source), name, f] { return jit_program(ctx, src, name, f); });
  }
  return p;
}

Program jit_program_file(Context& ctx, const std::filesystem::path& file, const JitOptions& options) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error("cannot read " + file.string());
  std::ostringstream os;
  os << in.rdbuf();
  return jit_program(ctx, os.str(), file.string(), options);
}

}  // namespace iris
