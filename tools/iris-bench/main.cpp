// iris-bench: measured comparisons of libiris against the baselines that matter
// (cudaMemcpyPeer, NCCL and cuBLAS), each measured in the same run.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

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
      "  --routes LIST   all_gather, reduce_scatter, all_to_all, broadcast: direct, staged, ll, slots,\n"
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
      "  --table FILE    write automatic's table from this sweep: in FILE (runtime/src/library/\n"
      "                  ccl_automatic.def) the section of this world size gets, per size, the\n"
      "                  fastest variant automatic may run (in a graph with --graph) for each\n"
      "                  class of types; measure every algorithm and route with --dtypes bf16\n"
      "  --table-worlds A-B  the worlds the section covers (default: this run's)\n"
      "  under each table: the fastest iris variant against NCCL per size; where automatic\n"
      "  ran beside other variants, automatic against the fastest of them (more than 5%%\n"
      "  slower is marked) and the fastest variant size by size (where automatic's table,\n"
      "  runtime/src/library/ccl_automatic.def, should cross over on this machine); a variant the\n"
      "  library refuses on every rank (too few programs for a size, ...) is n/a, with why\n"
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

// The command line, parsed one way (CLI11, as irisc and iris-run): each command a
// subcommand, each option's value taken by a callback that checks it as it stores it
// (an iris::Error names the option). Help is usage()'s full text, for the tool and
// for each command.
class CommandLine {
 public:
  CommandLine() : app_("iris-bench: measured comparisons of libiris against cudaMemcpyPeer, NCCL and cuBLAS") {
    app_.set_help_flag();
    app_.add_flag("-h,--help", help_);
    app_.require_subcommand(0, 1);
  }

  CLI::App* command(const std::string& name) {
    CLI::App* sub = app_.add_subcommand(name);
    sub->set_help_flag();
    sub->add_flag("-h,--help", help_);
    return sub;
  }

  // An option whose value `store` checks and keeps: one value each time it is given, every
  // one checked, the last kept (as `store` keeps it).
  static void value(CLI::App* sub, const std::string& name, std::function<void(const std::string&)> store) {
    sub->add_option_function<std::vector<std::string>>(name,
                                                      [store = std::move(store)](const std::vector<std::string>& all) {
                                                        for (const std::string& v : all) store(v);
                                                      })
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->type_name("V");
  }
  // A whole number of at least `lowest`.
  template <class T>
  static void count(CLI::App* sub, const std::string& name, T& out, int lowest) {
    value(sub, name, [&out, name, lowest](const std::string& v) { out = static_cast<T>(count_value(name, v, lowest)); });
  }
  static void text(CLI::App* sub, const std::string& name, std::string& out) {
    value(sub, name, [&out](const std::string& v) { out = v; });
  }
  static void list(CLI::App* sub, const std::string& name, std::vector<std::string>& out) {
    value(sub, name, [&out](const std::string& v) { out = split(v); });
  }
  // --ranks, --share-gpus and --backend: the job of ccl, ops and stages.
  static void job(CLI::App* sub, iris::Options& o) {
    count(sub, "--ranks", o.ranks, 1);
    sub->add_flag_callback("--share-gpus", [&o] {
      o.share_gpus = true;
      setenv("IRIS_SHARE_GPUS", "1", 1);
    });
    text(sub, "--backend", o.backend);
  }

  // -1 to go on, else the exit status: 0 after --help (or with no command at all: 2),
  // 2 for a bad command line.
  int parse(int argc, char** argv) {
    try {
      app_.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (help_) return help();
      std::fprintf(stderr, "iris-bench: error: %s\n", e.what());
      return 2;
    } catch (const iris::Error& e) {
      if (help_) return help();
      std::fprintf(stderr, "iris-bench: error: %s\n", e.what());
      return 2;
    }
    if (help_) return help();
    if (app_.get_subcommands().empty()) {
      usage();
      return 2;
    }
    return -1;
  }
  bool ran(const CLI::App* sub) const { return sub->parsed(); }

 private:
  static int help() {
    usage();
    return 0;
  }
  CLI::App app_;
  bool help_ = false;
};

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

// After parsing: `check` (the command's own checks, and the job's validation): -1 to go
// on, else 2 for a bad command line.
template <class C>
int checked(C&& check) {
  try {
    check();
  } catch (const iris::Error& e) {
    std::fprintf(stderr, "iris-bench: error: %s\n", e.what());
    return 2;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  namespace bench = iris::bench;
  CommandLine cl;
  // The commands that run a job (ccl, ops, stages, p2p) start from the environment's
  // options (IRIS_*), which their command line then overrides; the others, and --help,
  // do not read it.
  iris::Options env;
  const std::string first = argc > 1 ? argv[1] : "";
  if (first == "ccl" || first == "ops" || first == "stages" || first == "p2p") {
    try {
      env = iris::Options::from_env();
    } catch (const iris::Error& e) {
      std::fprintf(stderr, "iris-bench: error: %s\n", e.what());
      return 2;
    }
  }

  bench::CompileBenchOptions co;
  CLI::App* compile = cl.command("compile");
  CommandLine::text(compile, "--target", co.target);
  CommandLine::count(compile, "--reps", co.reps, 1);
  compile->add_option("files", co.files)->type_name("FILE");

  bench::LaunchBenchOptions lo;
  CLI::App* launch = cl.command("launch");
  CommandLine::text(launch, "--iris", lo.iris_file);
  CommandLine::text(launch, "--kernel", lo.kernel);
  CommandLine::count(launch, "--size", lo.size, 1);
  CommandLine::count(launch, "--launches", lo.launches, 1);
  CommandLine::count(launch, "--batches", lo.batches, 1);
  CommandLine::text(launch, "--backend", lo.backend);

  bench::CclBenchOptions cc;
  cc.options = env;
  CLI::App* ccl = cl.command("ccl");
  CommandLine::value(ccl, "--min-bytes", [&](const std::string& v) { cc.min_bytes = iris::parse_size(v, "--min-bytes"); });
  CommandLine::value(ccl, "--max-bytes", [&](const std::string& v) { cc.max_bytes = iris::parse_size(v, "--max-bytes"); });
  CommandLine::value(ccl, "--factor", [&](const std::string& v) {
    char* end = nullptr;
    cc.factor = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end || !(cc.factor > 1)) throw iris::Error("--factor: '" + v + "' is not a number > 1");
  });
  CommandLine::value(ccl, "--sizes", [&](const std::string& v) {
    cc.sizes.clear();
    for (const std::string& s : split(v)) cc.sizes.push_back(iris::parse_size(s, "--sizes"));
    if (cc.sizes.empty()) throw iris::Error("--sizes: no size given");
  });
  CommandLine::list(ccl, "--dtypes", cc.dtypes);
  CommandLine::list(ccl, "--redops", cc.redops);
  CommandLine::list(ccl, "--collectives", cc.collectives);
  CommandLine::list(ccl, "--algorithms", cc.algorithms);
  CommandLine::list(ccl, "--routes", cc.routes);
  CommandLine::value(ccl, "--programs", [&](const std::string& v) {
    cc.programs.clear();
    for (const std::string& s : split(v)) cc.programs.push_back(count_value("--programs", s, 0));
  });
  CommandLine::count(ccl, "--root", cc.root, 0);
  CommandLine::count(ccl, "--iters", cc.iters, 1);
  CommandLine::count(ccl, "--warmup", cc.warmup, 0);
  ccl->add_flag_callback("--no-nccl", [&] { cc.nccl = false; });
  ccl->add_flag_callback("--graph", [&] { cc.graph = true; });
  CommandLine::text(ccl, "--json", cc.json_path);
  CommandLine::text(ccl, "--svg", cc.svg_path);
  CommandLine::text(ccl, "--table", cc.table_path);
  CommandLine::value(ccl, "--table-worlds", [&](const std::string& v) {
    const std::size_t dash = v.find('-');
    const std::string lo = v.substr(0, dash), hi = dash == std::string::npos ? lo : v.substr(dash + 1);
    cc.table_from = count_value("--table-worlds", lo, 1);
    cc.table_to = count_value("--table-worlds", hi, 1);
    if (cc.table_to < cc.table_from) throw iris::Error("--table-worlds: '" + v + "' is not A-B with A <= B");
  });
  CommandLine::job(ccl, cc.options);

  bench::StagesBenchOptions so;
  so.options = env;
  CLI::App* stages = cl.command("stages");
  CommandLine::value(stages, "--sizes", [&](const std::string& v) {
    so.sizes.clear();
    for (const std::string& s : split(v)) so.sizes.push_back(iris::parse_size(s, "--sizes"));
    if (so.sizes.empty()) throw iris::Error("--sizes: no size given");
  });
  CommandLine::count(stages, "--iters", so.iters, 1);
  CommandLine::count(stages, "--batch", so.batch, 1);
  CommandLine::job(stages, so.options);

  bench::OpsBenchOptions oo;
  oo.options = env;
  CLI::App* ops = cl.command("ops");
  CommandLine::list(ops, "--ops", oo.ops);
  CommandLine::value(ops, "--shapes", [&](const std::string& v) { oo.shapes = parse_shapes(v); });
  CommandLine::text(ops, "--dtype", oo.dtype);
  CommandLine::count(ops, "--iters", oo.iters, 1);
  CommandLine::count(ops, "--rounds", oo.rounds, 1);
  CommandLine::count(ops, "--warmup", oo.warmup, 0);
  CommandLine::count(ops, "--check", oo.check, 1);
  ops->add_flag_callback("--no-baseline", [&] { oo.baseline = false; });
  CommandLine::text(ops, "--json", oo.json_path);
  CommandLine::text(ops, "--svg", oo.svg_path);
  CommandLine::job(ops, oo.options);

  bench::GemmBenchOptions go;
  CLI::App* gemm = cl.command("gemm");
  // Each --shapes adds its shapes to the list.
  CommandLine::value(gemm, "--shapes", [&](const std::string& v) {
    const auto more = parse_shapes(v);
    go.shapes.insert(go.shapes.end(), more.begin(), more.end());
  });
  CommandLine::list(gemm, "--dtypes", go.dtypes);
  CommandLine::list(gemm, "--layouts", go.layouts);
  CommandLine::text(gemm, "--tile", go.tile);
  CommandLine::text(gemm, "--iris", go.iris_file);
  CommandLine::count(gemm, "--programs", go.programs, 0);
  CommandLine::count(gemm, "--iters", go.iters, 1);
  CommandLine::count(gemm, "--warmup", go.warmup, 0);
  CommandLine::text(gemm, "--json", go.json_path);

  bench::P2pOptions po;
  po.options = env;
  CLI::App* p2p = cl.command("p2p");
  CommandLine::value(p2p, "--sizes", [&](const std::string& v) {
    po.sizes.clear();
    for (const std::string& s : split(v)) {
      const std::size_t b = iris::parse_size(s, "--sizes");
      if (b < 16 || b % 16) throw iris::Error("--sizes: every size must be a positive multiple of 16 bytes");
      po.sizes.push_back(b);
    }
    if (po.sizes.empty()) throw iris::Error("--sizes: no size given");
  });
  CommandLine::count(p2p, "--iters", po.iters, 1);
  CommandLine::count(p2p, "--warmup", po.warmup, 0);
  CommandLine::count(p2p, "--ranks", po.options.ranks, 1);
  CommandLine::count(p2p, "--blocks", po.blocks, 1);
  CommandLine::count(p2p, "--threads", po.threads, 1);
  p2p->add_flag_callback("--sweep", [&] { po.sweep = true; });
  CommandLine::text(p2p, "--json", po.json_path);

  if (const int status = cl.parse(argc, argv); status >= 0) return status;

  if (cl.ran(gemm) || cl.ran(p2p)) {
    // Both time hand-written CUDA (and cuBLAS or cudaMemcpyPeer) against irisc kernels.
    const char* backend = std::getenv("IRIS_BACKEND");
    if (backend && std::string(backend) == "host") {
      std::fprintf(stderr, "iris-bench %s: measures hand-written CUDA kernels and vendor baselines, so it needs the "
                           "CUDA backend (unset IRIS_BACKEND); on the host backend try iris-bench launch\n",
                   cl.ran(gemm) ? "gemm" : "p2p");
      return 2;
    }
  }
  if (cl.ran(compile)) {
    try {
      return bench::run_compile(co);
    } catch (const iris::Error& e) {
      std::fprintf(stderr, "iris-bench: error: %s\n", e.what());
      return 1;
    }
  }
  if (cl.ran(launch)) return measure([&] { return bench::run_launch(lo); });
  if (cl.ran(ccl)) {
    if (const int status = checked([&] {
          bench::check_options(cc);
          cc.options.validate();
        });
        status >= 0) {
      return status;
    }
    return measure([&] { return bench::run_ccl(cc); });
  }
  if (cl.ran(stages)) {
    if (const int status = checked([&] { so.options.validate(); }); status >= 0) return status;
    return measure([&] { return bench::run_stages(so); });
  }
  if (cl.ran(ops)) {
    if (const int status = checked([&] {
          bench::check_options(oo);
          oo.options.validate();
        });
        status >= 0) {
      return status;
    }
    return measure([&] { return bench::run_ops(oo); });
  }
  if (cl.ran(gemm)) return measure([&] { return bench::run_gemm(go); });
  if (po.sizes.empty()) {
    for (const char* s : {"1MiB", "16MiB", "256MiB", "1GiB"}) po.sizes.push_back(iris::parse_size(s, "--sizes"));
  }
  return measure([&] { return bench::run_p2p(po); });
}
