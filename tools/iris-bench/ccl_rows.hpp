// iris-bench ccl's rows and what is printed and written from them: a table's lines, the
// summaries under it (n/a reasons, the fastest iris variant against NCCL, automatic
// against the fastest variant), the JSON of a measurement and the plots
// (ccl_report.cpp). ccl.cpp measures; this says what was measured.
#pragma once

#include <cstddef>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "ccl_reference.hpp"
#include "iris/ccl.hpp"

namespace iris::bench {

// nccl-tests' bus bandwidth factor: what each rank's links carry relative to the size.
inline double bus_factor(Collective c, int world) {
  const double n = world;
  switch (c) {
    case Collective::all_reduce: return 2 * (n - 1) / n;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all: return (n - 1) / n;
    case Collective::broadcast: return 1;
  }
  return 1;
}

// One line of a table: a library (and all_reduce algorithm) doing one collective.
struct Variant {
  Collective collective;
  bool nccl = false;
  ccl::Algorithm algorithm = ccl::Algorithm::automatic;  // iris all_reduce
  int programs = 0;                                      // iris: ccl::Options::programs
  ccl::Route route = ccl::Route::automatic;              // iris, but all_reduce
  std::string label() const {
    if (nccl) return "NCCL";
    std::string l = collective == Collective::all_reduce ? std::string("iris ") + ccl::name(algorithm)
                    : route == ccl::Route::automatic   ? "iris"
                                                       : std::string("iris ") + ccl::name(route);
    return programs ? l + " P=" + std::to_string(programs) : l;
  }
};

struct Measurement {
  bool ran = false;
  std::string why_not;    // when it did not run
  double us = 0;          // per call, the slowest rank's
  double graph_us = 0;    // the same batch replayed from a CUDA graph (--graph), else 0
  double host_us = 0;     // the host's time per call enqueueing the eager batch (device backends)
  std::size_t wrong = 0;  // elements, summed over ranks
};

struct Row {
  Variant variant;
  std::string block;  // "all_reduce f32 sum": one table
  DType dtype;
  std::string redop;  // "none" where nothing reduces
  int root = -1;
  std::size_t bytes = 0, count = 0;  // nccl-tests' size and count
  std::string picked;                // iris automatic: the algorithm that ran
  Measurement place[2];              // out of place, in place
};

// The table's header: nccl-tests' columns (with --graph, eager and graph columns), then
// the variant.
void print_block_header(const std::string& block, bool graph);
// One line of a table, its times and bus bandwidths.
void print_row(const Row& r, int world);
// Under a table: why its n/a cells (rows from `first` on) did not run, each reason once.
void print_not_run(const std::vector<Row>& rows, std::size_t first);
// Under a table with NCCL in it: per size, the fastest iris variant against NCCL.
void print_against_nccl(const std::vector<Row>& rows, const std::string& block);

// Where a row's times are compared: out of place, in place for broadcast (which has only
// that).
int placement_of(const Row& r);

// automatic against the fastest other iris variant at one size of one table.
struct AutomaticAtSize {
  std::string block;
  std::size_t bytes = 0;
  const Row* automatic = nullptr;
  const Row* fastest = nullptr;        // eager
  const Row* fastest_graph = nullptr;  // in a graph, or null
};
std::vector<AutomaticAtSize> automatic_against_fastest(const std::vector<Row>& rows);
// A variant's name in the summaries ("one_shot_ll", "ll P=64").
std::string short_label(const Row& r);
// Under a table where automatic ran beside other variants: automatic against the
// fastest at every size (more than 5% slower marked), and the fastest size by size.
void print_automatic_against_fastest(const std::vector<Row>& rows, const std::string& block);

// A measurement as the JSON's out_of_place / in_place object.
nlohmann::json measurement_json(const Measurement& m, const Row& r, int world);
// Time per call (bandwidth false) or bus bandwidth (true) against size, as an SVG.
void write_svg(const std::string& path, const std::vector<Row>& rows, const std::string& title, bool bandwidth,
               int world);
// FILE.svg -> FILE-busbw.svg.
std::string busbw_path(const std::string& path);

}  // namespace iris::bench
