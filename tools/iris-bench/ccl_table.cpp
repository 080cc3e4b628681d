// iris-bench ccl --table (ccl_table.hpp says what it writes).
#include "ccl_table.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "iris/error.hpp"
#include "iris/size.hpp"

namespace iris::bench {
namespace {

enum class TypeClass { floats, narrow, any };
const char* name(TypeClass c) { return c == TypeClass::floats ? "floats" : c == TypeClass::narrow ? "narrow" : "any"; }

bool in_words(const Variant& v) {
  return v.algorithm == ccl::Algorithm::one_shot_ll || v.algorithm == ccl::Algorithm::two_shot_ll ||
         (v.collective != Collective::all_reduce && v.route == ccl::Route::ll);
}
bool in_slots(const Variant& v) {
  return v.algorithm == ccl::Algorithm::one_shot_slots || v.algorithm == ccl::Algorithm::two_shot_slots ||
         (v.collective != Collective::all_reduce && v.route == ccl::Route::slots);
}

// What automatic may run: the paired algorithms and the routes, at the library's own
// program count (the grid algorithms one_shot, two_shot, atomic and ring have a higher
// floor and are kept for comparison).
bool candidate(const Row& r) {
  const Variant& v = r.variant;
  if (v.nccl || v.programs != 0 || !r.place[placement_of(r)].ran) return false;
  if (v.collective != Collective::all_reduce) return v.route != ccl::Route::automatic;
  switch (v.algorithm) {
    case ccl::Algorithm::one_shot_push:
    case ccl::Algorithm::two_shot_push:
    case ccl::Algorithm::one_shot_ll:
    case ccl::Algorithm::two_shot_ll:
    case ccl::Algorithm::one_shot_slots:
    case ccl::Algorithm::two_shot_slots: return true;
    default: return false;
  }
}

bool admits(TypeClass c, const Variant& v) {
  if (c == TypeClass::floats) return true;
  if (c == TypeClass::narrow) return !in_slots(v);
  return !in_slots(v) && !in_words(v);
}

bool class_fits(TypeClass c, DType dt) {
  if (c == TypeClass::floats) return dt == DType::f32 || dt == DType::f16 || dt == DType::bf16;
  if (c == TypeClass::narrow) return dtype_size(dt) <= 4;
  return true;
}

// A candidate's name in the table: all_reduce's algorithm, the others' route.
std::string pick_of(const Variant& v) {
  return v.collective == Collective::all_reduce ? ccl::name(v.algorithm) : ccl::name(v.route);
}

// Sizes as the table writes them.
std::string size_text(std::size_t b) {
  if (b >= (std::size_t{1} << 20) && b % (std::size_t{1} << 20) == 0) return "mib(" + std::to_string(b >> 20) + ")";
  if (b >= 1024 && b % 1024 == 0) return "kib(" + std::to_string(b >> 10) + ")";
  return std::to_string(b);
}

// The collective a line of the table is a row of ("" for other lines).
std::string row_collective(const std::string& line) {
  if (line.rfind("ALL_REDUCE(", 0) == 0) return "all_reduce";
  if (line.rfind("ROUTE(", 0) == 0) {
    const std::size_t comma = line.find(',');
    if (comma != std::string::npos) return line.substr(6, comma - 6);
  }
  return "";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

struct Timed {
  std::string pick;
  double us;
  const Variant* variant;
};

}  // namespace

std::string automatic_table_rows(const std::vector<Row>& rows, int world, int from_world, int to_world) {
  std::ostringstream out;
  const std::string worlds = std::to_string(from_world) + ", " + std::to_string(to_world);
  for (Collective coll : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                          Collective::all_to_all, Collective::broadcast}) {
    // The collective's first block (its first type and reduction) with candidates in it.
    std::string block;
    DType dt = DType::f32;
    bool graph = false;
    std::map<std::size_t, std::vector<Timed>> at;  // table bytes -> every candidate's time
    for (const Row& r : rows) {
      if (r.variant.collective != coll || !candidate(r)) continue;
      if (block.empty()) {
        block = r.block;
        dt = r.dtype;
      }
      if (r.block != block) continue;
      const Measurement& m = r.place[placement_of(r)];
      graph = graph || m.graph_us > 0;
      // all_reduce's size is its input and the others' their output (broadcast: x): as
      // the library's choice counts them. reduce_scatter's nccl-tests size is its input.
      const std::size_t bytes =
          coll == Collective::reduce_scatter ? r.bytes / static_cast<std::size_t>(world) : r.bytes;
      at[bytes].push_back({pick_of(r.variant), m.graph_us > 0 ? m.graph_us : m.us, &r.variant});
    }
    if (at.empty()) continue;
    out << "// " << name(coll) << " (" << block.substr(block.find(' ') + 1) << ", "
        << (graph ? "in a graph" : "eager") << ", us a call, the slowest rank's), fastest first:\n";
    for (auto& [bytes, timed] : at) {
      std::sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) { return a.us < b.us; });
      out << "//   " << format_bytes(bytes) << ":";
      for (std::size_t i = 0; i < timed.size(); ++i) {
        char t[32];
        std::snprintf(t, sizeof t, "%.2f", timed[i].us);
        out << (i ? ", " : " ") << timed[i].pick << " " << t;
      }
      out << "\n";
    }
    // Per class, the winner size by size (a winner stays while within kTableTieSlack),
    // runs of one winner as one row up to its last size.
    std::vector<std::pair<TypeClass, std::vector<std::pair<std::size_t, std::string>>>> classes;
    for (TypeClass c : {TypeClass::floats, TypeClass::narrow, TypeClass::any}) {
      if (!class_fits(c, dt)) continue;
      std::vector<std::pair<std::size_t, std::string>> runs;
      std::string last;
      for (const auto& [bytes, timed] : at) {
        const Timed* best = nullptr;
        const Timed* kept = nullptr;
        for (const Timed& t : timed) {
          if (!admits(c, *t.variant)) continue;
          if (!best || t.us < best->us) best = &t;
          if (t.pick == last) kept = &t;
        }
        if (!best) continue;
        const std::string& pick = kept && kept->us <= best->us * kTableTieSlack ? kept->pick : best->pick;
        if (pick != last || runs.empty()) runs.emplace_back(bytes, pick);
        runs.back().first = bytes;
        last = pick;
      }
      classes.emplace_back(c, std::move(runs));
    }
    // A class whose rows are those of the wider class after it adds nothing: the wider
    // class's rows cover its types too.
    for (std::size_t i = 0; i < classes.size(); ++i) {
      if (i + 1 < classes.size() && classes[i].second == classes[i + 1].second) continue;
      for (const auto& [up_to, pick] : classes[i].second) {
        if (coll == Collective::all_reduce) {
          out << "ALL_REDUCE(" << worlds << ", " << name(classes[i].first) << ", " << size_text(up_to) << ", " << pick
              << ")\n";
        } else {
          out << "ROUTE(" << name(coll) << ", " << worlds << ", " << name(classes[i].first) << ", " << size_text(up_to)
              << ", " << pick << ")\n";
        }
      }
    }
  }
  return out.str();
}

std::string replace_table_section(const std::string& table, const std::string& heading, const std::string& rows,
                                  int from_world, int to_world) {
  const std::string worlds = "worlds " + std::to_string(from_world) + "-" + std::to_string(to_world);
  const std::string begin = "// BEGIN " + worlds, end = "// END " + worlds, any = "// BEGIN any world";
  const std::vector<std::string> lines = lines_of(table);
  const auto find = [&](const std::string& what) { return std::find(lines.begin(), lines.end(), what); };
  if (find(any) == lines.end()) {
    throw Error("not automatic's table (runtime/src/library/ccl_automatic.def): it has no '" + any + "' line");
  }
  std::set<std::string> measured;
  for (const std::string& line : lines_of(rows)) {
    if (const std::string c = row_collective(line); !c.empty()) measured.insert(c);
  }
  // Of the old section, the rows of collectives not measured now, each with the comment
  // lines before it.
  std::string kept;
  auto first = find(begin), last = find(end);
  const bool replacing = first != lines.end();
  if (replacing) {
    if (last == lines.end() || last < first) throw Error("automatic's table has '" + begin + "' without '" + end + "' after it");
    std::string pending;
    for (auto it = first + 1; it != last; ++it) {
      const std::string c = row_collective(*it);
      if (c.empty()) {
        pending += *it + "\n";
        continue;
      }
      if (!measured.count(c)) kept += pending + *it + "\n";
      pending.clear();
    }
  }
  const std::string section = begin + "\n" + heading + rows + kept + end + "\n";
  std::string out;
  bool written = false;
  for (auto it = lines.begin(); it != lines.end(); ++it) {
    if (replacing && it == first) {
      out += section;
      it = last;
      written = true;
      continue;
    }
    if (!replacing && !written && *it == any) {
      out += section + "\n";
      written = true;
    }
    out += *it + "\n";
  }
  return out;
}

std::string write_automatic_table(const std::string& path, const std::vector<Row>& rows, int world, int from_world,
                                  int to_world, const std::string& provenance) {
  std::ifstream in(path);
  if (!in) throw Error("--table: cannot read '" + path + "' (automatic's table: runtime/src/library/ccl_automatic.def)");
  std::stringstream text;
  text << in.rdbuf();
  const std::string table_rows = automatic_table_rows(rows, world, from_world, to_world);
  if (table_rows.empty()) {
    throw Error("--table: no collective had the variants automatic chooses from measured (all_reduce's push, ll and "
                "slots algorithms, the others' routes), so there is nothing to write");
  }
  const std::string updated = replace_table_section(text.str(), provenance, table_rows, from_world, to_world);
  std::ofstream out(path);
  out << updated;
  if (!out) throw Error("--table: cannot write '" + path + "'");
  std::size_t n = 0;
  for (const std::string& line : lines_of(table_rows)) n += !row_collective(line).empty();
  return "# automatic's table: " + std::to_string(n) + " rows for worlds " + std::to_string(from_world) + "-" +
         std::to_string(to_world) + " written into " + path + " (rebuild libiris to use them)\n";
}

}  // namespace iris::bench
