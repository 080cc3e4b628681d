// Shared sample harness (see sample.hpp).
#include "sample.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <unistd.h>

#include <filesystem>

#include "compiler/driver/compile.hpp"

namespace iris::samples {
namespace {

void usage(const SampleSpec& spec, const SampleArgs& d) {
  std::string own;
  for (const IntOption& o : spec.int_options) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-15s %s (default %lld)\n", (o.flag + " N").c_str(), o.help.c_str(),
                  static_cast<long long>(o.value));
    own += line;
  }
  std::printf(
      "%s: %s\n\n"
      "usage: %s [options]\n"
      "  --ranks N       ranks to run as threads of this process (default: one per GPU;\n"
      "                  under mpirun the launcher decides)\n"
      "  --share-gpus    allow several ranks per GPU (rank %% GPU count)\n"
      "  --backend B     cuda (GPUs, the default) or host (CPU threads interpret the .iris\n"
      "                  kernels and check every access; smaller defaults; IRIS_BACKEND)\n"
      "  --heap SIZE     symmetric heap per rank (default: 12 x --size + 64 MiB)\n"
      "  --size SIZE     bytes per buffer per rank (default %s)\n"
      "  --iters N       timed iterations (default %d)\n"
      "  --warmup N      untimed iterations first (default %d)\n"
      "  --path P[,P..]  which versions run: %s, all (the default)\n"
      "  --cubin FILE    the cli version loads FILE (e.g. from `irisc -DB=1024 ... -o FILE`)\n"
      "                  instead of the cubin built with the sample\n"
      "  -D NAME=VALUE   compile-time parameter for the jit version (repeatable)\n"
      "%s"
      "  -h, --help      this text\n"
      "SIZE accepts units: 4096, 64KiB, 16MiB, 1GiB. Environment: IRIS_LOG=info|debug,\n"
      "IRIS_HEAP_SIZE, IRIS_RANKS, IRIS_SHARE_GPUS, IRIS_BACKEND, IRIS_CHECK_RACES=1 (host\n"
      "backend: report unordered accesses from two ranks). Exit codes: 0 ok, 1 failed,\n"
      "2 usage, 77 no GPU found.\n",
      spec.name, spec.summary, spec.name, format_bytes(d.bytes).c_str(), d.iters, d.warmup, spec.paths_help, own.c_str());
}

int parse_count(const std::string& flag, const char* text) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end || v < 0 || v > 1000000000) throw Error(flag + ": '" + text + "' is not a count");
  return static_cast<int>(v);
}

}  // namespace

int sample_main(int argc, char** argv, const SampleSpec& spec,
                const std::function<void(Context&, const SampleArgs&)>& body) {
  SampleArgs args;
  try {
    args.options = Options::from_env();
    // The backend first: it sets the defaults below.
    for (int i = 1; i + 1 < argc; ++i) {
      if (std::string(argv[i]) == "--backend") args.options.backend = argv[i + 1];
    }
    args.host = args.options.backend == "host";
    args.bytes = args.host ? std::min(spec.default_bytes, SampleArgs::kHostBytes) : spec.default_bytes;
    if (args.host) {
      args.iters = 3;
      args.warmup = 1;
    }
    for (const IntOption& o : spec.int_options) args.ints[o.flag] = args.host && o.host_value ? o.host_value : o.value;
    // The heap must hold the sample's buffers, the largest being [world][size] (up to 8
    // ranks) plus a few of [size]: default to 12 x the buffer size + 64 MiB.
    bool heap_given = std::getenv("IRIS_HEAP_SIZE") != nullptr;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto value = [&]() -> const char* {
        if (i + 1 >= argc) throw Error(a + " needs a value");
        return argv[++i];
      };
      if (a == "-h" || a == "--help") {
        usage(spec, args);
        return 0;
      } else if (a == "--ranks") {
        args.options.ranks = parse_count(a, value());
      } else if (a == "--backend") {
        args.options.backend = value();
      } else if (a == "--share-gpus") {
        args.options.share_gpus = true;
      } else if (a == "--heap") {
        args.options.heap_bytes = parse_size(value(), "--heap");
        heap_given = true;
      } else if (a == "--size") {
        args.bytes = parse_size(value(), "--size");
      } else if (a == "--iters") {
        args.iters = std::max(1, parse_count(a, value()));
      } else if (a == "--warmup") {
        args.warmup = parse_count(a, value());
      } else if (a == "--path") {
        args.path = value();
        const std::string have = std::string(",") + spec.paths + ",";
        std::stringstream list(args.path);
        for (std::string p; std::getline(list, p, ',');) {
          if (p != "all" && (p.empty() || have.find("," + p + ",") == std::string::npos)) {
            std::string names = spec.paths;
            for (std::size_t at = names.find(','); at != std::string::npos; at = names.find(',', at + 2)) names.insert(at + 1, " ");
            throw Error("--path: '" + p + "' is not one of " + names + ", all");
          }
        }
      } else if (a == "--cubin") {
        args.cubin = value();
      } else if (a.rfind("-D", 0) == 0) {
        const std::string def = a == "-D" ? std::string(value()) : a.substr(2);
        std::string name;
        std::int64_t v = 0;
        if (!irisc::parse_define(def, &name, &v)) throw Error("-D: '" + def + "' is not NAME=INTEGER");
        args.defines[name] = v;
      } else if (args.ints.count(a)) {
        char* end = nullptr;
        const char* text = value();
        const long long v = std::strtoll(text, &end, 0);
        if (end == text || *end || v <= 0) throw Error(a + ": '" + text + "' is not a positive integer");
        args.ints[a] = v;
      } else {
        throw Error("unknown option '" + a + "' (see --help)");
      }
    }
    if (args.host) {
      // Hand-written CUDA and vendor libraries need a GPU.
      if (args.path == "all") args.path = spec.host_paths;
      for (const char* gpu_only : {"cuda", "baseline"}) {
        if (args.runs(gpu_only)) throw Error(std::string("--path ") + gpu_only + " needs a GPU; the host backend runs " + spec.host_paths);
      }
    }
    if (!heap_given) {
      const std::size_t g = Options::kHeapGranularity;
      const std::size_t want = spec.heap_bytes ? spec.heap_bytes(args) : args.bytes * 12 + (64u << 20);
      args.options.heap_bytes = (want + g - 1) / g * g;
    }
    args.options.validate();
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", spec.name, e.what());
    return 2;
  }
  try {
    return run(args.options, [&](Context& ctx) {
      if (ctx.world() < spec.min_ranks) {
        throw Error(std::string(spec.name) + " needs at least " + std::to_string(spec.min_ranks) +
                    " ranks (got " + std::to_string(ctx.world()) + "); try --ranks " +
                    std::to_string(spec.min_ranks) + " --share-gpus");
      }
      report(ctx, std::string(spec.name) + ": " + std::to_string(ctx.world()) + " rank(s), " +
                      ctx.bootstrap_name() + " bootstrap, " + ctx.device_name() +
                      (args.bytes ? ", " + format_bytes(args.bytes) + " per buffer" : std::string()));
      if (ctx.on_host()) {
        report(ctx, "  host backend: the .iris kernels run interpreted on CPU threads, every access checked; "
                    "rates are not GPU rates, and the hand-written CUDA does not run");
      }
      body(ctx, args);
    });
  } catch (const NoDeviceError& e) {
    std::fprintf(stderr, "%s: %s; nothing to run\n", spec.name, e.what());
    return 77;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", spec.name, e.what());
    return 1;
  }
}

float median_ms(Context& ctx, const SampleArgs& args, const std::function<void()>& launch) {
  EventTimer timer(ctx.stream());
  std::vector<float> times;
  for (int i = 0; i < args.warmup + args.iters; ++i) {
    ctx.barrier();
    timer.start();
    launch();
    float ms = timer.stop();
    if (i >= args.warmup) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void report(Context& ctx, const std::string& line) {
  if (ctx.rank() == 0) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
}

template <class T>
void expect_equal(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  if (got.size() != want.size()) {
    throw Error("validation failed: " + what + ": " + std::to_string(got.size()) + " elements, expected " +
                std::to_string(want.size()));
  }
  std::size_t bad = 0;
  std::ostringstream first;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      if (bad < 3) first << " [" << i << "] got " << +got[i] << " want " << +want[i] << ";";
      ++bad;
    }
  }
  if (bad) {
    throw Error("validation failed: " + what + ": " + std::to_string(bad) + " of " + std::to_string(got.size()) +
                " elements differ:" + first.str());
  }
}

template void expect_equal<float>(const std::vector<float>&, const std::vector<float>&, const std::string&);
template void expect_equal<std::uint32_t>(const std::vector<std::uint32_t>&, const std::vector<std::uint32_t>&,
                                          const std::string&);
template void expect_equal<std::uint64_t>(const std::vector<std::uint64_t>&, const std::vector<std::uint64_t>&,
                                          const std::string&);

bool SampleArgs::runs(const std::string& p) const {
  std::stringstream list(path);
  for (std::string item; std::getline(list, item, ',');) {
    if (item == "all" || item == p) return true;
  }
  return false;
}

std::int64_t SampleArgs::get(const std::string& flag) const {
  const auto it = ints.find(flag);
  if (it == ints.end()) throw Error("no sample option " + flag);
  return it->second;
}

unsigned grid_for(const Context& ctx, std::size_t work_items, unsigned threads) {
  std::size_t blocks = (work_items + threads - 1) / threads;
  const std::size_t cap = static_cast<std::size_t>(ctx.multiprocessors()) * 4;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(blocks, cap)));
}

}  // namespace iris::samples

namespace iris::samples {
namespace {

std::filesystem::path exe_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : p.parent_path();
}

}  // namespace

Program load_cli_program(Context& ctx, const SampleArgs& args, const std::string& stem) {
  const std::string built = stem + (ctx.on_host() ? ".host" : ".cubin");
  const auto path = args.cubin.empty() ? exe_dir() / built : std::filesystem::path(args.cubin);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error("cannot read " + path.string() + " (built by irisc at build time): " + ec.message());
  std::vector<std::byte> bytes(size);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f || std::fread(bytes.data(), 1, size, f) != size) {
    if (f) std::fclose(f);
    throw Error("cannot read " + path.string());
  }
  std::fclose(f);
  return Program(ctx, bytes, path.string());
}

Program load_jit_program(Context& ctx, const SampleArgs& args, const std::string& stem) {
  JitOptions options;
  options.defines = args.defines;
  return jit_program_file(ctx, exe_dir() / (stem + ".iris"), options);
}

Kernel cuda_kernel(Context& ctx, const SampleArgs& args, std::span<const std::byte> fatbin, const std::string& module,
                   const std::string& kernel) {
  if (!args.runs("cuda") || ctx.on_host()) return {};
  return ctx.load_module(fatbin, module).kernel(kernel);
}

void run_variants(Context& ctx, const SampleArgs& args, const std::vector<Variant>& variants, const Measure& m) {
  double reference_rate = 0;
  for (const Variant& v : variants) {
    if (!args.runs(v.path)) continue;
    if (m.reset) m.reset();
    ctx.barrier();
    EventTimer timer(ctx.stream());
    std::vector<float> times;
    for (int i = 0; i < args.warmup + args.iters; ++i) {
      if (m.prepare) m.prepare();
      ctx.barrier();
      timer.start();
      v.launch();
      const float ms = timer.stop();
      if (i >= args.warmup) times.push_back(ms);
    }
    ctx.barrier();  // every rank's launches are done before anyone checks
    m.validate(args.warmup + args.iters);
    std::sort(times.begin(), times.end());
    const double rate = m.work_per_launch / (times[times.size() / 2] * 1e-3) / 1e9;
    auto all = ctx.all_gather(rate);
    double mean = 0;
    for (double r : all) mean += r / static_cast<double>(all.size());
    if (v.path == m.reference) reference_rate = mean;
    char line[512];
    const std::string& name = v.label.empty() ? v.path : v.label;
    int n = std::snprintf(line, sizeof line, "  %-9s validated; %s per rank:", name.c_str(), m.unit.c_str());
    for (double r : all) n += std::snprintf(line + n, sizeof line - static_cast<std::size_t>(n), " %8.2f", r);
    if (reference_rate > 0 && v.path != m.reference) {
      const Variant* ref = nullptr;
      for (const Variant& r : variants) {
        if (r.path == m.reference) ref = &r;
      }
      const std::string ref_name = ref && !ref->label.empty() ? ref->label : m.reference;
      std::snprintf(line + n, sizeof line - static_cast<std::size_t>(n), "   (%.1f%% of %s)", 100.0 * mean / reference_rate,
                    ref_name.c_str());
    }
    report(ctx, line);
  }
}

}  // namespace iris::samples
