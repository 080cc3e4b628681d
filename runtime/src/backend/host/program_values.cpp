// A host-backend program's values (program.hpp): scalars, tiles, reductions and
// products, computed as the CUDA printer's code computes them.
#include "backend/host/program.hpp"

#include "backend/host/host_job.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace iris::host::interp {

RangeV Program::rg(const tir::Value& v) {
  if (v.kind == tir::ValueKind::VarRef) return vars_[static_cast<std::size_t>(v.var)].r;
  if (v.kind == tir::ValueKind::Binary) {
    RangeV r = rg(*v.operands[0]);
    r.start = bin(v, v.binop, ScalarType::i64, S{r.start, 0}, sc(*v.operands[1])).i;
    return r;
  }
  return {};
}

S Program::bin(const tir::Value& at, tir::BinOp op, ScalarType t, S a, S b) {
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

S Program::un(tir::UnOp op, ScalarType t, S a) {
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

S Program::sc(const tir::Value& v) {
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
    case K::LoadFlagged: {
      const View1 w = view1(v.view, v.range, "a flagged load of");
      const char* b = base(v.view.param, nullptr, v.range) + w.offset * 8;
      if (races::enabled()) track_as(v.view.param, b, w.offset, races::Access::atomic_read, v.range);
      return flagged_value(v, b, 0, static_cast<std::uint64_t>(sc(*v.operands[0]).i) & 0xffffffffu, site(v.range));
    }
    case K::Reduce: return reduce(v);
    case K::Select: {
      const S c = sc(*v.operands[0]);
      const S a = sc(*v.operands[1]);
      const S b = sc(*v.operands[2]);
      return c.i ? a : b;
    }
    case K::Atomic: {
      const View1 w = view1(v.view, v.range, "an atomic on");
      const ScalarType t = elem_of(v.view.param);
      const S x = cast(t, v.operands[0]->type.elem, sc(*v.operands[0]));
      const S d = v.operands.size() > 1 ? cast(t, v.operands[1]->type.elem, sc(*v.operands[1])) : S{};
      char* p = base(v.view.param, v.rank, v.range) + w.offset * elem_bytes(t);
      const S old = atomically(v.view.param, p, w.offset, v.order, v.scope, v.range, [&] { return atomic(t, p, v.atomic_op, v.order, x, d); });
      return cast(v.type.elem, t, old);
    }
    case K::Fill:
    case K::Iota:
    case K::Broadcast:
    case K::Receive:
    case K::Matmul: break;
  }
  fail(v.range, std::string("a tile where a scalar was expected (") + tir::name(v.kind) + ")");
}

namespace {

// `count` elements of `t` of type e from `first`, `stride` apart, folded with `op`.
S fold(tir::ReduceOp op, ScalarType e, const std::vector<S>& t, std::size_t first, std::size_t stride, std::size_t count) {
  const bool flt = is_float(e);
  S acc;
  if (op == tir::ReduceOp::sum) {
    // Halves sum in float, as the device does, then round once.
    for (std::size_t k = 0; k < count; ++k) {
      const S& s = t[first + k * stride];
      if (flt) acc.f += s.f;
      else acc.i = norm(e, static_cast<i64>(static_cast<u64>(acc.i) + static_cast<u64>(s.i)));
    }
    if (flt) acc.f = round_to(e, acc.f);
    return acc;
  }
  if (count == 0) return acc;
  acc = t[first];
  for (std::size_t k = 0; k < count; ++k) {
    const S& s = t[first + k * stride];
    if (op == tir::ReduceOp::max ? less(e, acc, s) : less(e, s, acc)) acc = s;
  }
  return acc;
}

}  // namespace

S Program::reduce(const tir::Value& v) {
  const tir::Value& x = *v.operands[0];
  std::vector<S> t;
  tl(x, t);
  return fold(v.reduce_op, x.type.elem, t, 0, 1, t.size());
}

void Program::tl(const tir::Value& v, std::vector<S>& out) {
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
    case K::LoadFlagged: {
      const View1 w = words1(v.view, v.type.elem, v.range, "a flagged load of");
      const char* b = base(v.view.param, nullptr, v.range) + w.offset * 8;
      const std::uint64_t flag = static_cast<std::uint64_t>(sc(*v.operands[0]).i) & 0xffffffffu;
      const std::string where = site(v.range);
      const i64 per = elem_bytes(v.type.elem) == 2 ? 2 : 1;  // values a word
      out.assign(n, S{});
      for (i64 e = 0; e < w.n; ++e) {
        if (races::enabled()) track_as(v.view.param, b + e / per * 8, w.offset + e / per, races::Access::atomic_read, v.range);
        out[static_cast<std::size_t>(e)] = flagged_value(v, b, e, flag, where);
      }
      return;
    }
    case K::Receive: {
      // Each slot waited for until it holds a value, read, and emptied again.
      const ScalarType t = elem_of(v.view.param);
      const int eb = elem_bytes(t);
      const View1 w = view1(v.view, v.range, "a receive of");
      char* b = base(v.view.param, nullptr, v.range) + w.offset * eb;
      const std::string where = site(v.range);
      const std::uint64_t empty = eb == 2 ? 0xffffu : 0xffffffffu;
      out.assign(n, S{});
      for (i64 e = 0; e < w.n; ++e) {
        char* p = b + e * eb;
        if (races::enabled()) track_as(v.view.param, p, w.offset + e, races::Access::atomic_read, v.range);
        Flag f{p, eb, false, param(v.view.param).name.c_str(), w.offset + e};
        wait(l_.ctx, f, device::Cmp::ne, empty, device::WaitSite{where.c_str(), -1, 0}, static_cast<int>(program_), &l_.failed);
        after_wait();
        out[static_cast<std::size_t>(e)] = read(t, p);
        if (races::enabled()) track_as(v.view.param, p, w.offset + e, races::Access::atomic_write, v.range);
        if (eb == 2) store_bits<std::uint16_t>(p, static_cast<std::uint16_t>(empty));
        else store_bits<std::uint32_t>(p, static_cast<std::uint32_t>(empty));
      }
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
            atomically(v.view.param, p, at, v.order, v.scope, v.range, [&] { return atomic(t, p, v.atomic_op, v.order, xe, S{}); });
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
        const S o = atomically(v.view.param, p, w.offset + e, v.order, v.scope, v.range, [&] { return atomic(t, p, v.atomic_op, v.order, xe, de); });
        out[i] = cast(v.type.elem, t, o);
      }
      return;
    }
    case K::Matmul: matmul(v, out); return;
    case K::Reduce: {
      // Along an axis of a row-major R x C tile: axis 0 folds each column, axis 1 each row.
      const tir::Value& x = *v.operands[0];
      std::vector<S> t;
      tl(x, t);
      const std::size_t R = static_cast<std::size_t>(x.type.rows), C = static_cast<std::size_t>(x.type.size);
      out.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        out[i] = v.axis == 0 ? fold(v.reduce_op, x.type.elem, t, i, C, R) : fold(v.reduce_op, x.type.elem, t, i * C, 1, C);
      }
      return;
    }
    case K::Broadcast: {
      std::vector<S> t;
      tl(*v.operands[0], t);
      const std::size_t C = static_cast<std::size_t>(v.type.size);
      out.resize(n);
      for (std::size_t i = 0; i < n; ++i) out[i] = t[v.axis == 0 ? i % C : i / C];
      return;
    }
    case K::Select: {
      std::vector<S> parts[3];
      S one[3];
      for (std::size_t k = 0; k < 3; ++k) {
        const tir::Value& x = *v.operands[k];
        if (x.type.is_tile()) tl(x, parts[k]);
        else one[k] = sc(x);
      }
      out.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        const auto at = [&](std::size_t k) { return parts[k].empty() ? one[k] : parts[k][i]; };
        out[i] = at(0).i ? at(1) : at(2);
      }
      return;
    }
    default: break;
  }
  fail(v.range, std::string("a ") + tir::name(v.kind) + " cannot be a tile");
}

void Program::matmul(const tir::Value& v, std::vector<S>& out) {
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

}  // namespace iris::host::interp
