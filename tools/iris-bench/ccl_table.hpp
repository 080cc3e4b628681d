// iris-bench ccl --table: automatic's table (runtime/src/library/ccl_automatic.def)
// written again from a sweep. For each collective measured, per size the fastest of the
// variants automatic may run (all_reduce: the push, words and slots algorithms; the
// others: the direct, staged, ll and slots routes; at the library's own program count),
// in a graph where timed there, for each class of types the table knows: floats from
// every variant, narrow from those without slots, any from those without slots or words.
// The rows replace the section of the run's worlds in the file; rows of collectives the
// run did not measure are kept.
#pragma once

#include <string>
#include <vector>

#include "ccl_rows.hpp"

namespace iris::bench {

// A winner keeps its rows while within this factor of the fastest at the next size, so
// that two variants in a tie do not take turns row by row.
constexpr double kTableTieSlack = 1.03;

// The rows (and a comment per collective with every candidate's time at every size) of
// automatic's table for worlds from..to, from the rows of a sweep at `world` ranks (rank
// 0's; each collective's first block of types and reductions). Empty when no collective
// had candidates measured.
std::string automatic_table_rows(const std::vector<Row>& rows, int world, int from_world, int to_world);

// `table`'s text with the section of worlds from..to (its BEGIN and END lines and what
// lies between) replaced by one holding `heading` (comment lines), `rows` and, of the
// old section, the lines of collectives `rows` has no row for; a new section goes before
// the "any world" one. Throws iris::Error where `table` is not automatic's table.
std::string replace_table_section(const std::string& table, const std::string& heading, const std::string& rows,
                                  int from_world, int to_world);

// Reads automatic's table from `path`, puts this sweep's section into it and writes it
// back; returns what it printed about it ("# automatic's table: ...").
std::string write_automatic_table(const std::string& path, const std::vector<Row>& rows, int world, int from_world,
                                  int to_world, const std::string& provenance);

}  // namespace iris::bench
