// iris-bench ccl: every collective of iris/ccl.hpp (each all_reduce algorithm on its
// own) over a sweep of sizes, out of place and in place, checked, then timed the way
// nccl-tests times (the average of a batch of back-to-back calls), with NCCL on the same
// buffers in the same run. Columns follow nccl-tests'; the variant comes last.
#include "ccl.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "ccl_reference.hpp"
#include "ccl_rows.hpp"
#include "ccl_table.hpp"
#include "iris/ccl.hpp"
#include "iris/iris.hpp"
#include "nccl.hpp"
#include "common.hpp"
#include "plot_svg.hpp"

namespace iris::bench {
namespace {

// The all_reduce algorithms timed one by one (automatic is timed too, after them, with
// the one it picked shown). A new ccl::Algorithm is added here.
constexpr ccl::Algorithm kAllReduceAlgorithms[] = {ccl::Algorithm::one_shot, ccl::Algorithm::two_shot, ccl::Algorithm::ring,
                                                   ccl::Algorithm::one_shot_push, ccl::Algorithm::two_shot_push,
                                                   ccl::Algorithm::one_shot_ll, ccl::Algorithm::two_shot_ll,
                                                   ccl::Algorithm::one_shot_slots, ccl::Algorithm::two_shot_slots,
                                                   ccl::Algorithm::atomic};
constexpr Collective kCollectives[] = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                                       Collective::all_to_all, Collective::broadcast};
constexpr DType kDTypes[] = {DType::f32, DType::f16, DType::bf16, DType::i32, DType::i64, DType::u32, DType::u64};
constexpr ccl::ReduceOp kReduceOps[] = {ccl::ReduceOp::sum, ccl::ReduceOp::max, ccl::ReduceOp::min};

// The largest all_reduce one_shot_push and staged route are timed at: their scratch is
// 2 world times the size, and automatic picks them far below.
constexpr std::size_t kOneShotPushMost = std::size_t{16} << 20;

bool reduces(Collective c) { return c == Collective::all_reduce || c == Collective::reduce_scatter; }


template <class T, std::size_t N, class Name>
T parse_name(const T (&all)[N], const std::string& s, const char* what, Name name) {
  std::string known;
  for (T x : all) {
    if (s == name(x)) return x;
    known += (known.empty() ? "" : ", ") + std::string(name(x));
  }
  throw Error(std::string(what) + ": unknown '" + s + "' (known: " + known + ")");
}

DType parse_dtype(const std::string& s) {
  return parse_name(kDTypes, s, "--dtypes", [](DType t) { return std::string(dtype_name(t)); });
}
ccl::ReduceOp parse_redop(const std::string& s) {
  return parse_name(kReduceOps, s, "--redops", [](ccl::ReduceOp op) { return std::string(ccl::name(op)); });
}
Collective parse_collective(const std::string& s) {
  return parse_name(kCollectives, s, "--collectives", [](Collective c) { return std::string(name(c)); });
}
ccl::Route parse_route(const std::string& s) {
  constexpr ccl::Route kRoutes[] = {ccl::Route::automatic, ccl::Route::direct, ccl::Route::staged, ccl::Route::ll,
                                    ccl::Route::slots};
  return parse_name(kRoutes, s, "--routes", [](ccl::Route r) { return std::string(ccl::name(r)); });
}
ccl::Algorithm parse_algorithm(const std::string& s) {
  if (s == ccl::name(ccl::Algorithm::automatic)) return ccl::Algorithm::automatic;
  return parse_name(kAllReduceAlgorithms, s, "--algorithms (or automatic)",
                    [](ccl::Algorithm a) { return std::string(ccl::name(a)); });
}


// Where a rank's input goes and its output comes out: out of place, input in `a` and
// output in `b`; in place as nccl.h defines it, all in `b`.
struct Placement {
  char* in;
  char* out;
};
Placement placement(const CclCall& c, bool in_place, int rank, char* a, char* b) {
  if (!in_place) return {a, b};
  const std::size_t mine = c.n * dtype_size(c.dtype) * static_cast<std::size_t>(rank);
  if (c.collective == Collective::all_gather) return {b + mine, b};
  if (c.collective == Collective::reduce_scatter) return {b, b + mine};
  return {b, b};
}

// Why a variant cannot make this call ("" when it can).
std::string unsupported(const Variant& v, const CclCall& c, bool in_place) {
  if (c.collective == Collective::all_to_all && in_place) {
    return v.nccl ? "NCCL's all-to-all is out of place only"
                  : "iris::ccl::all_to_all is out of place only (peers write what it reads)";
  }
  if (c.collective == Collective::broadcast && !in_place && !v.nccl) return "iris::ccl::broadcast is in place only";
  if (!v.nccl && c.collective == Collective::all_reduce &&
      (v.algorithm == ccl::Algorithm::one_shot_push || v.algorithm == ccl::Algorithm::one_shot_ll ||
       v.algorithm == ccl::Algorithm::two_shot_ll || v.algorithm == ccl::Algorithm::one_shot_slots) &&
      c.n * dtype_size(c.dtype) > kOneShotPushMost) {
    return std::string(ccl::name(v.algorithm)) + " is timed up to 16 MiB (its scratch holds 2 world inputs)";
  }
  if (!v.nccl && v.route == ccl::Route::ll) {
    if (dtype_size(c.dtype) > 4) return "the ll route carries types of at most 4 bytes";
    if (output_count(c) * dtype_size(c.dtype) > ccl::kLlMostBytes) return "the ll route gives out at most " + std::to_string(ccl::kLlMostBytes >> 20) + " MiB a call";
  }
  if (!v.nccl && v.route == ccl::Route::slots) {
    if (c.dtype != DType::f32 && c.dtype != DType::f16 && c.dtype != DType::bf16) return "the slots route sends f32, f16 or bf16";
    if (output_count(c) * dtype_size(c.dtype) > ccl::kSlotsMostBytes) {
      return "the slots route gives out at most " + std::to_string(ccl::kSlotsMostBytes >> 20) + " MiB a call";
    }
  }
  if (!v.nccl && (v.route == ccl::Route::staged || v.route == ccl::Route::ll || v.route == ccl::Route::slots) &&
      output_count(c) * dtype_size(c.dtype) > kOneShotPushMost) {
    return std::string("the ") + ccl::name(v.route) +
           " route is timed up to 16 MiB of output (its scratch holds 2 world outputs, or more)";
  }
  if (!v.nccl && c.collective == Collective::all_reduce) {
    try {
      ccl::choose_all_reduce(v.algorithm, c.n * dtype_size(c.dtype), c.world, c.dtype, c.op);
    } catch (const Error& e) {
      return e.what();
    }
  }
  return "";
}

// Enqueues one call on the rank's stream. iris::ccl's typed API takes whole tensors;
// nccl.h's in-place forms address a slice of one buffer, so the pointer entry points
// behind it are called here.
void enqueue(Context& ctx, samples::Nccl* nccl, const Variant& v, const CclCall& c, const Placement& p) {
  const Stream s = ctx.stream();
  if (v.nccl) {
    switch (c.collective) {
      case Collective::all_reduce: nccl->all_reduce(p.in, p.out, c.n, c.dtype, c.op, s); return;
      case Collective::all_gather: nccl->all_gather(p.in, p.out, c.n, c.dtype, s); return;
      case Collective::reduce_scatter: nccl->reduce_scatter(p.in, p.out, c.n, c.dtype, c.op, s); return;
      case Collective::all_to_all: nccl->all_to_all(p.in, p.out, c.n, c.dtype, s); return;
      case Collective::broadcast: nccl->broadcast(p.in, p.out, c.n, c.dtype, c.root, s); return;
    }
    return;
  }
  ccl::Options o;
  o.op = c.op;
  o.algorithm = v.algorithm;
  o.programs = v.programs;
  o.route = v.route;
  switch (c.collective) {
    case Collective::all_reduce: ccl::detail::all_reduce(ctx, c.dtype, p.in, p.out, c.n, o); return;
    case Collective::all_gather: ccl::detail::all_gather(ctx, c.dtype, p.in, p.out, c.n, o); return;
    case Collective::reduce_scatter: ccl::detail::reduce_scatter(ctx, c.dtype, p.in, p.out, c.n, o); return;
    case Collective::all_to_all: ccl::detail::all_to_all(ctx, c.dtype, p.in, p.out, c.n, o); return;
    case Collective::broadcast: ccl::detail::broadcast(ctx, c.dtype, p.out, c.n, c.root, o); return;
  }
}

// One call on fresh inputs, every output element compared with the host reference.
// Returns the wrong elements of every rank together.
std::size_t check(Context& ctx, samples::Nccl* nccl, const Variant& v, const CclCall& c, bool in_place, char* a,
                  char* b) {
  const std::size_t es = dtype_size(c.dtype);
  const std::size_t in_bytes = input_count(c) * es, out_bytes = output_count(c) * es;
  const Placement p = placement(c, in_place, ctx.rank(), a, b);
  // All ones (NaN in the float types) where the output goes, so a write that never
  // happens shows; then the input.
  std::vector<unsigned char> host(std::max(in_bytes, out_bytes), 0xff);
  ctx.copy_from_host(b, host.data(), host.size());
  write_input(c, ctx.rank(), host.data());
  ctx.copy_from_host(p.in, host.data(), in_bytes);
  ctx.barrier();
  enqueue(ctx, nccl, v, c, p);
  ctx.synchronize();
  ctx.copy_to_host(host.data(), p.out, out_bytes);
  const std::uint64_t mine = count_wrong(c, ctx.rank(), host.data());
  std::uint64_t all = 0;
  for (std::uint64_t w : ctx.all_gather(mine)) all += w;
  ctx.barrier();
  return static_cast<std::size_t>(all);
}

// min, min * factor, ... up to max (nccl-tests' -b -f -e), and max itself where the
// factor steps over it (8 B x 4 reaches 128 MiB, then 256 MiB).
std::vector<std::size_t> sweep(const CclBenchOptions& o) {
  if (!o.sizes.empty()) return o.sizes;
  std::vector<std::size_t> out;
  for (double s = static_cast<double>(o.min_bytes); s <= static_cast<double>(o.max_bytes);
       s = std::max(s + 1, std::floor(s * o.factor))) {
    out.push_back(static_cast<std::size_t>(s));
  }
  if (out.back() != o.max_bytes) out.push_back(o.max_bytes);
  return out;
}

}  // namespace

std::string all_reduce_algorithm_names() {
  std::string out;
  for (ccl::Algorithm a : kAllReduceAlgorithms) out += std::string(ccl::name(a)) + ",";
  return out + ccl::name(ccl::Algorithm::automatic);
}

void check_options(const CclBenchOptions& o) {
  for (const std::string& s : o.dtypes) parse_dtype(s);
  for (const std::string& s : o.redops) parse_redop(s);
  for (const std::string& s : o.collectives) parse_collective(s);
  for (const std::string& s : o.algorithms) parse_algorithm(s);
  for (const std::string& s : o.routes) parse_route(s);
  if (o.dtypes.empty() || o.redops.empty()) throw Error("--dtypes and --redops need at least one name");
  if (o.sizes.empty() && (o.min_bytes < 1 || o.max_bytes < o.min_bytes || !(o.factor > 1))) {
    throw Error("the sweep needs 1 <= --min-bytes <= --max-bytes and --factor > 1");
  }
  for (std::size_t b : o.sizes) {
    if (b == 0) throw Error("--sizes: every size must be at least 1 byte");
  }
  for (int p : o.programs) {
    if (p < 0) throw Error("--programs: a program count is 0 (automatic) or more");
  }
  if (o.root < 0) throw Error("--root must be a rank");
  if (o.table_from && o.table_path.empty()) throw Error("--table-worlds needs --table FILE");
}

int run_ccl(const CclBenchOptions& o) {
  check_options(o);
  const std::vector<std::size_t> sizes = sweep(o);
  const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());
  std::vector<DType> dtypes;
  for (const std::string& s : o.dtypes) dtypes.push_back(parse_dtype(s));
  std::vector<ccl::ReduceOp> redops;
  for (const std::string& s : o.redops) redops.push_back(parse_redop(s));
  std::vector<Collective> collectives;
  for (Collective c : kCollectives) {
    if (o.collectives.empty() || std::find(o.collectives.begin(), o.collectives.end(), name(c)) != o.collectives.end()) {
      collectives.push_back(c);
    }
  }
  std::vector<ccl::Route> routes;
  for (const std::string& s : o.routes) routes.push_back(parse_route(s));
  if (routes.empty()) routes.push_back(ccl::Route::automatic);
  std::vector<ccl::Algorithm> algorithms;
  for (ccl::Algorithm a : kAllReduceAlgorithms) algorithms.push_back(a);
  algorithms.push_back(ccl::Algorithm::automatic);
  if (!o.algorithms.empty()) {
    std::erase_if(algorithms, [&](ccl::Algorithm a) {
      return std::find(o.algorithms.begin(), o.algorithms.end(), ccl::name(a)) == o.algorithms.end();
    });
  }

  // Two buffers of the largest size, and the collectives' scratch, which each kernel
  // keeps (docs/library.md): in-place calls that stage their input (1x), two_shot_push
  // and reduce_scatter (1x each), the ring (4x).
  Options opt = o.options;
  if (opt.heap_bytes == Options{}.heap_bytes) {
    const std::size_t g = Options::kHeapGranularity;
    opt.heap_bytes = std::max(opt.heap_bytes, (9 * largest + (std::size_t{64} << 20) + g - 1) / g * g);
  }
  // Before any thread starts: NCCL reads it in its init, NVLink multicast stays off.
  setenv("NCCL_NVLS_ENABLE", "0", 0);

  std::vector<Row> rows;  // rank 0's
  std::string nccl_version, nccl_all_to_all, nccl_why, device_name, backend;
  int world = 0, gpus = 0;
  std::atomic<bool> wrong{false};  // set by every rank that saw a wrong result
  bool printer = false;  // this process runs rank 0 (under mpirun, one process does)
  const std::string date = utc_now();
  const int rc = run(opt, [&](Context& ctx) {
    const int me = ctx.rank(), W = ctx.world();
    // The host backend's streams run work as it is enqueued: it has no graphs.
    const bool graph = o.graph && !ctx.on_host();
    if (o.root >= W) throw Error("--root " + std::to_string(o.root) + " is not a rank (world " + std::to_string(W) + ")");
    std::vector<int> devices = ctx.all_gather(ctx.device());
    std::sort(devices.begin(), devices.end());
    const int distinct = static_cast<int>(std::unique(devices.begin(), devices.end()) - devices.begin());
    std::unique_ptr<samples::Nccl> nccl;
    std::string why;
    if (!o.nccl) why = "--no-nccl";
    else if (ctx.on_host()) why = "the host backend has no GPUs";
    else nccl = samples::Nccl::create(ctx, &why);
    if (me == 0) {
      printer = true;
      world = W;
      gpus = distinct;
      device_name = ctx.device_name();
      backend = ctx.backend();
      nccl_why = why;
      if (nccl) {
        nccl_version = nccl->version();
        nccl_all_to_all = nccl->all_to_all_method();
      }
      std::printf("# iris-bench ccl: %d ranks on %d x %s (%s backend), %s\n", W, distinct, device_name.c_str(),
                  backend.c_str(), date.c_str());
      std::printf("# time: per call, the average of a batch of %d back-to-back calls after %d warm-up calls, the "
                  "slowest rank's (%s)\n",
                  o.iters, o.warmup, ctx.on_host() ? "std::chrono" : "CUDA events on each rank's stream");
      if (graph) {
        std::printf("# graph: the same batch captured once in a CUDA graph, replayed %d times untimed, then once "
                    "timed (nccl-tests -G)\n",
                    std::max(1, o.warmup));
      } else if (o.graph) {
        std::printf("# graph: SKIPPED (the host backend has no graphs)\n");
      }
      std::printf("# algbw = size / time; busbw = algbw x 2(n-1)/n all_reduce, (n-1)/n all_gather, reduce_scatter, "
                  "all_to_all, 1 broadcast (nccl-tests)\n");
      std::printf("# checked once per case before timing: fresh random inputs against a host reference from every "
                  "rank's input; #wrong counts elements over all ranks\n");
      if (nccl) {
        std::printf("# NCCL %s on the same buffers and stream (NCCL_NVLS_ENABLE=%s); all_to_all by %s\n",
                    nccl_version.c_str(), std::getenv("NCCL_NVLS_ENABLE"), nccl_all_to_all.c_str());
      } else {
        std::printf("NCCL: SKIPPED (%s)\n", why.c_str());
      }
      std::fflush(stdout);
    }
    char* a = static_cast<char*>(ctx.heap_alloc(largest));
    char* b = static_cast<char*>(ctx.heap_alloc(largest));
    std::uint64_t calls = 0;  // seeds: every check gets fresh inputs
    for (DType dt : dtypes) {
      for (Collective coll : collectives) {
        std::vector<Variant> variants;
        const std::vector<int> counts = o.programs.empty() ? std::vector<int>{0} : o.programs;
        for (int p : counts) {
          if (coll == Collective::all_reduce) {
            for (ccl::Algorithm al : algorithms) variants.push_back({coll, false, al, p});
          } else {
            for (ccl::Route rt : routes) variants.push_back({coll, false, ccl::Algorithm::automatic, p, rt});
          }
        }
        if (nccl) variants.push_back({coll, true, ccl::Algorithm::automatic});
        const std::vector<ccl::ReduceOp> ops = reduces(coll) ? redops : std::vector<ccl::ReduceOp>{ccl::ReduceOp::sum};
        for (ccl::ReduceOp op : ops) {
          const std::string redop = reduces(coll) ? ccl::name(op) : "none";
          const std::string block = std::string(name(coll)) + " " + std::string(dtype_name(dt)) +
                                    (reduces(coll) ? " " + redop : "") +
                                    (coll == Collective::broadcast ? " root " + std::to_string(o.root) : "");
          if (me == 0) print_block_header(block, graph);
          const std::size_t first_row = me == 0 ? rows.size() : 0;  // rows are rank 0's alone
          for (std::size_t bytes : sizes) {
            const std::size_t elements = bytes / dtype_size(dt);
            const bool split = coll == Collective::all_gather || coll == Collective::reduce_scatter ||
                               coll == Collective::all_to_all;
            CclCall c{coll, dt, op, coll == Collective::broadcast ? o.root : 0, split ? elements / W : elements, W, 0};
            if (c.n == 0) continue;  // fewer elements than ranks
            const std::size_t count = split ? c.n * static_cast<std::size_t>(W) : c.n;
            for (const Variant& v : variants) {
              Row r{v, block, dt, redop, coll == Collective::broadcast ? o.root : -1, count * dtype_size(dt), count,
                    "", {}};
              if (!v.nccl && coll == Collective::all_reduce && v.algorithm == ccl::Algorithm::automatic) {
                r.picked = ccl::name(ccl::choose_all_reduce(v.algorithm, r.bytes, W, dt, op));
              } else if (!v.nccl && coll != Collective::all_reduce && v.route == ccl::Route::automatic) {
                // Output bytes: the gathered buffer, the scattered slice, x.
                const std::size_t out = coll == Collective::reduce_scatter ? c.n * dtype_size(dt) : r.bytes;
                r.picked = ccl::name(ccl::choose_route(std::string(name(coll)).c_str(), v.route, out, W, dt));
              }
              for (int pl = 0; pl < 2; ++pl) {
                Measurement& m = r.place[pl];
                m.why_not = unsupported(v, c, pl == 1);
                if (!m.why_not.empty()) continue;
                c.seed = ++calls * 0x9e3779b97f4a7c15ull;
                // A variant the library refuses on every rank (too few programs for
                // the size, say) is an n/a cell with the library's reason, and the
                // sweep goes on; refused on some ranks only, it ends the run.
                std::string refused;
                try {
                  m.wrong = check(ctx, nccl.get(), v, c, pl == 1, a, b);
                } catch (const Error& e) {
                  refused = e.what();
                }
                const std::vector<double> refusals = ctx.all_gather(refused.empty() ? 0.0 : 1.0);
                const auto n_refused = std::count(refusals.begin(), refusals.end(), 1.0);
                if (n_refused == static_cast<long>(refusals.size())) {
                  m.why_not = refused;
                  continue;
                }
                if (n_refused > 0) {
                  throw Error(refused.empty() ? v.label() + ": refused by " + std::to_string(n_refused) + " of " +
                                                    std::to_string(refusals.size()) + " ranks, not by this one"
                                              : refused);
                }
                const Placement p = placement(c, pl == 1, me, a, b);
                m.us = batch_us(ctx, [&] { enqueue(ctx, nccl.get(), v, c, p); }, o.warmup, o.iters, &m.host_us);
                if (graph) m.graph_us = graph_batch_us(ctx, [&] { enqueue(ctx, nccl.get(), v, c, p); }, o.warmup, o.iters);
                m.ran = true;
                if (m.wrong) wrong = true;
              }
              if (me == 0) {
                print_row(r, W);
                rows.push_back(std::move(r));
              }
            }
          }
          if (me == 0) print_not_run(rows, first_row);
          if (me == 0) {
            print_automatic_against_fastest(
                std::vector<Row>(rows.begin() + static_cast<std::ptrdiff_t>(first_row), rows.end()), block);
          }
          if (me == 0 && nccl) {
            print_against_nccl(std::vector<Row>(rows.begin() + static_cast<std::ptrdiff_t>(first_row), rows.end()),
                               block);
          }
        }
      }
    }
    ctx.heap_free(b);
    ctx.heap_free(a);
  });
  if (rc != 0 || !printer) return rc != 0 ? rc : wrong ? 1 : 0;

  std::size_t bad = 0;
  for (const Row& r : rows) {
    for (int pl = 0; pl < 2; ++pl) {
      if (!r.place[pl].wrong) continue;
      bad += r.place[pl].wrong;
      std::printf("# FAILED: %s, %zu B, %s, %s: %zu wrong elements\n", r.block.c_str(), r.bytes,
                  r.variant.label().c_str(), pl ? "in place" : "out of place", r.place[pl].wrong);
    }
  }
  std::printf("#\n# wrong elements: %zu %s\n", bad, bad ? "FAILED" : "OK");
  if (!o.json_path.empty()) {
    nlohmann::json js;
    js["bench"] = "ccl";
    js["date"] = date;
    js["device"] = device_name;
    js["backend"] = backend;
    js["world"] = world;
    js["gpus"] = gpus;
    js["timing"] = "per call: the average of a batch of iters back-to-back calls after warmup calls, slowest rank";
    js["iters"] = o.iters;
    js["warmup"] = o.warmup;
    js["nccl"] = nccl_version.empty()
                     ? nlohmann::json{{"ran", false}, {"why_not", nccl_why}}
                     : nlohmann::json{{"ran", true}, {"version", nccl_version}, {"all_to_all", nccl_all_to_all}};
    js["rows"] = nlohmann::json::array();
    for (const Row& r : rows) {
      nlohmann::json row = {{"collective", name(r.variant.collective)},
                            {"library", r.variant.nccl ? "nccl" : "iris"},
                            {"variant", r.variant.label()},
                            {"dtype", std::string(dtype_name(r.dtype))},
                            {"redop", r.redop},
                            {"root", r.root},
                            {"bytes", r.bytes},
                            {"count", r.count},
                            {"out_of_place", measurement_json(r.place[0], r, world)},
                            {"in_place", measurement_json(r.place[1], r, world)}};
      if (!r.variant.nccl && r.variant.collective == Collective::all_reduce) {
        row["algorithm"] = ccl::name(r.variant.algorithm);
      }
      if (!r.picked.empty()) row["picked"] = r.picked;
      if (r.variant.programs) row["programs"] = r.variant.programs;
      if (!r.variant.nccl && r.variant.collective != Collective::all_reduce) row["route"] = ccl::name(r.variant.route);
      js["rows"].push_back(row);
    }
    js["automatic"] = nlohmann::json::array();
    for (const AutomaticAtSize& a : automatic_against_fastest(rows)) {
      const int pl = placement_of(*a.automatic);
      nlohmann::json at = {{"block", a.block},
                           {"bytes", a.bytes},
                           {"picked", a.automatic->picked},
                           {"time_us", a.automatic->place[pl].us},
                           {"fastest", short_label(*a.fastest)},
                           {"fastest_us", a.fastest->place[pl].us}};
      if (a.fastest_graph && a.automatic->place[pl].graph_us > 0) {
        at["graph_time_us"] = a.automatic->place[pl].graph_us;
        at["graph_fastest"] = short_label(*a.fastest_graph);
        at["graph_fastest_us"] = a.fastest_graph->place[pl].graph_us;
      }
      js["automatic"].push_back(at);
    }
    write_json(o.json_path, js);
  }
  if (!o.table_path.empty()) {
    const int from = o.table_from ? o.table_from : world, to = o.table_from ? o.table_to : world;
    std::string sizes_text, kinds;
    for (std::size_t b : sizes) {
      std::string t = format_bytes(b);
      std::erase(t, ' ');
      sizes_text += (sizes_text.empty() ? "" : ",") + t;
    }
    for (const std::string& d : o.dtypes) kinds += (kinds.empty() ? "" : ",") + d;
    const std::string provenance = "// Measured on " + std::to_string(gpus) + " x " + device_name + " (" + backend +
                                   " backend, " + std::to_string(world) + " ranks), " + date + ":\n// iris-bench ccl" +
                                   (o.graph ? " --graph" : "") + " --dtypes " + kinds + " --sizes " + sizes_text +
                                   " --table ...\n";
    std::printf("%s", write_automatic_table(o.table_path, rows, world, from, to, provenance).c_str());
  }
  if (!o.svg_path.empty()) {
    const std::string title =
        "iris-bench ccl: " + std::to_string(world) + " ranks, " + device_name + " (" + backend + "), " + date;
    write_svg(o.svg_path, rows, title, false, world);
    write_svg(busbw_path(o.svg_path), rows, title, true, world);
    std::printf("# SVG written to %s and %s\n", o.svg_path.c_str(), busbw_path(o.svg_path).c_str());
  }
  return wrong ? 1 : 0;
}

}  // namespace iris::bench
