// iris-bench ops (see ops.hpp). Per op and shape: fresh random operands, every variant
// checked once on sampled entries of C, then `rounds` rounds in which every variant
// (cuBLAS + NCCL included) times one batch of calls in turn, each round in another order,
// so clock drift (the power cap of a long GEMM run) reaches all of them alike; the median
// batch is reported.
#include "ops.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gemm_op.hpp"
#include "iris/iris.hpp"
#include "common.hpp"
#include "plot_svg.hpp"

namespace iris::bench {
namespace {

using samples::LibraryOp;

constexpr LibraryOp kOps[] = {LibraryOp::matmul_all_reduce, LibraryOp::matmul_reduce_scatter,
                              LibraryOp::matmul_all_scatter, LibraryOp::all_gather_matmul};

const char* what(LibraryOp op) {
  switch (op) {
    case LibraryOp::matmul_all_reduce: return "C [M, N] = sum over ranks of A_r B_r";
    case LibraryOp::matmul_reduce_scatter: return "C [M / world, N]: this rank's rows of sum over ranks of A_r B_r";
    case LibraryOp::matmul_all_scatter: return "C [M, world N] = [A B_0, A B_1, ...]";
    case LibraryOp::all_gather_matmul: return "C [world M, N] = [A_0; A_1; ...] B";
    case LibraryOp::all_reduce: break;
  }
  return "";
}

// One line of a table: the baseline, or iris with one schedule (and algorithm).
struct Variant {
  std::string label;
  bool baseline = false;
  ops::Options options;
  bool bound = false;  // the baseline's GEMM alone: what perfect overlap would take, C not checked
};

std::vector<Variant> variants_of(LibraryOp op) {
  using S = ops::Schedule;
  using A = ccl::Algorithm;
  const auto iris = [](S s, A a = A::automatic) {
    std::string label = std::string("iris ") + ops::name(s);
    if (a != A::automatic) label += std::string(" ") + ccl::name(a);
    return Variant{label, false, {.schedule = s, .algorithm = a}};
  };
  switch (op) {
    case LibraryOp::matmul_all_reduce:
      return {iris(S::unfused), iris(S::bulk_synchronous, A::one_shot), iris(S::bulk_synchronous, A::two_shot),
              iris(S::producer_consumer, A::one_shot), iris(S::producer_consumer, A::two_shot), iris(S::fused),
              iris(S::specialized), iris(S::copy_engines), iris(S::automatic)};
    case LibraryOp::matmul_reduce_scatter:
      return {iris(S::unfused), iris(S::bulk_synchronous), iris(S::producer_consumer), iris(S::fused),
              iris(S::copy_engines), iris(S::automatic)};
    case LibraryOp::matmul_all_scatter:
      return {iris(S::unfused), iris(S::fused), iris(S::specialized), iris(S::copy_engines), iris(S::automatic)};
    case LibraryOp::all_gather_matmul:
      return {iris(S::unfused), iris(S::fused), iris(S::fused_pull), iris(S::copy_engines), iris(S::automatic)};
    case LibraryOp::all_reduce: break;
  }
  return {};
}

struct Row {
  LibraryOp op;
  GemmShape shape;  // M rounded up to a multiple of the ranks for matmul_reduce_scatter
  std::size_t c_bytes = 0;
  double flops = 0;  // one call on one rank
  Variant variant;
  bool ran = false;
  std::string why_not;
  double us = 0;                // median batch, per call, the slowest rank's
  std::vector<double> round_us;  // each round's batch, per call, in round order
  std::size_t wrong = 0;         // sampled entries, summed over ranks
};

// A variant whose slowest round took more than this times its fastest is named under
// the table (a slow batch that the median may or may not hide).
constexpr double kUnevenRounds = 1.3;

LibraryOp parse_op(const std::string& s) {
  for (LibraryOp op : kOps) {
    if (s == samples::name(op)) return op;
  }
  throw Error("--ops: unknown '" + s + "' (known: " + op_names() + ")");
}

DType parse_dtype(const std::string& s) {
  if (s == "bf16") return DType::bf16;
  if (s == "f16") return DType::f16;
  throw Error("--dtype: '" + s + "' is not bf16 or f16");
}

std::vector<GemmShape> shapes_of(const OpsBenchOptions& o) {
  if (!o.shapes.empty()) return o.shapes;
  std::vector<GemmShape> out;
  for (std::int64_t m = 256; m <= 8192; m *= 2) out.push_back({m, 8192, 8192});
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void print_header(LibraryOp op, DType dt) {
  std::printf("#\n# %s %s: %s\n", samples::name(op), std::string(dtype_name(dt)).c_str(), what(op));
  std::printf("#%6s %6s %6s %10s %10s %8s %9s %7s  %s\n", "M", "N", "K", "C (B)", "time (us)", "TFLOP/s", "speedup",
              "#wrong", "variant");
}

void print_row(const Row& r, double baseline_us) {
  std::printf("%7lld %6lld %6lld %10zu", static_cast<long long>(r.shape.m), static_cast<long long>(r.shape.n),
              static_cast<long long>(r.shape.k), r.c_bytes);
  if (!r.ran) {
    std::printf(" %10s %8s %9s %7s  %s\n", "n/a", "", "", "", r.variant.label.c_str());
    return;
  }
  std::printf(" %10.1f %8.1f", r.us, r.flops / (r.us * 1e-6) / 1e12);
  if (baseline_us > 0) std::printf(" %8.2fx", baseline_us / r.us);
  else std::printf(" %9s", "");
  std::printf(" %7zu  %s\n", r.wrong, r.variant.label.c_str());
}

void write_svg(const std::string& path, const std::vector<Row>& rows, const std::string& title) {
  std::vector<PlotPanel> panels;
  std::map<std::string, std::size_t> colors;
  for (const Row& r : rows) {
    const std::string panel = samples::name(r.op);
    if (panels.empty() || panels.back().title != panel) panels.push_back({panel, {}});
    if (!r.ran) continue;
    const std::size_t color = colors.emplace(r.variant.label, colors.size()).first->second;
    auto& series = panels.back().series;
    auto it = std::find_if(series.begin(), series.end(), [&](const PlotSeries& s) { return s.label == r.variant.label; });
    if (it == series.end()) {
      series.push_back({r.variant.label, plot_color(color), r.variant.baseline, {}});
      it = series.end() - 1;
    }
    it->points.emplace_back(static_cast<double>(r.c_bytes), r.us);
  }
  write_loglog_svg(path, title, "time per call against the size of C (both log scales); dashed: cuBLAS + NCCL",
                   "size of C on one rank (bytes)", "time per call (us)", panels);
}

}  // namespace

std::string op_names() {
  std::string out;
  for (LibraryOp op : kOps) out += (out.empty() ? "" : ",") + std::string(samples::name(op));
  return out;
}

void check_options(const OpsBenchOptions& o) {
  for (const std::string& s : o.ops) parse_op(s);
  parse_dtype(o.dtype);
  for (const GemmShape& s : o.shapes) {
    if (s.m < 1 || s.n < 1 || s.k < 1) throw Error("--shapes: every extent must be at least 1");
  }
  if (o.iters < 1 || o.rounds < 1 || o.warmup < 0 || o.check < 1) {
    throw Error("--iters, --rounds and --check must be at least 1, --warmup at least 0");
  }
}

int run_ops(const OpsBenchOptions& o) {
  check_options(o);
  const DType dt = parse_dtype(o.dtype);
  std::vector<LibraryOp> ops_list;
  for (LibraryOp op : kOps) {
    if (o.ops.empty() || std::find(o.ops.begin(), o.ops.end(), samples::name(op)) != o.ops.end()) ops_list.push_back(op);
  }
  const std::vector<GemmShape> shapes = shapes_of(o);

  // A, B, C, the ops' scratch and the baseline's, for up to 8 ranks, at the largest
  // shape. Scratch stays on the heap from one op to the next (each schedule has its
  // own: slabs, partials, pushed tiles, a gathered A of world x M rows), so a run of
  // every op at 8192^3 needs room for several of the largest (with 3 x 8 of them,
  // all_gather_matmul after the others found no 512 MiB block free).
  Options opt = o.options;
  if (opt.heap_bytes == Options{}.heap_bytes) {
    std::size_t need = 0;
    for (const GemmShape& s : shapes) {
      const auto m = static_cast<std::size_t>(s.m), n = static_cast<std::size_t>(s.n), k = static_cast<std::size_t>(s.k);
      need = std::max(need, dtype_size(dt) * (m * k + k * n + 5 * 8 * std::max(m * n, m * k)));
    }
    const std::size_t g = Options::kHeapGranularity;
    opt.heap_bytes = std::max(opt.heap_bytes, (need + (std::size_t{64} << 20) + g - 1) / g * g);
  }
  setenv("NCCL_NVLS_ENABLE", "0", 0);  // before NCCL's init: NVLink multicast stays off

  std::vector<Row> rows;  // rank 0's
  std::string device_name, backend, baseline_why;
  int world = 0;
  bool printer = false, wrong = false;
  const std::string date = utc_now();
  const int rc = run(opt, [&](Context& ctx) {
    const int me = ctx.rank(), W = ctx.world();
    if (me == 0) {
      printer = true;
      world = W;
      device_name = ctx.device_name();
      backend = ctx.backend();
      std::printf("# iris-bench ops: %d ranks, %s (%s backend), %s; %s\n", W, device_name.c_str(), backend.c_str(), date.c_str(),
                  std::string(dtype_name(dt)).c_str());
      std::printf("# shapes: every rank's A [M, K] and B [K, N]; time: per call, the median of %d rounds, each one "
                  "batch of %d back-to-back calls per variant in turn (each round in another order), the slowest rank's\n",
                  o.rounds, o.iters);
      std::printf("# checked before timing: %d sampled entries of C per rank against double-precision sums of fresh "
                  "random inputs; speedup = baseline time / time\n",
                  o.check);
      std::fflush(stdout);
    }
    std::uint64_t seed = 1000;
    for (LibraryOp op : ops_list) {
      if (me == 0) print_header(op, dt);
      for (GemmShape shape : shapes) {
        if (op == LibraryOp::matmul_reduce_scatter && shape.m % W) shape.m += W - shape.m % W;
        // One GemmOp's variants (with its baseline, where it runs): checked, then timed
        // in alternating rounds, then printed.
        const auto measure = [&](samples::GemmOp& g, std::vector<Variant> variants, DType c_dt, const std::string& tag) {
          g.sample_entries(o.check, ++seed);
          std::string why;
          if (!o.baseline) why = "--no-baseline";
          else if (ctx.on_host()) why = "the host backend has no GPUs";
          else if (!g.load_baseline(&why) && why.empty()) why = "cuBLAS or NCCL could not be loaded";
          if (why.empty()) {
            variants.insert(variants.begin(), Variant{g.baseline_label() + tag, true, {}});
            variants.insert(variants.begin() + 1, Variant{"cublas alone (bound)" + tag, false, {}, true});
          }
          if (me == 0 && baseline_why.empty()) baseline_why = why;
          const auto run = [&](const Variant& v) {
            if (v.bound) g.run_gemm_alone();
            else if (v.baseline) g.run_baseline();
            else g.run_iris(v.options);
          };
          const Shape c = g.c_shape();
          std::vector<Row> here;
          for (const Variant& v : variants) {
            Row r{op, shape, static_cast<std::size_t>(c[0] * c[1]) * dtype_size(c_dt), g.flops(), v, false, "", 0, {}, 0};
            g.zero_c();
            if (v.bound) {  // nothing to check: it computes the GEMM alone
              r.ran = true;
              here.push_back(std::move(r));
              continue;
            }
            try {
              run(v);
            } catch (const Error& e) {
              r.why_not = e.what();  // refused before any rank enqueued work: every rank refuses alike
              here.push_back(std::move(r));
              continue;
            }
            ctx.synchronize();
            std::uint64_t bad = 0;
            for (std::uint64_t n : ctx.all_gather(static_cast<std::uint64_t>(g.wrong()))) bad += n;
            r.wrong = static_cast<std::size_t>(bad);
            r.ran = true;
            if (bad) wrong = true;
            here.push_back(std::move(r));
          }
          // Each round in an order of its own (the same on every rank: one seed), so no
          // variant always follows the same one: a variant after a long, slow one starts
          // on a cool GPU at full clocks, and always there it would look faster than it is.
          std::vector<std::vector<double>> times(here.size());
          std::vector<std::size_t> order(here.size());
          for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
          std::mt19937 shuffle_rng(20261127);
          for (int round = 0; round < o.rounds; ++round) {
            if (round > 0) std::shuffle(order.begin(), order.end(), shuffle_rng);
            for (std::size_t i : order) {
              if (!here[i].ran) continue;
              const Variant& v = here[i].variant;
              times[i].push_back(batch_us(ctx, [&] { run(v); }, round == 0 ? o.warmup : 0, o.iters));
            }
          }
          double baseline_us = 0;
          for (std::size_t i = 0; i < here.size(); ++i) {
            if (here[i].ran) {
              here[i].us = median(times[i]);
              here[i].round_us = times[i];
            }
            if (here[i].variant.baseline) baseline_us = here[i].us;
          }
          if (me == 0) {
            for (const Row& r : here) print_row(r, baseline_us);
            for (const Row& r : here) {
              if (!r.ran) std::printf("#   n/a: %s: %s\n", r.variant.label.c_str(), r.why_not.c_str());
            }
            for (const Row& r : here) {
              if (r.round_us.size() < 2) continue;
              const auto [lo, hi] = std::minmax_element(r.round_us.begin(), r.round_us.end());
              if (*hi > kUnevenRounds * *lo) {
                std::printf("#   uneven rounds: %s: %.1f .. %.1f us a call\n", r.variant.label.c_str(), *lo, *hi);
              }
            }
            std::fflush(stdout);
            rows.insert(rows.end(), here.begin(), here.end());
          }
        };
        {
          samples::GemmOp g(ctx, op, dt, {shape.m, shape.n, shape.k}, seed += 2);
          measure(g, variants_of(op), dt, "");
        }
        if (op == LibraryOp::matmul_all_reduce) {
          // The atomic form adds into an f32 C: against cuBLAS writing f32 and NCCL summing f32.
          samples::GemmOp g(ctx, op, dt, {shape.m, shape.n, shape.k}, seed += 2, DType::f32);
          measure(g, {Variant{"iris fused atomic (f32 C)", false, {.schedule = ops::Schedule::fused}}}, DType::f32,
                  " (f32 C)");
        }
      }
    }
  });
  if (rc != 0 || !printer) return rc != 0 ? rc : wrong ? 1 : 0;
  if (!baseline_why.empty()) std::printf("# baseline (cuBLAS + NCCL): SKIPPED (%s)\n", baseline_why.c_str());
  std::size_t bad = 0;
  for (const Row& r : rows) {
    if (!r.wrong) continue;
    bad += r.wrong;
    std::printf("# FAILED: %s %lldx%lldx%lld, %s: %zu wrong entries\n", samples::name(r.op),
                static_cast<long long>(r.shape.m), static_cast<long long>(r.shape.n), static_cast<long long>(r.shape.k),
                r.variant.label.c_str(), r.wrong);
  }
  std::printf("#\n# wrong entries: %zu %s\n", bad, bad ? "FAILED" : "OK");
  if (!o.json_path.empty()) {
    nlohmann::json js;
    js["bench"] = "ops";
    js["date"] = date;
    js["device"] = device_name;
    js["backend"] = backend;
    js["world"] = world;
    js["dtype"] = std::string(dtype_name(dt));
    js["timing"] = "per call: the median of rounds, each one batch of iters back-to-back calls per variant in turn "
                   "(each round in another order), slowest rank";
    js["iters"] = o.iters;
    js["rounds"] = o.rounds;
    js["warmup"] = o.warmup;
    js["checked_entries_per_rank"] = o.check;
    js["baseline"] = baseline_why.empty() ? nlohmann::json{{"ran", true}}
                                          : nlohmann::json{{"ran", false}, {"why_not", baseline_why}};
    js["rows"] = nlohmann::json::array();
    for (const Row& r : rows) {
      nlohmann::json row = {{"op", samples::name(r.op)}, {"m", r.shape.m},       {"n", r.shape.n},
                            {"k", r.shape.k},            {"c_bytes", r.c_bytes}, {"variant", r.variant.label},
                            {"baseline", r.variant.baseline}};
      if (r.variant.bound) {
        row["bound"] = true;  // the GEMM alone: no schedule can take less
      } else if (!r.variant.baseline) {
        row["schedule"] = ops::name(r.variant.options.schedule);
        row["algorithm"] = ccl::name(r.variant.options.algorithm);
      }
      if (r.ran) {
        row["ran"] = true;
        row["time_us"] = r.us;
        row["rounds_us"] = r.round_us;
        row["tflops"] = r.flops / (r.us * 1e-6) / 1e12;
        row["wrong"] = r.wrong;
      } else {
        row["ran"] = false;
        row["why_not"] = r.why_not;
      }
      js["rows"].push_back(row);
    }
    write_json(o.json_path, js);
  }
  if (!o.svg_path.empty()) {
    write_svg(o.svg_path, rows,
              "iris-bench ops: " + std::to_string(world) + " ranks, " + device_name + " (" + backend + "), " + date);
    std::printf("# SVG written to %s\n", o.svg_path.c_str());
  }
  return wrong ? 1 : 0;
}

}  // namespace iris::bench
