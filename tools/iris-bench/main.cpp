// iris-bench: measured comparisons of libiris against the baselines that matter
// (cudaMemcpyPeer, NCCL and cuBLAS), each measured in the same run.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <functional>
#include <string>

#include "iris/iris.hpp"
#include "ccl.hpp"
#include "compile.hpp"
#include "gemm.hpp"
#include "launch.hpp"
#include "ops.hpp"
#include "p2p.hpp"
#include "stages.hpp"

namespace {

void usage() {
  const std::string algorithms = iris::bench::all_reduce_algorithm_names();
  std::printf(
      "usage: iris-bench <command> [options]\n\n"
      "commands:\n"
      "  compile time irisc: front end, CUDA emission, cold compile to cubin, JIT cache hit\n"
      "          (no GPU needed); options: --target T, --reps N, then .iris files\n"
      "  launch  host time Program::launch adds over launch_raw with the same arguments\n"
      "          (one rank); options: --iris FILE (default sample 07), --kernel NAME,\n"
      "          --size N (every size symbol), --launches N per batch, --batches N,\n"
      "          --backend cuda|host (host: CPU threads interpret the kernel)\n"
      "  gemm    the sm90 GEMM template (hand-written CUDA; with --iris, also an .iris kernel)\n"
      "          against cuBLAS on the same random inputs, alternating, checked against f64\n"
      "  ops     the fused GEMM + communication ops (iris/ops.hpp), every schedule, against\n"
      "          cuBLAS + NCCL on the same operands, alternating round by round, checked;\n"
      "          beside them cuBLAS's GEMM alone, the bound no schedule can beat\n"
      "  p2p     put/get/store/load bandwidth to one peer and to all peers at once, scattered\n"
      "          remote atomic throughput and signal ping-pong latency, each next to\n"
      "          cudaMemcpyPeerAsync on the same buffers\n"
      "  stages  where a small all_reduce's time goes: one_shot_push and one_shot_ll timed\n"
      "          with their later stages left out (the epoch, the input's load, the stores\n"
      "          to peers, the fence, the flags, the wait), eager and in a CUDA graph;\n"
      "          options: --sizes LIST (input bytes; default 8KiB,64KiB), --iters N,\n"
      "          --batch N (calls per batch), --ranks N, --share-gpus\n\n"
      "gemm options:\n"
      "  --shapes LIST   MxNxK,... (default 8192^3, 4096^3, 2048^3, M = 128..2048 with\n"
      "                  N = K = 8192, 8192x7168x8192, 8192x8192x7168)\n"
      "  --dtypes LIST   bf16,f16 (default bf16)\n"
      "  --layouts LIST  kn (B is [K, N]), nk (B is [N, K]) (default kn)\n"
      "  --tile T        auto (by shape class), 128x256, 128x128, 64x256, 64x128, or\n"
      "                  128x256c2, 128x128c2 (clusters of 2 sharing B by multicast)\n"
      "  --iris FILE     also time FILE's kernels gemm_<dtype>_<layout>(A, B, C)\n"
      "  --programs N    grid of the template's kernel (default: one program per SM)\n"
      "  --iters N       timed samples per kernel, median reported (default 20)\n"
      "  --warmup N      untimed samples first (default 5)\n"
      "  --json FILE     also write the results as JSON\n\n"
      "p2p options:\n"
      "  --sizes LIST    comma-separated sizes (default 1MiB,16MiB,256MiB,1GiB)\n"
      "  --iters N       timed repetitions per case (default 10; x4 below 256 MiB)\n"
      "  --warmup N      untimed repetitions first (default 3)\n"
      "  --ranks N       GPUs to use (default all)\n"
      "  --blocks N      blocks of the bulk kernels (default 2 per SM)\n"
      "  --threads N     threads per block of the bulk kernels (default 512)\n"
      "  --sweep         first time bulk put/get over grid shapes (blocks x threads)\n"
      "  --json FILE     also write the results as JSON\n\n"
      "ccl options (sizes: total bytes per call as nccl-tests counts them; 64KiB, 1M, ...):\n"
      "  --min-bytes N   smallest size of the sweep (nccl-tests -b; default 8)\n"
      "  --max-bytes N   largest size of the sweep (-e; default 256MiB; the sweep ends with it\n"
      "                  even where the factor steps over it)\n"
      "  --factor F      each size F times the one before (-f; default 4)\n"
      "  --sizes LIST    comma-separated sizes instead of the sweep\n"
      "  --dtypes LIST   f32,f16,bf16,i32,i64,u32,u64 (default f32)\n"
      "  --redops LIST   sum,max,min, for all_reduce and reduce_scatter (default sum)\n"
      "  --collectives LIST  all_reduce,all_gather,reduce_scatter,all_to_all,broadcast (default all)\n"
      "  --algorithms LIST   all_reduce algorithms, each its own variant: %s\n"
      "                  (default all; automatic shows the one it picked)\n"
      "  --routes LIST   all_gather, reduce_scatter, all_to_all, broadcast: direct, staged, ll,\n"
      "                  automatic (ccl::Route), each its own variant (default automatic)\n"
      "  --programs LIST program counts of the collectives whose programs pair up across ranks\n"
      "                  (ccl::Options::programs), each its own variant; 0 is automatic (default)\n"
      "  --root R        broadcast root (default 0)\n"
      "  --iters N       calls per timed batch; the average per call is reported (default 20)\n"
      "  --warmup N      untimed calls first (default 5)\n"
      "  --ranks N       ranks, one thread each (default one per GPU)\n"
      "  --share-gpus    let several ranks share a GPU (sets IRIS_SHARE_GPUS=1; NCCL is then\n"
      "                  skipped: it refuses two ranks on one GPU)\n"
      "  --backend B     cuda, or host (CPU threads interpret the kernels; timed by std::chrono)\n"
      "  --no-nccl       leave NCCL out\n"
      "  --graph         also time each batch captured once in a CUDA graph and replayed\n"
      "                  (nccl-tests -G; iris and NCCL alike): graph columns beside the eager\n"
      "                  ones, so launch cost and kernel cost are seen apart\n"
      "  --json FILE     also write every result (NCCL's too) as JSON\n"
      "  --svg FILE      also plot time against size (log-log), one line per variant, and bus\n"
      "                  bandwidth against size beside it (FILE with -busbw before .svg)\n"
      "  exit status: 0; 1 when a result differs from its reference, or on an error; 2 for a\n"
      "  bad command line; 77 when there is no GPU (and no --backend host)\n\n"
      "ops options (shapes: every rank's A [M, K] and B [K, N]; C per op, see docs/library.md):\n"
      "  --ops LIST      %s (default all)\n"
      "  --shapes LIST   MxNxK,... (default M = 256, 512, ..., 8192 with N = K = 8192)\n"
      "  --dtype T       bf16 or f16 (default bf16)\n"
      "  --iters N       calls per timed batch (default 10)\n"
      "  --rounds N      rounds; each times one batch of every variant in turn (the first in\n"
      "                  the listed order, each later one shuffled), the median is reported\n"
      "                  (default 5)\n"
      "  --warmup N      untimed calls before a variant's first batch (default 2)\n"
      "  --check N       sampled entries of C checked per rank and variant (default 256)\n"
      "  --ranks N, --share-gpus, --backend B, --json FILE, --svg FILE: as for ccl\n"
      "  --no-baseline   leave cuBLAS + NCCL (and the GEMM alone) out\n"
      "  exit status: as for ccl\n\n"
      "  -h, --help      this text\n",
      algorithms.c_str(), iris::bench::op_names().c_str());
}

// "a,b,,c" -> {a, b, c}.
std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    if (comma > pos) out.push_back(list.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

// "MxNxK,..." -> shapes.
std::vector<iris::bench::GemmShape> parse_shapes(const std::string& list) {
  std::vector<iris::bench::GemmShape> out;
  for (const std::string& s : split(list)) {
    long long m = 0, n = 0, k = 0;
    char x1 = 0, x2 = 0, extra = 0;
    if (std::sscanf(s.c_str(), "%lld%c%lld%c%lld%c", &m, &x1, &n, &x2, &k, &extra) != 5 || x1 != 'x' || x2 != 'x' ||
        m < 1 || n < 1 || k < 1) {
      throw iris::Error("--shapes: '" + s + "' is not MxNxK");
    }
    out.push_back({m, n, k});
  }
  if (out.empty()) throw iris::Error("--shapes: no shape given");
  return out;
}

// A whole number of at least `lowest` for option `a`.
int count_value(const std::string& a, const std::string& v, int lowest) {
  char* end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (end == v.c_str() || *end || x < lowest || x > 1000000000) {
    throw iris::Error(a + ": '" + v + "' is not a whole number >= " + std::to_string(lowest));
  }
  return static_cast<int>(x);
}

using OptionValue = std::function<std::string()>;

// Walks argv[2..] and hands each option to on(option, value), where value() takes the
// option's argument; on() returns false for an option it does not know. Returns -1 to
// go on, else the exit status (0 after --help, 2 for a bad command line).
template <class F>
int parse_options(int argc, char** argv, F&& on) {
  try {
    for (int i = 2; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "-h" || a == "--help") {
        usage();
        return 0;
      }
      const OptionValue value = [&]() -> std::string {
        if (i + 1 >= argc) throw iris::Error(a + " needs a value");
        return argv[++i];
      };
      if (!on(a, value)) throw iris::Error("unknown option '" + a + "' (see --help)");
    }
  } catch (const iris::Error& e) {
    std::fprintf(stderr, "iris-bench: error: %s\n", e.what());
    return 2;
  }
  return -1;
}

// Runs a measurement: 77 when there is no GPU to measure on, 1 on an error.
template <class F>
int measure(F&& run) {
  try {
    return run();
  } catch (const iris::NoDeviceError& e) {
    std::fprintf(stderr, "iris-bench: %s; nothing to measure\n", e.what());
    return 77;
  } catch (const iris::Error& e) {
    std::fprintf(stderr, "iris-bench: error: %s\n", e.what());
    return 1;
  }
}

// ccl and ops: the job's options from the environment, then argv through on(option,
// value), which runs first; --ranks, --share-gpus and --backend set the job. Then
// check() and the job's own validation. Returns -1 to go on, else the exit status.
template <class F, class C>
int parse_job_options(int argc, char** argv, iris::Options& job, F&& on, C&& check) {
  try {
    job = iris::Options::from_env();
  } catch (const iris::Error& e) {
    std::fprintf(stderr, "iris-bench: error: %s\n", e.what());
    return 2;
  }
  const int parsed = parse_options(argc, argv, [&](const std::string& a, const OptionValue& value) {
    if (on(a, value)) return true;
    if (a == "--ranks") job.ranks = count_value(a, value(), 1);
    else if (a == "--share-gpus") {
      job.share_gpus = true;
      setenv("IRIS_SHARE_GPUS", "1", 1);
    } else if (a == "--backend") job.backend = value();
    else return false;
    return true;
  });
  if (parsed >= 0) return parsed;
  try {
    check();
    job.validate();
  } catch (const iris::Error& e) {
    std::fprintf(stderr, "iris-bench: error: %s\n", e.what());
    return 2;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "compile") {
    iris::bench::CompileBenchOptions co;
    for (int i = 2; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "-h" || a == "--help") {
        usage();
        return 0;
      } else if (a == "--target" && i + 1 < argc) co.target = argv[++i];
      else if (a == "--reps" && i + 1 < argc) {
        try {
          co.reps = count_value(a, argv[++i], 1);
        } catch (const iris::Error& e) {
          std::fprintf(stderr, "iris-bench: error: %s\n", e.what());
          return 2;
        }
      } else if (a == "--reps" || a == "--target") {
        std::fprintf(stderr, "iris-bench compile: %s needs a value\n", a.c_str());
        return 2;
      }
      else if (!a.empty() && a[0] == '-') {
        std::fprintf(stderr, "iris-bench compile: unknown option '%s' (see --help)\n", a.c_str());
        return 2;
      } else co.files.emplace_back(a);
    }
    try {
      return iris::bench::run_compile(co);
    } catch (const iris::Error& e) {
      std::fprintf(stderr, "iris-bench: error: %s\n", e.what());
      return 1;
    }
  }
  if (cmd == "launch") {
    iris::bench::LaunchBenchOptions lo;
    const int parsed = parse_options(argc, argv, [&](const std::string& a, const OptionValue& value) {
      if (a == "--iris") lo.iris_file = value();
      else if (a == "--kernel") lo.kernel = value();
      else if (a == "--size") lo.size = count_value(a, value(), 1);
      else if (a == "--launches") lo.launches = count_value(a, value(), 1);
      else if (a == "--batches") lo.batches = count_value(a, value(), 1);
      else if (a == "--backend") lo.backend = value();
      else return false;
      return true;
    });
    if (parsed >= 0) return parsed;
    return measure([&] { return iris::bench::run_launch(lo); });
  }
  if (cmd == "ccl") {
    iris::bench::CclBenchOptions co;
    const int parsed = parse_job_options(argc, argv, co.options, [&](const std::string& a, const OptionValue& value) {
      if (a == "--min-bytes") co.min_bytes = iris::parse_size(value(), a);
      else if (a == "--max-bytes") co.max_bytes = iris::parse_size(value(), a);
      else if (a == "--factor") {
        const std::string v = value();
        char* end = nullptr;
        co.factor = std::strtod(v.c_str(), &end);
        if (end == v.c_str() || *end || !(co.factor > 1)) throw iris::Error("--factor: '" + v + "' is not a number > 1");
      } else if (a == "--sizes") {
        co.sizes.clear();
        for (const std::string& s : split(value())) co.sizes.push_back(iris::parse_size(s, a));
        if (co.sizes.empty()) throw iris::Error("--sizes: no size given");
      } else if (a == "--dtypes") co.dtypes = split(value());
      else if (a == "--redops") co.redops = split(value());
      else if (a == "--collectives") co.collectives = split(value());
      else if (a == "--algorithms") co.algorithms = split(value());
      else if (a == "--routes") co.routes = split(value());
      else if (a == "--programs") {
        co.programs.clear();
        for (const std::string& s : split(value())) co.programs.push_back(count_value(a, s, 0));
      } else if (a == "--root") co.root = count_value(a, value(), 0);
      else if (a == "--iters") co.iters = count_value(a, value(), 1);
      else if (a == "--warmup") co.warmup = count_value(a, value(), 0);
      else if (a == "--no-nccl") co.nccl = false;
      else if (a == "--graph") co.graph = true;
      else if (a == "--json") co.json_path = value();
      else if (a == "--svg") co.svg_path = value();
      else return false;
      return true;
    }, [&] { iris::bench::check_options(co); });
    if (parsed >= 0) return parsed;
    return measure([&] { return iris::bench::run_ccl(co); });
  }
  if (cmd == "stages") {
    iris::bench::StagesBenchOptions so;
    const int parsed = parse_job_options(argc, argv, so.options, [&](const std::string& a, const OptionValue& value) {
      if (a == "--sizes") {
        so.sizes.clear();
        for (const std::string& s : split(value())) so.sizes.push_back(iris::parse_size(s, a));
        if (so.sizes.empty()) throw iris::Error("--sizes: no size given");
      } else if (a == "--iters") so.iters = count_value(a, value(), 1);
      else if (a == "--batch") so.batch = count_value(a, value(), 1);
      else return false;
      return true;
    }, [] {});
    if (parsed >= 0) return parsed;
    return measure([&] { return iris::bench::run_stages(so); });
  }
  if (cmd == "ops") {
    iris::bench::OpsBenchOptions oo;
    const int parsed = parse_job_options(argc, argv, oo.options, [&](const std::string& a, const OptionValue& value) {
      if (a == "--ops") oo.ops = split(value());
      else if (a == "--shapes") oo.shapes = parse_shapes(value());
      else if (a == "--dtype") oo.dtype = value();
      else if (a == "--iters") oo.iters = count_value(a, value(), 1);
      else if (a == "--rounds") oo.rounds = count_value(a, value(), 1);
      else if (a == "--warmup") oo.warmup = count_value(a, value(), 0);
      else if (a == "--check") oo.check = count_value(a, value(), 1);
      else if (a == "--no-baseline") oo.baseline = false;
      else if (a == "--json") oo.json_path = value();
      else if (a == "--svg") oo.svg_path = value();
      else return false;
      return true;
    }, [&] { iris::bench::check_options(oo); });
    if (parsed >= 0) return parsed;
    return measure([&] { return iris::bench::run_ops(oo); });
  }
  if (cmd == "gemm" || cmd == "p2p") {
    // Both time hand-written CUDA (and cuBLAS or cudaMemcpyPeer) against irisc kernels.
    const char* backend = std::getenv("IRIS_BACKEND");
    if (backend && std::string(backend) == "host") {
      std::fprintf(stderr, "iris-bench %s: measures hand-written CUDA kernels and vendor baselines, so it needs the "
                           "CUDA backend (unset IRIS_BACKEND); on the host backend try iris-bench launch\n",
                   cmd.c_str());
      return 2;
    }
  }
  if (cmd == "gemm") {
    iris::bench::GemmBenchOptions go;
    const int parsed = parse_options(argc, argv, [&](const std::string& a, const OptionValue& value) {
      if (a == "--shapes") {
        const auto more = parse_shapes(value());
        go.shapes.insert(go.shapes.end(), more.begin(), more.end());
      } else if (a == "--dtypes") go.dtypes = split(value());
      else if (a == "--layouts") go.layouts = split(value());
      else if (a == "--tile") go.tile = value();
      else if (a == "--iris") go.iris_file = value();
      else if (a == "--programs") go.programs = count_value(a, value(), 0);
      else if (a == "--iters") go.iters = count_value(a, value(), 1);
      else if (a == "--warmup") go.warmup = count_value(a, value(), 0);
      else if (a == "--json") go.json_path = value();
      else return false;
      return true;
    });
    if (parsed >= 0) return parsed;
    return measure([&] { return iris::bench::run_gemm(go); });
  }
  if (cmd != "p2p") {
    std::fprintf(stderr, "iris-bench: unknown command '%s' (see --help)\n", cmd.c_str());
    return 2;
  }
  iris::bench::P2pOptions o;
  std::string sizes = "1MiB,16MiB,256MiB,1GiB";
  try {
    o.options = iris::Options::from_env();
  } catch (const iris::Error& e) {
    std::fprintf(stderr, "iris-bench: error: %s\n", e.what());
    return 2;
  }
  const int parsed = parse_options(argc, argv, [&](const std::string& a, const OptionValue& value) {
    if (a == "--sizes") sizes = value();
    else if (a == "--iters") o.iters = count_value(a, value(), 1);
    else if (a == "--warmup") o.warmup = count_value(a, value(), 0);
    else if (a == "--ranks") o.options.ranks = count_value(a, value(), 1);
    else if (a == "--blocks") o.blocks = static_cast<unsigned>(count_value(a, value(), 1));
    else if (a == "--threads") o.threads = static_cast<unsigned>(count_value(a, value(), 1));
    else if (a == "--sweep") o.sweep = true;
    else if (a == "--json") o.json_path = value();
    else return false;
    return true;
  });
  if (parsed >= 0) return parsed;
  try {
    std::size_t pos = 0;
    while (pos <= sizes.size()) {
      std::size_t comma = sizes.find(',', pos);
      if (comma == std::string::npos) comma = sizes.size();
      std::size_t b = iris::parse_size(sizes.substr(pos, comma - pos), "--sizes");
      if (b < 16 || b % 16) throw iris::Error("--sizes: every size must be a positive multiple of 16 bytes");
      o.sizes.push_back(b);
      pos = comma + 1;
    }
  } catch (const iris::Error& e) {
    std::fprintf(stderr, "iris-bench: error: %s\n", e.what());
    return 2;
  }
  return measure([&] { return iris::bench::run_p2p(o); });
}
