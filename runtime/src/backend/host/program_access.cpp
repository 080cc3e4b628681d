// A host-backend program's accesses (program.hpp): the race check, where a statement
// is, and the bounds of every view it reads or writes.
#include "backend/host/program.hpp"

#include <algorithm>

namespace iris::host::interp {

const char* Program::site_text(irisc::SourceRange r) {
  auto [it, fresh] = sites_.try_emplace(r.begin, nullptr);
  if (fresh) it->second = races::intern(site(r));
  return it->second;
}

void Program::track(int p, const char* base, i64 index, bool write, irisc::SourceRange r) {
  if (!races::enabled()) return;
  track_as(p, base + index * elem_bytes(elem_of(p)), index, write ? races::Access::write : races::Access::read, r);
}

void Program::track_as(int p, const void* addr, i64 index, races::Access kind, irisc::SourceRange r) {
  races::access(l_.ctx, addr, kind, site_text(r), param(p).name.c_str(), index);
}

void Program::track_range(int p, const char* base, i64 first, i64 n, bool write, irisc::SourceRange r) {
  if (!races::enabled()) return;
  for (i64 e = 0; e < n; ++e) track(p, base, first + e, write, r);
}

std::string Program::site(irisc::SourceRange r) const {
  const irisc::SourceBuffer& src = l_.lp.source;
  std::string text = "kernel '" + k_.name + "'";
  if (r.begin < src.text().size()) {
    const irisc::LineCol lc = src.line_col(r.begin);
    std::string stmt(src.slice(r));
    stmt = stmt.substr(0, stmt.find('\n'));
    if (stmt.size() > 60) stmt = stmt.substr(0, 57) + "...";
    text += " at " + src.name_of(r.begin) + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.column) + ": " + stmt;
  }
  return text;
}

void Program::fail(irisc::SourceRange r, const std::string& what) const {
  throw KernelError(site(r) + ": " + what + " (rank " + std::to_string(l_.ctx.rank) + ", program " +
                    std::to_string(program_) + ")");
}

std::string Program::shape(int p) const {
  std::string s = "[";
  const std::vector<i64>& d = l_.dims[static_cast<std::size_t>(p)];
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

std::string Program::element(int p, i64 flat) const {
  const std::vector<i64>& d = l_.dims[static_cast<std::size_t>(p)];
  if (d.size() < 2 || flat < 0) return std::to_string(flat);
  std::vector<i64> idx(d.size());
  i64 rest = flat;
  for (std::size_t k = d.size(); k-- > 0;) {
    if (d[k] <= 0) return std::to_string(flat);
    idx[k] = k ? rest % d[k] : rest;
    rest /= d[k];
  }
  std::string s = "[";
  for (std::size_t k = 0; k < idx.size(); ++k) s += (k ? ", " : "") + std::to_string(idx[k]);
  return s + "] (flat index " + std::to_string(flat) + ")";
}

void Program::check_row(int p, i64 offset, i64 n, irisc::SourceRange r, const char* what) {
  const std::vector<i64>& d = l_.dims[static_cast<std::size_t>(p)];
  if (d.size() < 2 || d.back() <= 0 || offset < 0 || offset % d.back() + n <= d.back()) return;
  const i64 last = d.back();
  std::string at = element(p, offset - offset % last);
  at = at.substr(0, at.find(']'));
  at = at.substr(0, at.rfind(' ') + 1) + std::to_string(last) + "]";
  fail(r, std::string(what) + " element " + at + " of " + param(p).name + ", outside the tensor (shape " + shape(p) + ")");
}

void Program::check_index(const tir::View& v, i64 rows, i64 cols, irisc::SourceRange r, const char* what) {
  const std::vector<i64>& d = l_.dims[static_cast<std::size_t>(v.param)];
  if (v.index.size() != d.size() || v.gathered) return;
  const std::size_t last = d.size() - 1;
  std::vector<i64> at(d.size());
  bool outside = false;
  for (std::size_t k = 0; k < d.size(); ++k) {
    at[k] = sc(*v.index[k]).i;
    if (static_cast<int>(k) == v.slice_dim) continue;  // a matmul panel's ':' spans the dimension
    const i64 len = k == last ? cols : k + 1 == last && v.rows ? rows : 1;
    outside = outside || at[k] < 0 || static_cast<__int128>(at[k]) + len > d[k];
  }
  if (!outside) return;
  // The first element outside: each index that leaves its dimension at the first value
  // past it.
  std::string e = "[";
  for (std::size_t k = 0; k < at.size(); ++k) {
    const i64 len = k == last ? cols : k + 1 == last && v.rows ? rows : 1;
    const bool past = static_cast<int>(k) != v.slice_dim && at[k] >= 0 && static_cast<__int128>(at[k]) + len > d[k];
    e += (k ? ", " : "") + std::to_string(past ? std::max(at[k], d[k]) : at[k]);
  }
  fail(r, std::string(what) + " element " + e + "] of " + param(v.param).name + ", outside the tensor (shape " +
              shape(v.param) + ")");
}

char* Program::base(int p, const tir::ValuePtr& rank, irisc::SourceRange r) {
  char* b = l_.tensors[static_cast<std::size_t>(p)];
  if (!rank) return b;
  const i64 to = sc(*rank).i;
  if (to < 0 || to >= l_.ctx.world) {
    fail(r, "rank " + std::to_string(to) + " is not a rank of this job (world " + std::to_string(l_.ctx.world) + ")");
  }
  return device::translate(l_.ctx, b, static_cast<int>(to));
}

Program::View1 Program::view1(const tir::View& v, irisc::SourceRange r, const char* what) {
  const i64 offset = sc(*v.offset).i;
  i64 n = 1;
  if (v.size) {
    const i64 extent = sc(*v.extent).i;
    n = extent < 0 ? 0 : extent < v.size ? extent : v.size;
  }
  if (n > 0) {
    check_index(v, 1, n, r, what);
    if (v.size) check_row(v.param, offset, n, r, what);
    check(v.param, offset, static_cast<__int128>(offset) + n - 1, r, what,
          [&](i64 elems) { return offset < 0 ? offset : std::max(offset, elems); });
  }
  return {offset, n};
}

Program::View1 Program::words1(const tir::View& v, ScalarType t, irisc::SourceRange r, const char* what) {
  if (elem_bytes(t) != 2) return view1(v, r, what);
  const i64 values = sc(*v.offset).i;
  const i64 extent = sc(*v.extent).i;
  const i64 n = extent < 0 ? 0 : extent < v.size ? extent : v.size;
  // The view's last index counts values: 2 d.back() of them a row.
  const std::vector<i64>& d = l_.dims[static_cast<std::size_t>(v.param)];
  const i64 column = v.index.size() == d.size() && !d.empty() ? sc(*v.index.back()).i : values;
  if (values % 2 != 0) {
    fail(r, std::string(what) + " " + param(v.param).name + ": 16-bit values go two to a word, so a view of them starts at "
            "an even index, not at value " + std::to_string(column) + " of its row");
  }
  const i64 first = values / 2, words = (n + 1) / 2;
  if (words > 0) {
    // Each index against its own dimension (the last in values), as view1's check_index.
    if (v.index.size() == d.size() && d.size() > 1) {
      for (std::size_t k = 0; k < d.size(); ++k) {
        const i64 at = sc(*v.index[k]).i;
        const bool last = k + 1 == d.size();
        const __int128 end = static_cast<__int128>(at) + (last ? n : 1);
        if (at < 0 || end > (last ? 2 * static_cast<__int128>(d[k]) : static_cast<__int128>(d[k]))) {
          fail(r, std::string(what) + " " + param(v.param).name + ": index " + std::to_string(at) + " of dimension " +
                      std::to_string(k) + (last ? " (values " + std::to_string(at) + ".." + std::to_string(at + n - 1) +
                                                      ", two to a word: " + std::to_string(2 * d[k]) + " a row)"
                                                : std::string()) +
                      " is outside the tensor (shape " + shape(v.param) + ")");
        }
      }
    }
    check_row(v.param, first, words, r, what);
    check(v.param, first, static_cast<__int128>(first) + words - 1, r, what,
          [&](i64 elems) { return first < 0 ? first : std::max(first, elems); });
  }
  return {first, n};
}

Program::View2 Program::view2(const tir::View& v, irisc::SourceRange r, const char* what) {
  const i64 offset = sc(*v.offset).i, ld = sc(*v.ld).i;
  const i64 re = sc(*v.row_extent).i, ce = sc(*v.extent).i;
  const i64 rows = re < 0 ? 0 : re < v.rows ? re : v.rows;
  const i64 cols = ce < 0 ? 0 : ce < v.size ? ce : v.size;
  if (rows > 0 && cols > 0) {
    check_index(v, rows, cols, r, what);
    check2(v.param, offset, ld, rows, cols, r, what);
  }
  return {offset, ld, rows, cols};
}

void Program::check2(int p, i64 offset, i64 ld, i64 rows, i64 cols, irisc::SourceRange r, const char* what) {
  const std::vector<i64>& d = l_.dims[static_cast<std::size_t>(p)];
  if (!d.empty() && ld == d.back()) check_row(p, offset, cols, r, what);
  // In 128 bits: wrapped index arithmetic must not wrap again here.
  using wide = __int128;
  const wide last = wide(offset) + wide(rows - 1) * ld + cols - 1;
  const wide lo = ld >= 0 ? wide(offset) : wide(offset) + wide(rows - 1) * ld;
  const wide hi = ld >= 0 ? last : wide(offset) + cols - 1;
  check(p, lo, hi, r, what, [&](i64 n) -> i64 {
    for (i64 i = 0; i < rows; ++i) {
      for (i64 j = 0; j < cols; ++j) {
        const wide e = wide(offset) + wide(i) * ld + j;
        if (e < 0 || e >= n) return e < wide(INT64_MIN) || e > wide(INT64_MAX) ? INT64_MAX : static_cast<i64>(e);
      }
    }
    return n;
  });
}

}  // namespace iris::host::interp
