// iris-bench ccl's tables, summaries, JSON and plots (ccl_rows.hpp).
#include "ccl_rows.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "common.hpp"
#include "iris/size.hpp"
#include "plot_svg.hpp"

namespace iris::bench {

// The table's layout: nccl-tests' columns, then the variant.
void print_block_header(const std::string& block, bool graph) {
  std::printf("#\n# %s\n", block.c_str());
  if (!graph) {
    std::printf("#%70s%33s\n", "out-of-place", "in-place");
    std::printf("#%11s %13s %6s %6s %6s %9s %8s %8s %6s %9s %8s %8s %6s  %s\n", "size", "count", "type", "redop", "root",
                "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", "variant");
    std::printf("#%11s %13s %6s %6s %6s %9s %8s %8s %6s %9s %8s %8s\n", "(B)", "(elements)", "", "", "", "(us)",
                "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)");
    return;
  }
  // Eager, then graph: time and bus bandwidth of each.
  std::printf("#%88s%51s\n", "out-of-place", "in-place");
  std::printf("#%11s %13s %6s %6s %6s %9s %8s %9s %8s %6s %9s %8s %9s %8s %6s  %s\n", "size", "count", "type", "redop",
              "root", "time", "busbw", "graph", "busbw", "#wrong", "time", "busbw", "graph", "busbw", "#wrong",
              "variant");
  std::printf("#%11s %13s %6s %6s %6s %9s %8s %9s %8s %6s %9s %8s %9s %8s\n", "(B)", "(elements)", "", "", "", "(us)",
              "(GB/s)", "(us)", "(GB/s)", "", "(us)", "(GB/s)", "(us)", "(GB/s)");
}

namespace {

double busbw(const Row& r, double us, int world) {
  return static_cast<double>(r.bytes) / (us * 1e-6) / 1e9 * bus_factor(r.variant.collective, world);
}

void print_graph_row(const Row& r, int world) {
  std::printf("%12zu %13zu %6s %6s %6d", r.bytes, r.count, std::string(dtype_name(r.dtype)).c_str(), r.redop.c_str(),
              r.root);
  for (const Measurement& m : r.place) {
    if (!m.ran) {
      std::printf(" %9s %8s %9s %8s %6s", "n/a", "", "", "", "");
      continue;
    }
    std::printf(m.us < 1e5 ? " %9.2f" : " %9.0f", m.us);
    std::printf(" %8.2f", busbw(r, m.us, world));
    std::printf(m.graph_us < 1e5 ? " %9.2f" : " %9.0f", m.graph_us);
    std::printf(" %8.2f %6zu", busbw(r, m.graph_us, world), m.wrong);
  }
  std::printf("  %s%s\n", r.variant.label().c_str(), r.picked.empty() ? "" : (" -> " + r.picked).c_str());
  std::fflush(stdout);
}

}  // namespace

void print_row(const Row& r, int world) {
  if (r.place[0].graph_us > 0 || r.place[1].graph_us > 0) return print_graph_row(r, world);
  std::printf("%12zu %13zu %6s %6s %6d", r.bytes, r.count, std::string(dtype_name(r.dtype)).c_str(), r.redop.c_str(),
              r.root);
  for (const Measurement& m : r.place) {
    if (!m.ran) {
      std::printf(" %9s %8s %8s %6s", "n/a", "", "", "");
      continue;
    }
    const double algbw = static_cast<double>(r.bytes) / (m.us * 1e-6) / 1e9;
    std::printf(m.us < 1e5 ? " %9.2f" : " %9.0f", m.us);
    std::printf(" %8.2f %8.2f %6zu", algbw, algbw * bus_factor(r.variant.collective, world), m.wrong);
  }
  std::printf("  %s%s\n", r.variant.label().c_str(), r.picked.empty() ? "" : (" -> " + r.picked).c_str());
  std::fflush(stdout);
}

// Under a table: why its n/a cells did not run, each reason once.
void print_not_run(const std::vector<Row>& rows, std::size_t first) {
  std::vector<std::string> said;
  for (std::size_t i = first; i < rows.size(); ++i) {
    const Measurement* m = rows[i].place;
    for (int pl = 0; pl < 2; ++pl) {
      if (m[pl].ran) continue;
      const bool both = !m[1 - pl].ran && m[0].why_not == m[1].why_not;
      if (both && pl == 1) break;
      const std::string line =
          rows[i].variant.label() + (both ? "" : pl ? ", in place" : ", out of place") + ": " + m[pl].why_not;
      if (std::find(said.begin(), said.end(), line) != said.end()) continue;
      said.push_back(line);
      std::printf("# n/a: %s\n", line.c_str());
    }
  }
}

// Where a row's times are compared: out of place, in place for broadcast (which has
// only that).
int placement_of(const Row& r) { return r.variant.collective == Collective::broadcast ? 1 : 0; }

// After a table with NCCL in it: per size, the fastest iris variant against NCCL in the
// same placement (out of place; in place for broadcast).
void print_against_nccl(const std::vector<Row>& rows, const std::string& block) {
  std::map<std::size_t, std::pair<const Row*, const Row*>> best;  // bytes -> (iris, NCCL)
  const int pl = rows.empty() ? 0 : placement_of(rows.front());
  for (const Row& r : rows) {
    if (r.block != block || !r.place[pl].ran) continue;
    auto& [iris, nccl] = best[r.bytes];
    if (r.variant.nccl) nccl = &r;
    else if (!iris || r.place[pl].us < iris->place[pl].us) iris = &r;
  }
  bool header = false;
  for (const auto& [bytes, pair] : best) {
    const auto [iris, nccl] = pair;
    if (!iris || !nccl) continue;
    if (!header) {
      std::printf("# %s against NCCL (%s): size, fastest iris variant, its time, NCCL's, NCCL time / iris time; "
                  "the host's time per call enqueueing them, iris and NCCL\n",
                  block.c_str(), pl ? "in place" : "out of place");
      header = true;
    }
    std::printf("#   %10s  %-22s %9.2f us %9.2f us  %5.2fx   host %6.2f us %6.2f us\n", format_bytes(bytes).c_str(),
                iris->variant.label().c_str(), iris->place[pl].us, nccl->place[pl].us,
                nccl->place[pl].us / iris->place[pl].us, iris->place[pl].host_us, nccl->place[pl].host_us);
  }
  // In a graph: the fastest iris variant there (it may be another one).
  std::map<std::size_t, std::pair<const Row*, const Row*>> graph_best;
  for (const Row& r : rows) {
    if (r.block != block || !r.place[pl].ran || !(r.place[pl].graph_us > 0)) continue;
    auto& [iris, nccl] = graph_best[r.bytes];
    if (r.variant.nccl) nccl = &r;
    else if (!iris || r.place[pl].graph_us < iris->place[pl].graph_us) iris = &r;
  }
  header = false;
  for (const auto& [bytes, pair] : graph_best) {
    const auto [iris, nccl] = pair;
    if (!iris || !nccl) continue;
    if (!header) {
      std::printf("# %s against NCCL in a CUDA graph (%s): size, fastest iris variant, its time, NCCL's, NCCL time / "
                  "iris time\n",
                  block.c_str(), pl ? "in place" : "out of place");
      header = true;
    }
    std::printf("#   %10s  %-22s %9.2f us %9.2f us  %5.2fx\n", format_bytes(bytes).c_str(),
                iris->variant.label().c_str(), iris->place[pl].graph_us, nccl->place[pl].graph_us,
                nccl->place[pl].graph_us / iris->place[pl].graph_us);
  }
}

// automatic against the fastest of the other iris variants at one size (ccl's issue 29
// asks that it never be more than 5% slower): eager and, where timed, in a graph, each
// against the fastest there (rows at the library's own program count only).
namespace {

constexpr double kAutomaticSlack = 1.05;

bool is_automatic(const Variant& v) {
  return v.collective == Collective::all_reduce ? v.algorithm == ccl::Algorithm::automatic : v.route == ccl::Route::automatic;
}

}  // namespace

std::vector<AutomaticAtSize> automatic_against_fastest(const std::vector<Row>& rows) {
  std::map<std::pair<std::string, std::size_t>, AutomaticAtSize> at;
  for (const Row& r : rows) {
    const int pl = placement_of(r);
    if (r.variant.nccl || r.variant.programs || !r.place[pl].ran) continue;
    AutomaticAtSize& a = at[{r.block, r.bytes}];
    a.block = r.block;
    a.bytes = r.bytes;
    if (is_automatic(r.variant)) {
      a.automatic = &r;
      continue;
    }
    if (!a.fastest || r.place[pl].us < a.fastest->place[pl].us) a.fastest = &r;
    if (r.place[pl].graph_us > 0 && (!a.fastest_graph || r.place[pl].graph_us < a.fastest_graph->place[pl].graph_us)) {
      a.fastest_graph = &r;
    }
  }
  std::vector<AutomaticAtSize> out;
  for (const auto& [key, a] : at) {
    if (a.automatic && a.fastest) out.push_back(a);
  }
  return out;
}

// The variant names without "iris ": what automatic's tables in ccl.cpp are written in.
std::string short_label(const Row& r) {
  const std::string l = r.variant.label();
  return l.rfind("iris ", 0) == 0 ? l.substr(5) : l;
}

// After a table with automatic and other iris variants in it: per size, automatic (and
// what it picked) against the fastest other variant, with the sizes where it is more than
// 5% slower marked; then the fastest variant size by size, runs of one variant taken
// together: where the crossovers of automatic's table (runtime/src/library/
// ccl_automatic.def) lie on this machine; --table writes its rows from them.
void print_automatic_against_fastest(const std::vector<Row>& rows, const std::string& block) {
  std::vector<AutomaticAtSize> sizes;
  for (const AutomaticAtSize& a : automatic_against_fastest(rows)) {
    if (a.block == block) sizes.push_back(a);
  }
  if (sizes.empty()) return;
  const int pl = placement_of(*sizes.front().automatic);
  std::printf("# %s: automatic against the fastest other variant (%s): size, what automatic ran, its time, the "
              "fastest, its time, automatic time / fastest time%s\n",
              block.c_str(), pl ? "in place" : "out of place", sizes.front().fastest_graph ? "; in a graph the same" : "");
  int slower = 0;
  for (const AutomaticAtSize& a : sizes) {
    const Measurement& m = a.automatic->place[pl];
    const double eager = m.us / a.fastest->place[pl].us;
    std::printf("#   %10s  -> %-14s %9.2f us  %-16s %9.2f us  %5.2fx", format_bytes(a.bytes).c_str(),
                a.automatic->picked.c_str(), m.us, short_label(*a.fastest).c_str(), a.fastest->place[pl].us, eager);
    bool late = eager > kAutomaticSlack;
    if (a.fastest_graph && m.graph_us > 0) {
      const double graph = m.graph_us / a.fastest_graph->place[pl].graph_us;
      std::printf("   graph %8.2f us  %-16s %8.2f us  %5.2fx", m.graph_us, short_label(*a.fastest_graph).c_str(),
                  a.fastest_graph->place[pl].graph_us, graph);
      late = late || graph > kAutomaticSlack;
    }
    std::printf("%s\n", late ? "   more than 5% slower" : "");
    slower += late;
  }
  if (slower) {
    std::printf("# automatic was more than 5%% slower than the fastest variant at %d of %zu sizes\n", slower, sizes.size());
  } else {
    std::printf("# automatic was within 5%% of the fastest variant at every size\n");
  }
  // The fastest variant size by size (in a graph where timed there: the launch cost is
  // the same for every variant), runs of one taken together.
  std::string line, last;
  std::size_t from = 0, to = 0;
  const auto flush = [&] {
    if (last.empty()) return;
    line += (line.empty() ? "" : ", ") + last + " " + format_bytes(from) + (from == to ? "" : " - " + format_bytes(to));
  };
  for (const AutomaticAtSize& a : sizes) {
    const Row& f = a.fastest_graph ? *a.fastest_graph : *a.fastest;
    const std::string name = short_label(f);
    if (name != last) {
      flush();
      last = name;
      from = a.bytes;
    }
    to = a.bytes;
  }
  flush();
  std::printf("# fastest%s, size by size: %s\n", sizes.front().fastest_graph ? " in a graph" : "", line.c_str());
}

nlohmann::json measurement_json(const Measurement& m, const Row& r, int world) {
  if (!m.ran) return {{"ran", false}, {"why_not", m.why_not}};
  const double algbw = static_cast<double>(r.bytes) / (m.us * 1e-6) / 1e9;
  nlohmann::json js = {{"ran", true},
                       {"time_us", m.us},
                       {"algbw_gbps", algbw},
                       {"busbw_gbps", algbw * bus_factor(r.variant.collective, world)},
                       {"wrong", m.wrong}};
  if (m.host_us > 0) js["host_us_per_call"] = m.host_us;
  if (m.graph_us > 0) {
    js["graph_time_us"] = m.graph_us;
    js["graph_busbw_gbps"] = busbw(r, m.graph_us, world);
  }
  return js;
}

// Time per call (busbw false) or bus bandwidth (true) against size: a panel per table, a
// line per variant and placement, and with --graph a dotted line per variant in a graph.
void write_svg(const std::string& path, const std::vector<Row>& rows, const std::string& title, bool bandwidth,
               int world) {
  std::vector<PlotPanel> panels;
  std::map<std::string, std::size_t> colors;  // variant label -> palette index, the same in every panel
  for (const Row& r : rows) {
    if (panels.empty() || panels.back().title != r.block) panels.push_back({r.block, {}});
    const std::string label = r.variant.label();
    const std::size_t color = colors.emplace(label, colors.size()).first->second;
    for (int pl = 0; pl < 2; ++pl) {
      if (!r.place[pl].ran) continue;
      for (int graph = 0; graph < 2; ++graph) {
        const double us = graph ? r.place[pl].graph_us : r.place[pl].us;
        if (!(us > 0)) continue;
        const std::string name = label + (pl ? ", in place" : ", out of place") + (graph ? ", graph" : "");
        auto& series = panels.back().series;
        auto it = std::find_if(series.begin(), series.end(), [&](const PlotSeries& s) { return s.label == name; });
        if (it == series.end()) {
          series.push_back(PlotSeries{name, plot_color(color), pl == 1, graph == 1, {}});
          it = series.end() - 1;
        }
        it->points.emplace_back(static_cast<double>(r.bytes), bandwidth ? busbw(r, us, world) : us);
      }
    }
  }
  const std::string note = std::string(bandwidth ? "bus bandwidth" : "time per call") +
                           " against size (both log scales); solid: out of place, dashed: in place, dotted: out of "
                           "place in a CUDA graph (--graph)";
  write_loglog_svg(path, title, note, "size (bytes, as nccl-tests counts it)",
                   bandwidth ? "bus bandwidth (GB/s)" : "time per call (us)", panels);
}

// FILE.svg -> FILE-busbw.svg (FILE-busbw.svg where there is no .svg).
std::string busbw_path(const std::string& path) {
  const std::size_t dot = path.size() >= 4 && path.compare(path.size() - 4, 4, ".svg") == 0 ? path.size() - 4 : path.size();
  return path.substr(0, dot) + "-busbw.svg";
}

}  // namespace iris::bench
