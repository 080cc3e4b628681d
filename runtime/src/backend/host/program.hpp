// One program of a host-backend launch (interpreter.hpp): the kernel's TIR walked with
// the program's own variables. Internal to the interpreter, whose parts are
// program_access.cpp (the race check, sites, tensor bounds), program_values.cpp
// (scalars, tiles, products) and program_statements.cpp (statements and roles).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/host/elements.hpp"
#include "backend/host/races.hpp"
#include "compiler/contract/launch_contract.hpp"
#include "compiler/driver/compile.hpp"
#include "compiler/tir/tir.hpp"
#include "iris/device/context.hpp"
#include "iris/error.hpp"

namespace iris::host {

struct LoadedProgram {
  irisc::SourceBuffer source;
  irisc::tir::Module module;
  irisc::contract::Module contract;
};

namespace interp {

namespace tir = irisc::tir;
using i64 = std::int64_t;
using u64 = std::uint64_t;

// Thrown to unwind a program whose launch already failed, or whose job aborted; not
// an error of its own.
struct Stopped {};

// What failed, with where: the first error of a launch is what it reports.
class KernelError : public Error {
 public:
  using Error::Error;
};

// ---- a launch ---------------------------------------------------------------------------
struct Launch {
  const LoadedProgram& lp;
  const tir::Kernel& k;
  const irisc::contract::Kernel& ck;
  device::Context ctx{};
  std::vector<char*> tensors;  // by parameter; null for scalars
  std::vector<S> scalars;      // by parameter
  std::vector<i64> sizes;      // size symbols
  i64 sms = 4;
  std::vector<std::vector<i64>> dims;  // each tensor's extents
  std::vector<i64> elements;           // each tensor's element count
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::exception_ptr error;

  // Reads the launch's arguments (one pointer per contract argument).
  Launch(const LoadedProgram& p, int kernel, void** args);

  void fail(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mu);
    if (!error) error = e;
    failed.store(true);
  }
};

struct RangeV {
  i64 start = 0, extent = 0;
};

struct VarV {
  S s;
  std::vector<S> t;
  RangeV r;
};

// One program: walks the kernel's statements with its own variables.

// One program: walks the kernel's statements with its own variables.
class Program {
 public:
  Program(Launch& l, i64 program, i64 programs);
  void run();

 private:
  Launch& l_;
  const tir::Kernel& k_;
  i64 program_, programs_;
  // A fence ran in this program: its later atomics and signals release for the race check
  // (a release fence followed by a relaxed write is a release pattern).
  std::optional<tir::Scope> fenced_;  // the widest scope of the fences so far
  std::vector<VarV> vars_;
  std::unordered_map<std::uint32_t, const char*> sites_;  // the race check's site texts

  // ---- the race check (races.hpp) -------------------------------------------------------
  const char* site_text(irisc::SourceRange r);
  // An access to element `index` of parameter p's tensor at `base` (on any rank): plain
  // (write or not), or atomic.
  void track(int p, const char* base, i64 index, bool write, irisc::SourceRange r);
  void track_as(int p, const void* addr, i64 index, races::Access kind, irisc::SourceRange r);
  // An atomic (or a signal) on `p`, element `index`: checked against plain accesses,
  // then its release, the operation, its acquire.
  template <class Op>
  auto atomically(int p, void* addr, i64 index, tir::Order order, tir::Scope scope, irisc::SourceRange r, Op op) {
    if (races::enabled()) {
      track_as(p, addr, index, races::Access::atomic_write, r);
      // A relaxed write after a fence releases at the fence's scope.
      if (releases(order)) races::release(l_.ctx, addr, scope == tir::Scope::system);
      else if (fenced_) races::release(l_.ctx, addr, fenced_ == tir::Scope::system);
    }
    auto out = op();
    if (races::enabled() && acquires(order)) races::acquire(l_.ctx, addr, scope == tir::Scope::system);
    return out;
  }
  void track_range(int p, const char* base, i64 first, i64 n, bool write, irisc::SourceRange r);
  static bool releases(tir::Order o) { return o == tir::Order::release || o == tir::Order::acq_rel; }
  static bool acquires(tir::Order o) { return o == tir::Order::acquire || o == tir::Order::acq_rel; }

  // ---- where ------------------------------------------------------------------------------
  std::string site(irisc::SourceRange r) const;
  [[noreturn]] void fail(irisc::SourceRange r, const std::string& what) const;

  // ---- tensors --------------------------------------------------------------------------
  const tir::Param& param(int p) const { return k_.params[static_cast<std::size_t>(p)]; }
  ScalarType elem_of(int p) const { return param(p).elem == ScalarType::int_ ? ScalarType::i64 : param(p).elem; }

  std::string shape(int p) const;
  // Element `flat` of parameter p's tensor as indices ("[3, 100] (flat index 400)").
  std::string element(int p, i64 flat) const;
  // A row of a tensor of 2 or more dimensions ends at its last extent: elements past
  // it are outside the tensor even where the flat index lands in the next row.
  void check_row(int p, i64 offset, i64 n, irisc::SourceRange r, const char* what);
  // Each index of a view of a tensor of 2+ dimensions against its own extent (`rows`
  // and `cols`: the valid rows of a 2-D tile, the valid elements along the last
  // dimension; 1 for a single element).
  void check_index(const tir::View& v, i64 rows, i64 cols, irisc::SourceRange r, const char* what);
  // The base of parameter p's tensor on `rank` (null: this rank).
  char* base(int p, const tir::ValuePtr& rank, irisc::SourceRange r);
  // Checks that flat indices [lo, hi] of parameter p's tensor exist (the accessed
  // elements of a view, lo <= hi); `first_bad` finds the first one that does not.
  template <class FirstBad>
  void check(int p, __int128 lo, __int128 hi, irisc::SourceRange r, const char* what, FirstBad first_bad) {
    const i64 n = l_.elements[static_cast<std::size_t>(p)];
    if (lo >= 0 && hi < n) return;
    const i64 bad = first_bad(n);
    fail(r, std::string(what) + " element " + element(p, bad) + " of " + param(p).name + ", outside the tensor (shape " +
                shape(p) + ", " + std::to_string(n) + " elements)");
  }

  struct View1 {
    i64 offset, n;  // accessed elements: offset .. offset + n - 1 (n may be 0)
  };
  struct View2 {
    i64 offset, ld, rows, cols;  // accessed: rows x cols (masked), rows ld apart
  };

  View1 view1(const tir::View& v, irisc::SourceRange r, const char* what);
  // A data-and-flag view of values of type t: its words (offset: the first word; n:
  // values). 16-bit values go two to a word, the view's offset counting values; its
  // start must be even.
  View1 words1(const tir::View& v, ScalarType t, irisc::SourceRange r, const char* what);
  View2 view2(const tir::View& v, irisc::SourceRange r, const char* what);
  void check2(int p, i64 offset, i64 ld, i64 rows, i64 cols, irisc::SourceRange r, const char* what);

  // ---- values ---------------------------------------------------------------------------
  RangeV rg(const tir::Value& v);
  S bin(const tir::Value& at, tir::BinOp op, ScalarType t, S a, S b);
  static S un(tir::UnOp op, ScalarType t, S a);
  // A scalar value.
  S sc(const tir::Value& v);
  S reduce(const tir::Value& v);
  // A tile value, element by element (row-major for 2-D tiles), into `out`.
  void tl(const tir::Value& v, std::vector<S>& out);
  // acc[i, j] = sum over k of A[i, k] * B[k, j] in float, rows past A's valid rows,
  // columns past B's valid columns and k past K reading as 0 (the simple lowering's
  // semantics; B as a row panel Bt[n, :] is B given as [N, K]).
  void matmul(const tir::Value& v, std::vector<S>& out);

  // ---- statements ---------------------------------------------------------------------------
  void stmts(const std::vector<tir::StmtPtr>& body);
  void assign(int var, const tir::Value& v);
  // A tile (or a scalar broadcast) to store, converted to the tensor's type.
  std::vector<S> source(const tir::Value& v, std::size_t n, ScalarType to);
  // Unwinds the program (Stopped) when its launch failed or its job aborted: after a
  // wait, and at each iteration of a loop (a long compute loop stops too).
  void after_wait();
  // Data-and-flag words: the word for x (of t) with `flag`; the value of element `e` of
  // the u64 tensor view's words once its flag is `flag` (waits as `wait` does).
  std::uint64_t flag_word(ScalarType t, S x, std::uint64_t flag) const;
  // `where`: site(v.range), made once for the whole load.
  S flagged_value(const tir::Value& v, const char* words, i64 e, std::uint64_t flag, const std::string& where);
  void stmt(const tir::Stmt& s);
};

}  // namespace interp
}  // namespace iris::host
