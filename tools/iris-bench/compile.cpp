// iris-bench compile: how long irisc takes -- the front end alone (lex -> parse ->
// sema -> TIR), CUDA emission, a cold compile to cubin (NVRTC, no cache) and a JIT
// cache hit -- for each .iris file given (default: the samples next to this binary).
#include "compile.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/driver/compile.hpp"
#include "iris/iris.hpp"

namespace iris::bench {
namespace {

template <class F>
double median_ms(int reps, F f) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int run_compile(const CompileBenchOptions& o) {
  std::vector<std::filesystem::path> files = o.files;
  if (files.empty()) {
    std::error_code ec;
    const auto dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path().parent_path() / "samples";
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".iris") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
  }
  if (files.empty()) throw Error("no .iris files given and none found next to iris-bench");
  const auto cache_dir = std::filesystem::temp_directory_path() / ("iris-bench-cache-" + std::to_string(::getpid()));
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::printf("iris-bench compile: %s, target %s, %s, median of %d (cold: %d)\n", irisc::compiler_fingerprint().c_str(),
              o.target.c_str(), date, o.reps, o.cold_reps);
  std::printf("%-24s %8s %12s %12s %14s %12s\n", "file", "bytes", "front end", "+ CUDA", "cold -> cubin", "cache hit");
  int status = 0;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    const std::string text = os.str();
    irisc::SourceBuffer src(f.filename().string(), text);
    irisc::CompileOptions co;
    co.target = o.target;
    co.stop_after = irisc::Stage::tir;
    bool ok = true;
    const double fe = median_ms(o.reps, [&] { ok &= irisc::compile(src, co).ok; });
    co.stop_after = irisc::Stage::source;
    const double cuda = median_ms(o.reps, [&] { ok &= irisc::compile(src, co).ok; });
    co.stop_after = irisc::Stage::code_object;
    const double cold = median_ms(o.cold_reps, [&] { ok &= irisc::compile(src, co).ok; });
    JitOptions jo;
    jo.target = o.target;
    jo.cache_dir = cache_dir;
    jit_compile(text, f.string(), jo);  // fill the cache
    bool all_hits = true;
    const double hit = median_ms(o.reps, [&] { all_hits &= jit_compile(text, f.string(), jo).cache_hit; });
    if (!ok || !all_hits) status = 1;
    std::printf("%-24s %8zu %9.3f ms %9.3f ms %11.1f ms %9.3f ms%s\n", f.filename().c_str(), text.size(), fe, cuda, cold,
                hit, ok && all_hits ? "" : "  (FAILED)");
  }
  std::error_code ec;
  std::filesystem::remove_all(cache_dir, ec);
  return status;
}

}  // namespace iris::bench
