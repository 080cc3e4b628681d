// JIT compilation with an on-disk cache (see iris/jit.hpp).
#include "iris/jit.hpp"

#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>

#include "backend/backend.hpp"
#include "compiler/driver/compile.hpp"
#include "compiler/target/target.hpp"
#include "iris/error.hpp"
#include "iris/log.hpp"
#include "jit_cache.hpp"

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

std::string jit_target_for(const Context& ctx) {
  auto& bk = backend::active();
  const int major = bk.device_attribute(ctx.device(), backend::DeviceAttribute::compute_capability_major);
  const int minor = bk.device_attribute(ctx.device(), backend::DeviceAttribute::compute_capability_minor);
  if (const irisc::Target* t = irisc::target_for_compute_capability(major, minor)) return t->name;
  throw Error("irisc has no target for this GPU (compute capability " + std::to_string(major) + "." +
              std::to_string(minor) + "); supported: " + irisc::target_names());
}

JitResult jit_compile(std::string_view source, const std::string& name, const JitOptions& options) {
  JitResult out;
  const std::string target = options.target.empty() ? irisc::default_target().name : options.target;
  std::string defines;
  for (const auto& [n, v] : options.defines) defines += n + "=" + std::to_string(v) + ";";
  const std::string key = cache_key({"irisc-cubin", irisc::compiler_fingerprint(), target, defines, name, source});
  std::optional<JitCache> cache;
  if (options.use_cache) cache.emplace(options.cache_dir.empty() ? JitCache::default_dir() : options.cache_dir);
  std::lock_guard<std::mutex> lock(key_mutex(key));
  if (cache) {
    if (auto hit = cache->get(key)) {
      out.code = std::move(*hit);
      out.cache_hit = true;
      return out;
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  irisc::CompileOptions co;
  co.target = target;
  co.defines = options.defines;
  irisc::SourceBuffer buf(name, std::string(source));
  irisc::CompileResult r = irisc::compile(buf, co);
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok) throw Error("irisc could not compile " + name + ":\n" + r.rendered_diagnostics);
  out.warnings = r.rendered_diagnostics;
  if (!out.warnings.empty()) log_warn(out.warnings);
  out.code = std::move(r.cubin);
  if (cache) cache->put(key, out.code);
  log_info("jit: compiled ", name, " for ", target, " in ", out.compile_ms, " ms");
  return out;
}

Program jit_program(Context& ctx, std::string_view source, const std::string& name, const JitOptions& options) {
  JitOptions o = options;
  if (o.target.empty()) o.target = jit_target_for(ctx);
  JitResult r = jit_compile(source, name, o);
  return Program(ctx, r.code, name);
}

Program jit_program_file(Context& ctx, const std::filesystem::path& file, const JitOptions& options) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error("cannot read " + file.string());
  std::ostringstream os;
  os << in.rdbuf();
  return jit_program(ctx, os.str(), file.string(), options);
}

}  // namespace iris
