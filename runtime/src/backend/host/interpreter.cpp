// The TIR interpreter (see interpreter.hpp). Semantics follow the CUDA printer
// (compiler/codegen/gpu_kernel_printer.cpp) statement for statement: where the two
// disagree, one of them is wrong, and the GPU suite compares them.
#include "backend/host/interpreter.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "backend/host/elements.hpp"
#include "backend/host/host_job.hpp"
#include "backend/host/races.hpp"
#include "compiler/codegen/host_code.hpp"
#include "compiler/codegen/metadata.hpp"
#include "compiler/contract/launch_contract.hpp"
#include "compiler/driver/compile.hpp"
#include "compiler/tir/tir.hpp"
#include "iris/device/context.hpp"
#include "iris/dtype.hpp"
#include "iris/error.hpp"

namespace iris::host {

namespace tir = irisc::tir;
using irisc::ast::ScalarType;
using i64 = std::int64_t;
using u64 = std::uint64_t;

struct LoadedProgram {
  irisc::SourceBuffer source;
  tir::Module module;
  irisc::contract::Module contract;
};

namespace {

// Programs of one launch that run at once when the kernel has no roles: what a GPU of
// the host backend's 4 multiprocessors x 4 resident programs would hold (role kernels
// run every program at once, as the launcher checked they fit).
constexpr unsigned kResidentPrograms = 16;

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

  Launch(const LoadedProgram& p, int kernel, void** args)
      : lp(p), k(p.module.kernels[static_cast<std::size_t>(kernel)]), ck(p.contract.kernels[static_cast<std::size_t>(kernel)]) {
    tensors.assign(k.params.size(), nullptr);
    scalars.assign(k.params.size(), S{});
    sizes.assign(k.size_symbols.size(), 0);
    for (std::size_t a = 0; a < ck.args.size(); ++a) {
      const irisc::contract::Arg& arg = ck.args[a];
      switch (arg.kind) {
        case irisc::contract::ArgKind::context: std::memcpy(&ctx, args[a], sizeof ctx); break;
        case irisc::contract::ArgKind::param: {
          const tir::Param& prm = k.params[static_cast<std::size_t>(arg.index)];
          if (prm.is_tensor) {
            std::memcpy(&tensors[static_cast<std::size_t>(arg.index)], args[a], sizeof(char*));
          } else {
            // The argument as packed: the scalar's own width.
            // Argument storage may be unaligned: copy it out before reading.
            S& s = scalars[static_cast<std::size_t>(arg.index)];
            const ScalarType t = prm.elem == ScalarType::int_ ? ScalarType::i64 : prm.elem;
            alignas(8) unsigned char word[8] = {};
            std::memcpy(word, args[a], static_cast<std::size_t>(elem_bytes(t)));
            s = read(t, word);
          }
          break;
        }
        case irisc::contract::ArgKind::size: std::memcpy(&sizes[static_cast<std::size_t>(arg.index)], args[a], 8); break;
        case irisc::contract::ArgKind::sms: std::memcpy(&sms, args[a], 8); break;
        case irisc::contract::ArgKind::tensor_map: throw Error("a tensor map argument on the host backend");
      }
    }
  }

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
class Program {
 public:
  Program(Launch& l, i64 program, i64 programs) : l_(l), k_(l.k), program_(program), programs_(programs) {
    vars_.resize(k_.vars.size());
  }

  void run() {
    if (k_.roles.empty()) {
      stmts(k_.body);
      return;
    }
    // Statements outside roles run in every program; each role owns a block range.
    const i64 block = program_, grid = programs_;
    i64 first = 0;
    for (const tir::StmtPtr& s : k_.body) {
      if (s->kind != tir::StmtKind::Role) {
        stmt(*s);
        continue;
      }
      const i64 n = sc(*k_.roles[static_cast<std::size_t>(s->role)].programs).i;
      if (block >= first && block < first + n) {
        program_ = block - first;
        programs_ = n;
        stmts(s->body);
        program_ = block;
        programs_ = grid;
      }
      first += n;
    }
  }

 private:
  Launch& l_;
  const tir::Kernel& k_;
  i64 program_, programs_;
  std::vector<VarV> vars_;
  std::unordered_map<std::uint32_t, const char*> sites_;  // the race check's site texts

  // ---- the race check (races.hpp) -------------------------------------------------------
  const char* site_text(irisc::SourceRange r) {
    auto [it, fresh] = sites_.try_emplace(r.begin, nullptr);
    if (fresh) it->second = races::intern(site(r));
    return it->second;
  }
  // An access to element `index` of parameter p's tensor at `base` (on any rank): plain
  // (write or not), or atomic.
  void track(int p, const char* base, i64 index, bool write, irisc::SourceRange r) {
    if (!races::enabled()) return;
    track_as(p, base + index * elem_bytes(elem_of(p)), index, write ? races::Access::write : races::Access::read, r);
  }
  void track_as(int p, const void* addr, i64 index, races::Access kind, irisc::SourceRange r) {
    races::access(l_.ctx, addr, kind, site_text(r), param(p).name.c_str(), index);
  }
  // An atomic (or a signal) on `p`, element `index`: checked against plain accesses,
  // then its release, the operation, its acquire.
  template <class Op>
  auto atomically(int p, void* addr, i64 index, tir::Order order, irisc::SourceRange r, Op op) {
    if (races::enabled()) {
      track_as(p, addr, index, races::Access::atomic_write, r);
      if (releases(order)) races::release(l_.ctx, addr);
    }
    auto out = op();
    if (races::enabled() && acquires(order)) races::acquire(l_.ctx, addr);
    return out;
  }
  void track_range(int p, const char* base, i64 first, i64 n, bool write, irisc::SourceRange r) {
    if (!races::enabled()) return;
    for (i64 e = 0; e < n; ++e) track(p, base, first + e, write, r);
  }
  static bool releases(tir::Order o) { return o == tir::Order::release || o == tir::Order::acq_rel; }
  static bool acquires(tir::Order o) { return o == tir::Order::acquire || o == tir::Order::acq_rel; }

  // ---- where ------------------------------------------------------------------------------
  std::string site(irisc::SourceRange r) const {
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
  [[noreturn]] void fail(irisc::SourceRange r, const std::string& what) const {
    throw KernelError(site(r) + ": " + what + " (rank " + std::to_string(l_.ctx.rank) + ", program " +
                      std::to_string(program_) + ")");
  }

  // ---- tensors --------------------------------------------------------------------------
  const tir::Param& param(int p) const { return k_.params[static_cast<std::size_t>(p)]; }
  ScalarType elem_of(int p) const { return param(p).elem == ScalarType::int_ ? ScalarType::i64 : param(p).elem; }

  std::string shape(int p) const {
    std::string s = "[";
    const std::vector<i64>& d = l_.dims[static_cast<std::size_t>(p)];
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
  }
  // Element `flat` of parameter p's tensor as indices ("[3, 100] (flat index 400)").
  std::string element(int p, i64 flat) const {
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

  // A row of a tensor of 2 or more dimensions ends at its last extent: elements past
  // it are outside the tensor even where the flat index lands in the next row.
  void check_row(int p, i64 offset, i64 n, irisc::SourceRange r, const char* what) {
    const std::vector<i64>& d = l_.dims[static_cast<std::size_t>(p)];
    if (d.size() < 2 || d.back() <= 0 || offset < 0 || offset % d.back() + n <= d.back()) return;
    const i64 last = d.back();
    std::string at = element(p, offset - offset % last);
    at = at.substr(0, at.find(']'));
    at = at.substr(0, at.rfind(' ') + 1) + std::to_string(last) + "]";
    fail(r, std::string(what) + " element " + at + " of " + param(p).name + ", outside the tensor (shape " + shape(p) + ")");
  }

  // The base of parameter p's tensor on `rank` (null: this rank).
  char* base(int p, const tir::ValuePtr& rank, irisc::SourceRange r) {
    char* b = l_.tensors[static_cast<std::size_t>(p)];
    if (!rank) return b;
    const i64 to = sc(*rank).i;
    if (to < 0 || to >= l_.ctx.world) {
      fail(r, "rank " + std::to_string(to) + " is not a rank of this job (world " + std::to_string(l_.ctx.world) + ")");
    }
    return device::translate(l_.ctx, b, static_cast<int>(to));
  }

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

  View1 view1(const tir::View& v, irisc::SourceRange r, const char* what) {
    const i64 offset = sc(*v.offset).i;
    i64 n = 1;
    if (v.size) {
      const i64 extent = sc(*v.extent).i;
      n = extent < 0 ? 0 : extent < v.size ? extent : v.size;
    }
    if (n > 0) {
      if (v.size) check_row(v.param, offset, n, r, what);
      check(v.param, offset, static_cast<__int128>(offset) + n - 1, r, what,
            [&](i64 elems) { return offset < 0 ? offset : std::max(offset, elems); });
    }
    return {offset, n};
  }

  View2 view2(const tir::View& v, irisc::SourceRange r, const char* what) {
    const i64 offset = sc(*v.offset).i, ld = sc(*v.ld).i;
    const i64 re = sc(*v.row_extent).i, ce = sc(*v.extent).i;
    const i64 rows = re < 0 ? 0 : re < v.rows ? re : v.rows;
    const i64 cols = ce < 0 ? 0 : ce < v.size ? ce : v.size;
    if (rows > 0 && cols > 0) {
      check2(v.param, offset, ld, rows, cols, r, what);
    }
    return {offset, ld, rows, cols};
  }

  void check2(int p, i64 offset, i64 ld, i64 rows, i64 cols, irisc::SourceRange r, const char* what) {
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

  // ---- values ---------------------------------------------------------------------------
  RangeV rg(const tir::Value& v) {
    if (v.kind == tir::ValueKind::VarRef) return vars_[static_cast<std::size_t>(v.var)].r;
    if (v.kind == tir::ValueKind::Binary) {
      RangeV r = rg(*v.operands[0]);
      r.start = bin(v, v.binop, ScalarType::i64, S{r.start, 0}, sc(*v.operands[1])).i;
      return r;
    }
    return {};
  }

  S bin(const tir::Value& at, tir::BinOp op, ScalarType t, S a, S b) {
    using B = tir::BinOp;
    S r;
    if (is_float(t)) {
      const float x = a.f, y = b.f;
      switch (op) {
        case B::add: r.f = round_to(t, x + y); break;
        case B::sub: r.f = round_to(t, x - y); break;
        case B::mul: r.f = round_to(t, x * y); break;
        case B::div: r.f = round_to(t, x / y); break;
        case B::rem: r.f = round_to(t, std::fmod(x, y)); break;
        case B::eq: r.i = x == y; break;
        case B::ne: r.i = x != y; break;
        case B::lt: r.i = x < y; break;
        case B::le: r.i = x <= y; break;
        case B::gt: r.i = x > y; break;
        case B::ge: r.i = x >= y; break;
        case B::land: r.i = x != 0 && y != 0; break;
        case B::lor: r.i = x != 0 || y != 0; break;
        case B::min: r.f = x < y ? x : y; break;
        case B::max: r.f = x > y ? x : y; break;
        case B::band:
        case B::bor:
        case B::bxor:
        case B::shl:
        case B::shr: fail(at.range, "a bitwise operator on floats");
      }
      return r;
    }
    const bool u = t == ScalarType::u64;
    const u64 ua = static_cast<u64>(a.i), ub = static_cast<u64>(b.i);
    switch (op) {
      case B::add: r.i = norm(t, static_cast<i64>(ua + ub)); break;
      case B::sub: r.i = norm(t, static_cast<i64>(ua - ub)); break;
      case B::mul: r.i = norm(t, static_cast<i64>(ua * ub)); break;
      case B::div:
      case B::rem: {
        if (b.i == 0) fail(at.range, "integer division by zero");
        if (u) {
          r.i = static_cast<i64>(op == B::div ? ua / ub : ua % ub);
        } else if (a.i == std::numeric_limits<i64>::min() && b.i == -1) {
          r.i = op == B::div ? a.i : 0;  // wraps, as the GPU's does
        } else {
          r.i = norm(t, op == B::div ? a.i / b.i : a.i % b.i);
        }
        break;
      }
      case B::eq: r.i = a.i == b.i; break;
      case B::ne: r.i = a.i != b.i; break;
      case B::lt: r.i = u ? ua < ub : a.i < b.i; break;
      case B::le: r.i = u ? ua <= ub : a.i <= b.i; break;
      case B::gt: r.i = u ? ua > ub : a.i > b.i; break;
      case B::ge: r.i = u ? ua >= ub : a.i >= b.i; break;
      case B::land: r.i = a.i != 0 && b.i != 0; break;
      case B::lor: r.i = a.i != 0 || b.i != 0; break;
      case B::band: r.i = norm(t, a.i & b.i); break;
      case B::bor: r.i = norm(t, a.i | b.i); break;
      case B::bxor: r.i = norm(t, a.i ^ b.i); break;
      case B::min: r.i = (u ? ua < ub : a.i < b.i) ? a.i : b.i; break;
      case B::max: r.i = (u ? ua > ub : a.i > b.i) ? a.i : b.i; break;
      case B::shl:
      case B::shr: {  // as the GPU's shl/shr: by the width or more, 0 or the sign
        const u64 width = static_cast<u64>(tir::byte_size(t)) * 8;
        const bool negative = tir::is_signed(t) && a.i < 0;
        if (ub >= width) r.i = op == B::shr && negative ? -1 : 0;
        else if (op == B::shl) r.i = norm(t, static_cast<i64>(ua << ub));
        else r.i = norm(t, tir::is_signed(t) ? a.i >> ub : static_cast<i64>(ua >> ub));
        break;
      }
    }
    return r;
  }

  static S un(tir::UnOp op, ScalarType t, S a) {
    S r;
    if (is_float(t)) {
      switch (op) {
        case tir::UnOp::neg: r.f = -a.f; break;
        case tir::UnOp::lnot: r.i = a.f == 0; break;
        case tir::UnOp::abs: r.f = std::fabs(a.f); break;
        case tir::UnOp::sqrt: r.f = round_to(t, std::sqrt(a.f)); break;
        case tir::UnOp::exp: r.f = round_to(t, std::exp(a.f)); break;
        case tir::UnOp::log: r.f = round_to(t, std::log(a.f)); break;
      }
      return r;
    }
    switch (op) {
      case tir::UnOp::neg: r.i = norm(t, static_cast<i64>(0 - static_cast<u64>(a.i))); break;
      case tir::UnOp::lnot: r.i = a.i == 0; break;
      case tir::UnOp::abs:
        r.i = (t != ScalarType::u64 && a.i < 0) ? norm(t, static_cast<i64>(0 - static_cast<u64>(a.i))) : a.i;
        break;
      default: r.f = 0; break;  // sqrt/exp/log take floats (sema)
    }
    return r;
  }

  // A scalar value.
  S sc(const tir::Value& v) {
    using K = tir::ValueKind;
    switch (v.kind) {
      case K::Const: {
        S r;
        if (is_float(v.type.elem)) r.f = round_to(v.type.elem, static_cast<float>(v.float_value));
        else r.i = norm(v.type.elem, v.int_value);
        return r;
      }
      case K::ParamRef: return l_.scalars[static_cast<std::size_t>(v.param)];
      case K::SizeRef: return S{l_.sizes[static_cast<std::size_t>(v.size)], 0};
      case K::VarRef: return vars_[static_cast<std::size_t>(v.var)].s;
      case K::BuiltinRef:
        switch (v.builtin) {
          case tir::Builtin::rank: return S{l_.ctx.rank, 0};
          case tir::Builtin::world: return S{l_.ctx.world, 0};
          case tir::Builtin::sms: return S{l_.sms, 0};
          case tir::Builtin::program: return S{program_, 0};
          case tir::Builtin::programs: return S{programs_, 0};
          case tir::Builtin::resident: fail(v.range, "a kernel body reads `resident`");
        }
        return {};
      case K::RangeStart: return S{rg(*v.operands[0]).start, 0};
      case K::RangeExtent: return S{rg(*v.operands[0]).extent, 0};
      case K::Unary: return un(v.unop, v.type.elem, sc(*v.operands[0]));
      case K::Binary: {
        const S a = sc(*v.operands[0]);
        return bin(v, v.binop, v.operands[0]->type.elem, a, sc(*v.operands[1]));
      }
      case K::Cast: return cast(v.type.elem, v.operands[0]->type.elem, sc(*v.operands[0]));
      case K::Load: {
        const View1 w = view1(v.view, v.range, "a load of");
        const ScalarType t = elem_of(v.view.param);
        const char* b = base(v.view.param, v.rank, v.range);
        track(v.view.param, b, w.offset, false, v.range);
        return cast(v.type.elem, t, read(t, b + w.offset * elem_bytes(t)));
      }
      case K::Reduce: return reduce(v);
      case K::Atomic: {
        const View1 w = view1(v.view, v.range, "an atomic on");
        const ScalarType t = elem_of(v.view.param);
        const S x = cast(t, v.operands[0]->type.elem, sc(*v.operands[0]));
        const S d = v.operands.size() > 1 ? cast(t, v.operands[1]->type.elem, sc(*v.operands[1])) : S{};
        char* p = base(v.view.param, v.rank, v.range) + w.offset * elem_bytes(t);
        const S old = atomically(v.view.param, p, w.offset, v.order, v.range, [&] { return atomic(t, p, v.atomic_op, v.order, x, d); });
        return cast(v.type.elem, t, old);
      }
      case K::Fill:
      case K::Iota:
      case K::Matmul: break;
    }
    fail(v.range, std::string("a tile where a scalar was expected (") + tir::name(v.kind) + ")");
  }

  S reduce(const tir::Value& v) {
    const tir::Value& x = *v.operands[0];
    std::vector<S> t;
    tl(x, t);
    const ScalarType e = x.type.elem;
    const bool flt = is_float(e);
    S acc;
    if (v.reduce_op == tir::ReduceOp::sum) {
      // Halves sum in float, as the device does, then round once.
      for (const S& s : t) {
        if (flt) acc.f += s.f;
        else acc.i = norm(e, static_cast<i64>(static_cast<u64>(acc.i) + static_cast<u64>(s.i)));
      }
      if (flt) acc.f = round_to(e, acc.f);
      return acc;
    }
    if (t.empty()) return acc;
    acc = t[0];
    for (const S& s : t) {
      if (v.reduce_op == tir::ReduceOp::max ? less(e, acc, s) : less(e, s, acc)) acc = s;
    }
    return acc;
  }

  // A tile value, element by element (row-major for 2-D tiles), into `out`.
  void tl(const tir::Value& v, std::vector<S>& out) {
    using K = tir::ValueKind;
    const std::size_t n = static_cast<std::size_t>(v.type.elements());
    if (!v.type.is_tile()) {
      out.assign(n ? n : 1, sc(v));
      return;
    }
    switch (v.kind) {
      case K::VarRef: out = vars_[static_cast<std::size_t>(v.var)].t; return;
      case K::Unary: {
        tl(*v.operands[0], out);
        for (S& s : out) s = un(v.unop, v.type.elem, s);
        return;
      }
      case K::Cast: {
        tl(*v.operands[0], out);
        const ScalarType from = v.operands[0]->type.elem;
        for (S& s : out) s = cast(v.type.elem, from, s);
        return;
      }
      case K::Binary: {
        const tir::Value& a = *v.operands[0];
        const tir::Value& b = *v.operands[1];
        const ScalarType t = a.type.elem;
        std::vector<S> ta, tb;
        const bool at = a.type.is_tile(), bt = b.type.is_tile();
        S sa{}, sb{};
        if (at) tl(a, ta); else sa = sc(a);
        if (bt) tl(b, tb); else sb = sc(b);
        out.resize(n);
        for (std::size_t i = 0; i < n; ++i) out[i] = bin(v, v.binop, t, at ? ta[i] : sa, bt ? tb[i] : sb);
        return;
      }
      case K::Fill: {
        out.assign(n, sc(*v.operands[0]));
        return;
      }
      case K::Iota: {
        const i64 start = rg(*v.operands[0]).start;
        out.resize(n);
        for (std::size_t i = 0; i < n; ++i) out[i] = S{start + static_cast<i64>(i), 0};
        return;
      }
      case K::Load: {
        const ScalarType t = elem_of(v.view.param);
        const S other = v.operands.empty() ? S{} : cast(t, v.operands[0]->type.elem, sc(*v.operands[0]));
        S masked = cast(v.type.elem, t, other);
        out.assign(n, masked);
        if (v.view.rows) {
          const View2 w = view2(v.view, v.range, "a load of");
          const char* b = base(v.view.param, v.rank, v.range);
          for (i64 i = 0; i < w.rows; ++i) {
            track_range(v.view.param, b, w.offset + i * w.ld, w.cols, false, v.range);
            for (i64 j = 0; j < w.cols; ++j) {
              out[static_cast<std::size_t>(i * v.view.size + j)] =
                  cast(v.type.elem, t, read(t, b + (w.offset + i * w.ld + j) * elem_bytes(t)));
            }
          }
          return;
        }
        const View1 w = view1(v.view, v.range, "a load of");
        track_range(v.view.param, base(v.view.param, v.rank, v.range), w.offset, w.n, false, v.range);
        const char* b = base(v.view.param, v.rank, v.range) + w.offset * elem_bytes(t);
        for (i64 e = 0; e < w.n; ++e) out[static_cast<std::size_t>(e)] = cast(v.type.elem, t, read(t, b + e * elem_bytes(t)));
        return;
      }
      case K::Atomic: {
        const ScalarType t = elem_of(v.view.param);
        if (v.view.rows) {
          // A 2-D add or sub: a statement (sema), so no old values come back.
          const View2 w = view2(v.view, v.range, "an atomic on");
          const tir::Value& xv = *v.operands[0];
          std::vector<S> x;
          if (xv.type.is_tile()) tl(xv, x); else x.assign(n, sc(xv));
          char* b = base(v.view.param, v.rank, v.range);
          out.assign(n, S{});
          for (i64 i = 0; i < w.rows; ++i) {
            for (i64 j = 0; j < w.cols; ++j) {
              const i64 at = w.offset + i * w.ld + j;
              const S xe = cast(t, xv.type.elem, x[static_cast<std::size_t>(i * v.view.size + j)]);
              char* p = b + at * elem_bytes(t);
              atomically(v.view.param, p, at, v.order, v.range, [&] { return atomic(t, p, v.atomic_op, v.order, xe, S{}); });
            }
          }
          return;
        }
        const View1 w = view1(v.view, v.range, "an atomic on");
        std::vector<S> x, d;
        const tir::Value& xv = *v.operands[0];
        if (xv.type.is_tile()) tl(xv, x); else x.assign(n, sc(xv));
        if (v.operands.size() > 1) {
          const tir::Value& dv = *v.operands[1];
          if (dv.type.is_tile()) tl(dv, d); else d.assign(n, sc(dv));
        }
        char* b = base(v.view.param, v.rank, v.range) + w.offset * elem_bytes(t);
        out.assign(n, S{});
        for (i64 e = 0; e < w.n; ++e) {
          const std::size_t i = static_cast<std::size_t>(e);
          const S xe = cast(t, xv.type.elem, x[i]);
          const S de = d.empty() ? S{} : cast(t, v.operands[1]->type.elem, d[i]);
          char* p = b + e * elem_bytes(t);
          const S o = atomically(v.view.param, p, w.offset + e, v.order, v.range, [&] { return atomic(t, p, v.atomic_op, v.order, xe, de); });
          out[i] = cast(v.type.elem, t, o);
        }
        return;
      }
      case K::Matmul: matmul(v, out); return;
      default: break;
    }
    fail(v.range, std::string("a ") + tir::name(v.kind) + " cannot be a tile");
  }

  // acc[i, j] = sum over k of A[i, k] * B[k, j] in float, rows past A's valid rows,
  // columns past B's valid columns and k past K reading as 0 (the simple lowering's
  // semantics; B as a row panel Bt[n, :] is B given as [N, K]).
  void matmul(const tir::Value& v, std::vector<S>& out) {
    const i64 R = v.type.rows, C = v.type.size;
    const tir::View& a = v.view;
    const tir::View& b = v.view_b;
    const bool nk = b.slice_dim == 1;
    const i64 K = sc(*a.full).i;
    const i64 a_off = sc(*a.offset).i, lda = sc(*a.ld).i;
    const i64 a_rows = std::clamp<i64>(sc(*a.row_extent).i, 0, R);
    const i64 b_off = sc(*b.offset).i, ldb = sc(*b.ld).i;
    const i64 b_cols = std::clamp<i64>(sc(nk ? *b.row_extent : *b.extent).i, 0, C);
    const ScalarType ta = elem_of(a.param), tb = elem_of(b.param);
    // gathered(A): row g of the stacked [world * M, K] is row g % M of rank g / M's A.
    const i64 M = a.gathered ? l_.dims[static_cast<std::size_t>(a.param)][0] : 0;
    auto a_row = [&](i64 i, i64* off) -> const char* {
      if (!a.gathered) {
        *off = a_off + i * lda;
        return l_.tensors[static_cast<std::size_t>(a.param)];
      }
      const i64 g = a_off / lda + i, q = g / M;
      *off = g % M * lda;
      return device::translate(l_.ctx, l_.tensors[static_cast<std::size_t>(a.param)], static_cast<int>(q));
    };
    if (a.gathered && a_rows > 0 && K > 0 && (a_off % lda != 0 || a_off < 0 || a_off / lda + a_rows > M * l_.ctx.world)) {
      fail(v.range, "a matmul read of gathered rows " + std::to_string(a_off / lda) + " to " +
                        std::to_string(a_off / lda + a_rows - 1) + " of " + param(a.param).name + ", outside the " +
                        std::to_string(M * l_.ctx.world) + " rows of every rank's (shape " + shape(a.param) + " each)");
    }
    if (!a.gathered && a_rows > 0 && K > 0) check2(a.param, a_off, lda, a_rows, K, v.range, "a matmul read of");
    if (b_cols > 0 && K > 0) {
      if (nk) check2(b.param, b_off, ldb, b_cols, K, v.range, "a matmul read of");
      else check2(b.param, b_off, ldb, K, b_cols, v.range, "a matmul read of");
    }
    const char* pb = l_.tensors[static_cast<std::size_t>(b.param)];
    // A and B as float, once: [a_rows, K] and [K, b_cols].
    std::vector<float> fa(static_cast<std::size_t>(a_rows * K)), fb(static_cast<std::size_t>(K * b_cols));
    for (i64 i = 0; K > 0 && i < a_rows; ++i) {
      i64 off = 0;
      const char* pa = a_row(i, &off);
      track_range(a.param, pa, off, K, false, v.range);
      for (i64 kk = 0; kk < K; ++kk) {
        fa[static_cast<std::size_t>(i * K + kk)] = cast(ScalarType::f32, ta, read(ta, pa + (off + kk) * elem_bytes(ta))).f;
      }
    }
    for (i64 kk = 0; kk < K; ++kk) {
      for (i64 j = 0; j < b_cols; ++j) {
        const i64 e = nk ? b_off + j * ldb + kk : b_off + kk * ldb + j;
        track(b.param, pb, e, false, v.range);
        fb[static_cast<std::size_t>(kk * b_cols + j)] = cast(ScalarType::f32, tb, read(tb, pb + e * elem_bytes(tb))).f;
      }
    }
    std::vector<float> acc(static_cast<std::size_t>(R * C), 0.f);
    for (i64 i = 0; i < a_rows; ++i) {
      float* row = &acc[static_cast<std::size_t>(i * C)];
      for (i64 kk = 0; kk < K; ++kk) {
        const float x = fa[static_cast<std::size_t>(i * K + kk)];
        const float* brow = &fb[static_cast<std::size_t>(kk * b_cols)];
        for (i64 j = 0; j < b_cols; ++j) row[j] = std::fma(x, brow[j], row[j]);
      }
    }
    out.resize(static_cast<std::size_t>(R * C));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = cast(v.type.elem, ScalarType::f32, S{0, acc[i]});
  }

  // ---- statements ---------------------------------------------------------------------------
  void stmts(const std::vector<tir::StmtPtr>& body) {
    for (const tir::StmtPtr& s : body) stmt(*s);
  }

  void assign(int var, const tir::Value& v) {
    VarV& x = vars_[static_cast<std::size_t>(var)];
    const tir::Type& t = k_.vars[static_cast<std::size_t>(var)].type;
    if (t.is_tile()) {
      std::vector<S> tmp;
      if (v.type.is_tile()) tl(v, tmp);
      else tmp.assign(static_cast<std::size_t>(t.elements()), sc(v));  // a scalar fills the tile
      x.t = std::move(tmp);
    } else if (t.kind == tir::TypeKind::Range) {
      x.r = rg(v);
    } else {
      x.s = sc(v);
    }
  }

  // A tile (or a scalar broadcast) to store, converted to the tensor's type.
  std::vector<S> source(const tir::Value& v, std::size_t n, ScalarType to) {
    std::vector<S> t;
    if (v.type.is_tile()) tl(v, t);
    else t.assign(n, sc(v));
    for (S& s : t) s = cast(to, v.type.elem, s);
    return t;
  }

  void after_wait() {
    if (l_.failed.load(std::memory_order_relaxed)) throw Stopped{};
    if (l_.ctx.control && std::atomic_ref<unsigned>(l_.ctx.control->abort).load(std::memory_order_relaxed)) throw Stopped{};
  }

  void stmt(const tir::Stmt& s) {
    using K = tir::StmtKind;
    switch (s.kind) {
      case K::Let:
      case K::Assign: assign(s.var, *s.value); return;
      case K::Store: {
        const ScalarType t = elem_of(s.view.param);
        const int eb = elem_bytes(t);
        if (s.view.rows) {
          const std::vector<S> x = source(*s.value, static_cast<std::size_t>(s.view.rows * s.view.size), t);
          const View2 w = view2(s.view, s.range, "a store to");
          char* b = base(s.view.param, s.rank, s.range);
          for (i64 i = 0; i < w.rows; ++i) {
            track_range(s.view.param, b, w.offset + i * w.ld, w.cols, true, s.range);
            for (i64 j = 0; j < w.cols; ++j) write(t, b + (w.offset + i * w.ld + j) * eb, x[static_cast<std::size_t>(i * s.view.size + j)]);
          }
          return;
        }
        if (s.view.size) {
          const std::vector<S> x = source(*s.value, static_cast<std::size_t>(s.view.size), t);
          const View1 w = view1(s.view, s.range, "a store to");
          track_range(s.view.param, base(s.view.param, s.rank, s.range), w.offset, w.n, true, s.range);
          char* b = base(s.view.param, s.rank, s.range) + w.offset * eb;
          for (i64 e = 0; e < w.n; ++e) write(t, b + e * eb, x[static_cast<std::size_t>(e)]);
          return;
        }
        const S x = cast(t, s.value->type.elem, sc(*s.value));
        const View1 w = view1(s.view, s.range, "a store to");
        track(s.view.param, base(s.view.param, s.rank, s.range), w.offset, true, s.range);
        write(t, base(s.view.param, s.rank, s.range) + w.offset * eb, x);
        return;
      }
      case K::Signal: {
        const ScalarType t = elem_of(s.view.param);
        const S x = cast(t, s.value->type.elem, sc(*s.value));
        const View1 w = view1(s.view, s.range, "a signal of");
        char* p = base(s.view.param, s.rank, s.range) + w.offset * elem_bytes(t);
        const std::memory_order mo = memory_order(s.order);
        // A signal releases unless it is relaxed (its default order is release).
        const tir::Order order = s.order == tir::Order::relaxed ? tir::Order::relaxed : tir::Order::release;
        atomically(s.view.param, p, w.offset, order, s.range, [&] {
          if (s.signal_op == tir::SignalOp::add) {
            atomic(t, p, tir::AtomicOp::add, s.order, x, S{});
          } else if (elem_bytes(t) == 8) {
            store_bits<u64>(p, static_cast<u64>(x.i), store_order(mo));
          } else if (elem_bytes(t) == 4) {
            store_bits<std::uint32_t>(p, static_cast<std::uint32_t>(x.i), store_order(mo));
          } else {
            std::atomic_thread_fence(std::memory_order_seq_cst);
            write(t, p, x);
          }
          return 0;
        });
        return;
      }
      case K::Wait: {
        const ScalarType t = elem_of(s.view.param);
        const S x = cast(t, s.value->type.elem, sc(*s.value));
        const View1 w = view1(s.view, s.range, "a wait on");
        const char* p = base(s.view.param, nullptr, s.range) + w.offset * elem_bytes(t);
        if (elem_bytes(t) != 4 && elem_bytes(t) != 8) fail(s.range, "a wait on a flag that is not 32 or 64 bits");
        Flag f{p, elem_bytes(t), t == ScalarType::i32 || t == ScalarType::i64, param(s.view.param).name.c_str(), w.offset};
        const std::string where = site(s.range);
        wait(l_.ctx, f, static_cast<device::Cmp>(s.cmp), static_cast<u64>(x.i), device::WaitSite{where.c_str(), -1, 0},
             static_cast<int>(program_), &l_.failed);
        after_wait();
        if (races::enabled()) {
          if (s.order != tir::Order::relaxed) races::acquire(l_.ctx, p);
          track_as(s.view.param, p, w.offset, races::Access::atomic_read, s.range);
        }
        return;
      }
      case K::Eval: {
        if (s.value->type.is_tile()) {
          std::vector<S> t;
          tl(*s.value, t);
        } else {
          (void)sc(*s.value);
        }
        return;
      }
      case K::ForBlocks: {
        const i64 bound = sc(*s.hi).i;
        VarV& v = vars_[static_cast<std::size_t>(s.var)];
        for (i64 start = program_ * s.step; start < bound; start += programs_ * s.step) {
          v.r = {start, bound - start < s.step ? bound - start : s.step};
          stmts(s.body);
        }
        return;
      }
      case K::ForTiles: {
        const i64 rows = sc(*s.hi).i, cols = sc(*s.hi2).i;
        const i64 across = (cols + s.step2 - 1) / s.step2;
        const i64 total = (rows + s.step - 1) / s.step * across;
        for (i64 t = program_; t < total; t += programs_) {
          VarV& m = vars_[static_cast<std::size_t>(s.var)];
          m.r.start = t / across * s.step;
          m.r.extent = rows - m.r.start < s.step ? rows - m.r.start : s.step;
          VarV& n = vars_[static_cast<std::size_t>(s.var2)];
          n.r.start = t % across * s.step2;
          n.r.extent = cols - n.r.start < s.step2 ? cols - n.r.start : s.step2;
          if (s.var_t >= 0) vars_[static_cast<std::size_t>(s.var_t)].s = S{t, 0};
          stmts(s.body);
        }
        return;
      }
      case K::ForRanks: {
        const int world = l_.ctx.world;
        for (int k = s.peers_only ? 1 : 0; k < world; ++k) {
          vars_[static_cast<std::size_t>(s.var)].s = S{s.peers_only ? (l_.ctx.rank + k) % world : k, 0};
          stmts(s.body);
        }
        return;
      }
      case K::ForRange: {
        const i64 lo = sc(*s.lo).i, hi = sc(*s.hi).i;
        for (i64 i = lo; i < hi; ++i) {
          vars_[static_cast<std::size_t>(s.var)].s = S{i, 0};
          stmts(s.body);
        }
        return;
      }
      case K::If: {
        if (sc(*s.value).i) stmts(s.body);
        else stmts(s.else_body);
        return;
      }
      case K::Role: return;  // run() splits the grid
    }
  }
};

// Each tensor's extents, from the launch's size symbols and world.
void bind_shapes(Launch& l) {
  l.dims.assign(l.k.params.size(), {});
  l.elements.assign(l.k.params.size(), 0);
  for (std::size_t p = 0; p < l.k.params.size(); ++p) {
    const tir::Param& prm = l.k.params[p];
    if (!prm.is_tensor) continue;
    i64 n = 1;
    for (const irisc::contract::Expr& e : l.ck.params[p].dims) {
      i64 d = 0;
      irisc::contract::Bindings b{l.sizes, l.ctx.world, l.sms, 1};
      if (irisc::contract::eval(e, b, &d) != irisc::contract::EvalError::ok) d = 0;
      l.dims[p].push_back(d);
      n = d < 0 ? 0 : n * d;
    }
    l.elements[p] = n;
  }
}

}  // namespace

std::unique_ptr<LoadedModule> load(const void* image, const std::string& name) {
  const char* text = static_cast<const char*>(image);
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(text), std::strlen(text));
  irisc::HostCode code;
  std::string why;
  if (!irisc::read_host_code(bytes, &code, &why)) throw Error(name + " is not a well-formed host code object: " + why);
  auto lp = std::make_shared<LoadedProgram>(LoadedProgram{irisc::SourceBuffer(code.name, code.source), {}, {}});
  irisc::CompileOptions co;
  co.target = "host";
  co.defines = code.defines;
  co.trace_events = code.trace_events;
  co.import_files.insert(code.imports.begin(), code.imports.end());
  irisc::CompileResult r = irisc::compile_to_tir(lp->source, co, &lp->module, &lp->source);
  if (!r.ok) throw Error("cannot load " + name + ": irisc cannot compile it for the host backend:\n" + r.rendered_diagnostics);
  auto out = std::make_unique<LoadedModule>();
  lp->contract = irisc::launch_contract(lp->module);
  out->metadata = irisc::contract::write(lp->contract);
  for (std::size_t i = 0; i < lp->contract.kernels.size(); ++i) {
    InterpretedKernel k;
    k.kernel = static_cast<int>(i);
    k.symbol = lp->contract.kernels[i].symbol;
    for (const irisc::contract::Arg& a : lp->contract.kernels[i].args) k.param_sizes.push_back(static_cast<std::size_t>(a.bytes));
    out->kernels.push_back(std::move(k));
  }
  out->program = lp;
  for (InterpretedKernel& k : out->kernels) k.program = lp;
  return out;
}

void run(const InterpretedKernel& kernel, unsigned programs, void** args) {
  Launch l(*kernel.program, kernel.kernel, args);
  bind_shapes(l);
  if (programs == 0) return;
  // Role kernels run every program at once (their roles wait on each other); other
  // grids as many at once as the host's "GPU" holds.
  const unsigned workers = l.k.roles.empty() ? std::min(programs, kResidentPrograms) : programs;
  LaunchScope launch(l.ctx, static_cast<int>(workers));
  std::atomic<unsigned> next{0};
  auto worker = [&] {
    WorkerScope scope(l.ctx);
    for (unsigned p; !l.failed.load() && (p = next.fetch_add(1)) < programs;) {
      try {
        Program(l, p, programs).run();
      } catch (const Stopped&) {
        return;
      } catch (...) {
        l.fail(std::current_exception());
        return;
      }
    }
  };
  if (workers == 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    threads.reserve(workers);
    try {
      for (unsigned w = 0; w < workers; ++w) threads.emplace_back(worker);
    } catch (const std::system_error& e) {
      // The started workers stop at their next wait; the missing ones never count.
      l.fail(std::make_exception_ptr(Error("the host backend could not start thread " + std::to_string(threads.size()) +
                                           " of " + std::to_string(workers) + " for this launch: " + e.what())));
    }
    for (std::thread& t : threads) t.join();
  }
  if (l.error) std::rethrow_exception(l.error);
}

}  // namespace iris::host
