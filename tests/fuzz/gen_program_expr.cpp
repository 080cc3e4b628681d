// The program generator's expressions: conversions, indices, ranges, views, tile shapes, values.
#include "tests/fuzz/gen_program_internal.hpp"

namespace irisc_fuzz::detail {

// ---- hoisting: a let made right before the statement, used only at one odd place ------
Ex Gen::hoist(const Ex& x) {
  if (!pre_) return x;
  const std::string n = user_name("h");
  GenNode let;
  let.head = "let " + n + " = " + x.t + ";";
  pre_->push_back(std::move(let));
  ++stmts_;
  declare(n, x.ty, true, true);
  Ex r;
  r.t = n;
  r.ty = x.ty;
  return r;
}

// ---- sema's conversion rules (check_expr.cpp: coerce / Binary) ----------------------------
bool Gen::coerce_ok(const Ex& v, E to) {
  const E from = v.ty.e;
  if (from == to) return true;
  return (v.lit && from != E::b && to != E::b && !(isf(from) && isi(to))) || (from == E::int_ && isi(to)) ||
         (isi(from) && to == E::int_);
}

std::optional<E> Gen::unify(const Ex& a, const Ex& b) {
  if (a.ty.e == b.ty.e) return a.ty.e;
  if (b.lit || (b.ty.e == E::int_ && isi(a.ty.e))) {
    if (coerce_ok(b, a.ty.e)) return a.ty.e;
    return std::nullopt;
  }
  if (a.lit || (a.ty.e == E::int_ && isi(b.ty.e))) {
    if (coerce_ok(a, b.ty.e)) return b.ty.e;
    return std::nullopt;
  }
  return std::nullopt;
}

// x converted to exactly e (a cast when sema would not convert it by itself).
Ex Gen::exact(const Ex& x, E e) {
  if (x.ty.e == e) return x;
  Ex r;
  r.t = "(" + x.t + ") as " + en(e);
  r.ty = x.ty;
  r.ty.e = e;
  return r;
}

// ---- integer leaves --------------------------------------------------------------------------
// A scalar of the index type `int` that sema does not see as a constant.
Ex Gen::int_leaf() {
  Choices c;
  c.push_back({8, [&] { return named_int(pick(std::vector<std::string>{"rank", "world", "sms", "program", "programs"})); }});
  if (!sizes_.empty()) c.push_back({5, [&] { return named_int(pick(sizes_)); }});
  auto iv = visible([](const Var& v) { return v.ty == Ty::scalar(E::int_); });
  if (!iv.empty()) c.push_back({8, [&, iv] { return named_int(pick(iv).name); }});
  if (!range_sizes().empty()) {
    c.push_back({5, [&] {
                   auto r = range_any();
                   Ex x;
                   x.t = (p_(0.5) ? "start(" : "extent(") + r.t + ")";
                   x.ty = Ty::scalar(E::int_);
                   return x;
                 }});
  }
  return choose(c);
}

Ex Gen::named_int(const std::string& n) {
  Ex x;
  x.t = n;
  x.ty = Ty::scalar(E::int_);
  return x;
}

// ---- ranges ------------------------------------------------------------------------------------
Ex Gen::range_of(const Var& v, bool odd) {
  Ex x;
  x.t = v.name;
  x.ty = v.ty;
  if (p_(0.18)) {
    Ex k = p_(0.6) ? lit_int(between(1, 64)) : ipos(1, false);
    x.t = "(" + v.name + (p_(0.5) ? " + " : " - ") + k.t + ")";
  }
  if (odd && p_(0.15)) x = hoist(x);
  return x;
}

std::optional<Ex> Gen::range_sized(std::int64_t n, bool odd) {
  auto rs = visible([n](const Var& v) { return v.ty.k == K::Range && v.ty.sh.size == n; });
  if (rs.empty()) return std::nullopt;
  return range_of(pick(rs), odd);
}

Ex Gen::range_any() {
  auto rs = visible([](const Var& v) { return v.ty.k == K::Range; });
  return range_of(pick(rs), true);
}

// ---- integer positions: indices, ranks, wait indices, bounds ----------------------------------
// Any integer scalar (sema converts every integer type to the index type there),
// sometimes through a let made just for this place.
Ex Gen::ipos(int d, bool odd, double hoist_p) {
  Choices c;
  c.push_back({22, [&] { return lit_int(between(0, 7)); }});
  c.push_back({14, [&] { return int_leaf(); }});
  c.push_back({6, [&] {
                 Ex x;
                 x.t = "(rank + " + std::to_string(between(1, 3)) + ") % world";
                 x.ty = Ty::scalar(E::int_);
                 return x;
               }});
  auto sv = visible([](const Var& v) { return v.ty.k == K::Scalar && isi(v.ty.e); });
  for (const ScalarParam& s : scalars_) {
    if (isi(s.e)) c.push_back({3, [&, s] { return Ex{s.name, Ty::scalar(s.e)}; }});
  }
  if (!sv.empty()) c.push_back({8, [&, sv] { const Var& v = pick(sv); return Ex{v.name, v.ty}; }});
  if (d > 0) {
    c.push_back({10, [&] { return value({}, rand_int_elem(), d - 1); }});
    // A tile expression used only in an index: its layout must still be declared.
    c.push_back({6, [&] {
                   const E e = rand_int_elem();
                   Ex r;
                   r.t = std::string(pick(std::vector<std::string>{"sum", "max", "min"})) + "(" +
                         value(pick_tile_shape(false), e, d - 1).t + ")";
                   r.ty = Ty::scalar(e);
                   return r;
                 }});
    // f16 / bf16 / f32 only in an index.
    c.push_back({3, [&] {
                   const E f = pick(std::vector<E>{E::f16, E::bf16, E::bf16, E::f16, E::f32});
                   return exact(value({}, f, d - 1), rand_int_elem() == E::int_ ? E::int_ : E::i32);
                 }});
    auto it = tensors_where([](const Tensor& t) { return isi(t.e); });
    if (!it.empty()) c.push_back({4, [&, it] { return elem_load(tensors_[static_cast<std::size_t>(pick(it))]); }});
    auto at = tensors_where([](const Tensor& t) { return atomic_ok(t.e) && t.e != E::f32; });
    if (!at.empty()) c.push_back({2, [&, at] { return atomic_value(tensors_[static_cast<std::size_t>(pick(at))], {}, d - 1); }});
  }
  Ex x = choose(c);
  if (odd && p_(hoist_p)) x = hoist(x);
  return x;
}

// A loop or tiles bound.
Ex Gen::bound(int d) {
  Choices c;
  if (!sizes_.empty()) {
    c.push_back({14, [&] { return named_int(pick(sizes_)); }});
    c.push_back({5, [&] {
                   Ex x = named_int(pick(sizes_) + " * world");
                   if (p_(0.5)) x.t = "world * " + pick(sizes_);
                   return x;
                 }});
  }
  c.push_back({4, [&] { return lit_int(between(1, 3000)); }});
  c.push_back({6, [&] { return ipos(d, false); }});
  if (!range_sizes().empty()) c.push_back({3, [&] { return named_int("extent(" + range_any().t + ")"); }});
  Ex x = choose(c);
  if (p_(0.25)) x = hoist(x);
  return x;
}

// ---- views --------------------------------------------------------------------------------------
// One element of t: "t[i]" / "t[i, j]".
std::string Gen::elem_view(const Tensor& t) {
  std::string s = t.name + "[" + ipos(1).t;
  if (t.dims == 2) s += ", " + ipos(1).t;
  return s + "]";
}

// A tile view of shape sh (1-D: t[r] or t[i, r]; 2-D: t[m, n]); nullopt if impossible here.
std::optional<std::string> Gen::tile_view(const Tensor& t, Shape sh) {
  if (sh.rows) {
    if (t.dims != 2) return std::nullopt;
    auto m = range_sized(sh.rows), n = range_sized(sh.size);
    if (!m || !n) return std::nullopt;
    return t.name + "[" + m->t + ", " + n->t + "]";
  }
  auto r = range_sized(sh.size);
  if (!r) return std::nullopt;
  if (t.dims == 1) return t.name + "[" + r->t + "]";
  return t.name + "[" + ipos(1).t + ", " + r->t + "]";
}

bool Gen::can_view(const Tensor& t, Shape sh) const {
  if (sh.scalar()) return true;
  if (sh.rows) return t.dims == 2 && has_range(sh.rows) && has_range(sh.size);
  return has_range(sh.size);
}

std::string Gen::named_args(std::vector<std::string> args) {
  for (std::size_t i = args.size(); i > 1; --i) std::swap(args[i - 1], args[u(i)]);
  std::string s;
  for (const std::string& a : args) s += ", " + a;
  return s;
}

Ex Gen::elem_load(const Tensor& t) {
  Ex x;
  x.ty = Ty::scalar(t.e);
  const std::string v = elem_view(t);
  if (t.sym && p_(0.4)) x.t = "load(" + v + ", from: " + ipos(1).t + ")";
  else if (p_(0.5)) x.t = "load(" + v + ")";
  else x.t = v;
  return x;
}

std::optional<Ex> Gen::tile_load(const Tensor& t, Shape sh) {
  auto v = tile_view(t, sh);
  if (!v) return std::nullopt;
  Ex x;
  x.ty = Ty::tile(t.e, sh);
  std::vector<std::string> named;
  if (t.sym && p_(0.4)) named.push_back("from: " + ipos(1).t);
  if (p_(0.3)) named.push_back("other: " + operand({}, t.e, 0, true).t);
  if (named.empty() && p_(0.4)) x.t = *v;
  else x.t = "load(" + *v + named_args(named) + ")";
  return x;
}

// ---- tile shapes --------------------------------------------------------------------------------
bool Gen::has_2d_tensor() const {
  for (const Tensor& t : tensors_) {
    if (t.dims == 2) return true;
  }
  return false;
}

std::vector<Shape> Gen::shapes_1d() const {
  std::vector<Shape> v;
  for (std::int64_t s : range_sizes()) {
    if (ok1d(s)) v.push_back({s, 0});
  }
  return v;
}

std::vector<Shape> Gen::shapes_2d() const {
  std::vector<Shape> v;
  for (std::int64_t r : range_sizes()) {
    for (std::int64_t s : range_sizes()) {
      if (ok2d(r, s)) v.push_back({s, r});
    }
  }
  return v;
}

std::int64_t Gen::fill_size() {
  static const std::int64_t fs[] = {32, 64, 128, 256, 512, 1024, 2048, 4096};
  static const int w[] = {10, 14, 12, 12, 6, 4, 1, 1};
  std::vector<int> ws;
  for (std::size_t i = 0; i < std::size(fs); ++i) ws.push_back(ok1d(fs[i]) ? w[i] : 0);
  return fs[pickw(ws)];
}

Shape Gen::pick_tile_shape(bool allow2d) {
  std::vector<Shape> c = shapes_1d();
  if (allow2d && (has_2d_tensor() || !gemms_.empty())) {
    for (const Shape& s : shapes_2d()) c.push_back(s), c.push_back(s);
  }
  for (const Var& v : visible([](const Var& v) { return v.ty.k == K::Tile; })) {
    if (allow2d || !v.ty.sh.rows) c.push_back(v.ty.sh);
  }
  if (c.empty() || p_(0.3)) return {fill_size(), 0};
  return pick(c);
}

// ---- values --------------------------------------------------------------------------------------
// An operand for `x op this`: a literal that adapts, a scalar that broadcasts, the index
// type (which adapts to integers), or a value of exactly (sh, e).
Ex Gen::operand(Shape sh, E e, int d, bool scalar_only) {
  const int r = static_cast<int>(u(100));
  if (r < 28) {
    if (isi(e) && p_(0.05)) return lit_int_edge();
    if (e == E::u64 && p_(0.05)) return Ex{"18446744073709551615", Ty::scalar(E::u64), true};
    if (isi(e)) return lit_int(between(1, 9));
    if (isf(e)) return p_(0.7) ? lit_float() : lit_int(between(1, 9));
  }
  if (r < 42 && isi(e) && e != E::int_) return int_leaf();
  if (scalar_only || (r < 62 && !sh.scalar())) return value({}, e, d);
  return value(sh, e, d);
}

// A value of exactly element type e and shape sh.
Ex Gen::value(Shape sh, E e, int d) {
  if (e == E::b) return boolean(sh, d);
  Choices c;
  const bool scalar = sh.scalar();
  // leaves
  if (scalar) {
    if (e == E::int_) {
      c.push_back({6, [&] { return lit_int(between(0, 100)); }});
      c.push_back({8, [&] { return int_leaf(); }});
      if (!consts_.empty()) {
        c.push_back({3, [&] {
                       auto& [n, v] = pick(consts_);
                       Ex x = lit_int(v);
                       x.t = n;
                       return x;
                     }});
      }
    } else if (e == E::f32) {
      c.push_back({6, [&] { return lit_float(); }});
    } else {
      c.push_back({3, [&] { return exact(isf(e) && p_(0.6) ? lit_float() : lit_int(between(0, 100)), e); }});
    }
    for (const ScalarParam& s : scalars_) {
      if (s.e == e) c.push_back({6, [s] { return Ex{s.name, Ty::scalar(s.e)}; }});
    }
    auto et = tensors_where([e](const Tensor& t) { return t.e == e; });
    if (!et.empty()) c.push_back({6, [&, et] { return elem_load(tensors_[static_cast<std::size_t>(pick(et))]); }});
    if (et.empty() && !tensors_.empty() && p_(0.3)) {
      c.push_back({2, [&] { return exact(elem_load(pick(tensors_)), e); }});
    }
    if (word_elem_ok(e) && has_words()) c.push_back({2, [&] { return load_flagged({}, e); }});
  } else {
    if (!sh.rows) {
      if (sh.size >= 32 && sh.size <= 16384) c.push_back({6, [&] { return fill(sh, e, d); }});
      if (isi(e) && has_range(sh.size)) {
        c.push_back({e == E::int_ ? 6 : 3, [&] { return exact(Ex{"index(" + range_sized(sh.size)->t + ")", Ty::tile(E::int_, sh)}, e); }});
      }
    }
    auto et = tensors_where([&](const Tensor& t) { return t.e == e && can_view(t, sh); });
    if (!et.empty()) c.push_back({10, [&, et] { return *tile_load(tensors_[static_cast<std::size_t>(pick(et))], sh); }});
    auto ot = tensors_where([&](const Tensor& t) { return can_view(t, sh); });
    if (et.empty() && !ot.empty()) {
      c.push_back({6, [&, ot] { return exact(*tile_load(tensors_[static_cast<std::size_t>(pick(ot))], sh), e); }});
    }
    if (!sh.rows && has_range(sh.size)) {
      if (isf(e) && has_slots()) c.push_back({6, [&] { return receive(sh, e); }});
      if (word_ok(e) && has_words()) c.push_back({3, [&] { return load_flagged(sh, e); }});
    }
    if (sh.rows && isf(e) && can_matmul() && has_range(sh.rows) && has_range(sh.size)) {
      c.push_back({8, [&] { return matmul(sh, e); }});
    }
    if (!sh.rows && d > 0) {
      auto at = tensors_where([e](const Tensor& t) { return t.e == e && atomic_ok(e); });
      if (!at.empty() && has_range(sh.size)) {
        c.push_back({2, [&, at] { return atomic_value(tensors_[static_cast<std::size_t>(pick(at))], sh, d - 1); }});
      }
    }
  }
  auto vs = visible([&](const Var& v) { return v.ty == Ty::tile(e, sh); });
  if (!vs.empty()) c.push_back({10, [&, vs] { const Var& v = pick(vs); return Ex{v.name, v.ty}; }});
  if (c.empty() || d > 0) {
    // interior nodes (also the fallback when there is no leaf of this type)
    const int dd = std::max(d - 1, 0);
    c.push_back({d > 0 ? 14 : 1, [&, dd] { return binary(sh, e, dd); }});
    c.push_back({d > 0 ? 5 : 1, [&, dd] { return unary(sh, e, dd); }});
    c.push_back({d > 0 ? 6 : 1, [&, dd] {
                   E from = rand_scalar_elem();
                   if (from == e) from = E::b;
                   if (sh.rows && from == E::b) from = E::f32;
                   return exact(value(sh, from, dd), e);
                 }});
    c.push_back({d > 0 ? 3 : 0, [&, dd] { return minmax(sh, e, dd); }});
    if (scalar && d > 0) {
      c.push_back({6, [&, dd] {
                     Ex r;
                     r.t = std::string(pick(std::vector<std::string>{"sum", "max", "min", "sum"})) + "(" +
                           value(pick_tile_shape(true), e, dd).t + ")";
                     r.ty = Ty::scalar(e);
                     return r;
                   }});
      auto at = tensors_where([e](const Tensor& t) { return t.e == e && atomic_ok(e); });
      if (!at.empty()) c.push_back({2, [&, at, dd] { return atomic_value(tensors_[static_cast<std::size_t>(pick(at))], {}, dd); }});
    }
  }
  return choose(c);
}

Ex Gen::fill(Shape sh, E e, int d) {
  Ex x;
  x.ty = Ty::tile(e, sh);
  const std::string n = const_text(sh.size);
  const int k = static_cast<int>(u(3));
  if (k == 0) x.t = "zeros<" + std::string(en(e)) + ">(" + n + ")";
  else if (k == 1) x.t = "ones<" + std::string(en(e)) + ">(" + n + ")";
  else x.t = "fill<" + std::string(en(e)) + ">(" + operand({}, e, std::max(d - 1, 0), true).t + ", " + n + ")";
  return x;
}

Ex Gen::matmul(Shape sh, E acc) {
  ++matmuls_;
  const Gemm& g = pick(gemms_);
  const Tensor& a = tensors_[static_cast<std::size_t>(g.a)];
  const Tensor& b = tensors_[static_cast<std::size_t>(g.b)];
  // A range let used only as a matmul operand (v2_j_start).
  const Ex m = *range_sized(sh.rows), n = *range_sized(sh.size);
  std::string t = "matmul(" + a.name + "[" + m.t + ", :], " + b.name + "[:, " + n.t + "]";
  if (acc != E::f32 || p_(0.5)) t += std::string(", acc: ") + en(acc);
  t += ")";
  return Ex{t, Ty::tile(acc, sh)};
}

Ex Gen::atomic_value(const Tensor& t, Shape sh, int d) {
  Ex x;
  x.ty = Ty::tile(t.e, sh);
  x.t = atomic_call(t, sh, d);
  return x;
}

// atomic_<op>(view, v[, desired], to:, order:, scope:) on an element (sh scalar) or a
// 1-D tile view of t.
std::string Gen::atomic_call(const Tensor& t, Shape sh, int d) {
  std::vector<std::string> ops = {"atomic_add", "atomic_sub", "atomic_xchg", "atomic_cas"};
  if (t.e != E::f32) {
    for (const char* o : {"atomic_and", "atomic_or", "atomic_xor", "atomic_min", "atomic_max"}) ops.push_back(o);
  }
  const std::string op = pick(ops);
  std::string s = op + "(" + (sh.scalar() ? elem_view(t) : *tile_view(t, sh));
  const int n = op == "atomic_cas" ? 2 : 1;
  for (int i = 0; i < n; ++i) s += ", " + operand(sh, t.e, d).t;
  std::vector<std::string> named;
  if (t.sym && p_(0.6)) named.push_back("to: " + ipos(1).t);
  if (p_(0.6)) named.push_back(std::string("order: ") + pick(std::vector<std::string>{"relaxed", "acquire", "release", "acq_rel"}));
  if (p_(0.5)) named.push_back(std::string("scope: ") + pick(std::vector<std::string>{"block", "device", "system"}));
  return s + named_args(named) + ")";
}

Ex Gen::binary(Shape sh, E e, int d) {
  std::vector<std::string> ops = {"+", "-", "*", "/"};
  if (isi(e)) {
    for (const char* o : {"%", "&", "|", "^"}) ops.push_back(o);
  }
  const std::string op = pick(ops);
  Ex a = value(sh, e, d), b = operand(sh, e, d);
  if (p_(0.3)) std::swap(a, b);
  auto u1 = unify(a, b);
  if (!u1 || *u1 != e) {
    std::swap(a, b);
    u1 = unify(a, b);
    if (!u1 || *u1 != e) return value(sh, e, 0);
  }
  // The shape: the tile side (both tiles have shape sh, or one side is a scalar).
  if (a.ty.sh != sh && b.ty.sh != sh) return value(sh, e, 0);
  if (op == "/" || op == "%") {
    if (b.lit && !isf(b.ty.e) && b.kv == 0) b = lit_int(between(1, 7));
    if (b.konst && a.konst && b.kv == -1) b = lit_int(2);
  }
  Ex r;
  r.t = "(" + a.t + " " + op + " " + b.t + ")";
  r.ty = Ty::tile(e, sh);
  if (a.konst && b.konst) {
    std::int64_t v = 0;
    bool ok = true;
    if (op == "+") ok = !__builtin_add_overflow(a.kv, b.kv, &v);
    else if (op == "-") ok = !__builtin_sub_overflow(a.kv, b.kv, &v);
    else if (op == "*") ok = !__builtin_mul_overflow(a.kv, b.kv, &v);
    else if (op == "/") v = a.kv / b.kv;
    else if (op == "%") v = a.kv % b.kv;
    else if (op == "&") v = a.kv & b.kv;
    else if (op == "|") v = a.kv | b.kv;
    else v = a.kv ^ b.kv;
    if (!ok) return a;
    r.lit = r.konst = true;
    r.kv = v;
  }
  return r;
}

Ex Gen::unary(Shape sh, E e, int d) {
  std::vector<std::string> fns = {"-", "abs"};
  if (isf(e)) {
    for (const char* f : {"sqrt", "exp", "log"}) fns.push_back(f);
  }
  const std::string f = pick(fns);
  Ex a = value(sh, e, d);
  Ex r;
  r.ty = a.ty;
  if (f == "-") {
    r.t = "-(" + a.t + ")";
    if (a.lit) {
      r.lit = true;
      if (a.konst) {
        if (a.kv == INT64_MIN) return a;
        r.konst = true;
        r.kv = -a.kv;
      }
    }
    return r;
  }
  r.t = f + "(" + a.t + ")";
  return r;
}

Ex Gen::minmax(Shape sh, E e, int d) {
  // Sema converts the second argument to the first's type if it is a constant, else
  // the first to the second's: keep both exactly e (or the second a literal).
  Ex a = value(sh, e, d);
  Ex b = p_(0.3) ? (isi(e) ? lit_int(between(0, 9)) : lit_float()) : value(p_(0.5) ? sh : Shape{}, e, d);
  if (!coerce_ok(b, e)) b = value({}, e, d);
  if (p_(0.3) && !b.lit) std::swap(a, b);
  Ex r;
  r.t = std::string(p_(0.5) ? "min(" : "max(") + a.t + ", " + b.t + ")";
  r.ty = Ty::tile(e, sh);
  return r;
}

Ex Gen::boolean(Shape sh, int d) {
  Choices c;
  if (sh.scalar()) {
    c.push_back({3, [&] { return lit_bool(); }});
    for (const ScalarParam& s : scalars_) {
      if (s.e == E::b) c.push_back({4, [s] { return Ex{s.name, Ty::scalar(E::b)}; }});
    }
  }
  auto vs = visible([&](const Var& v) { return v.ty == Ty::tile(E::b, sh); });
  if (!vs.empty()) c.push_back({6, [&, vs] { const Var& v = pick(vs); return Ex{v.name, v.ty}; }});
  if (has_words() && !sh.rows && (sh.scalar() || has_range(sh.size))) c.push_back({1, [&] { return load_flagged(sh, E::b); }});
  auto bt = tensors_where([&](const Tensor& t) { return t.e == E::b && can_view(t, sh); });
  if (!bt.empty()) {
    c.push_back({5, [&, bt] {
                   const Tensor& t = tensors_[static_cast<std::size_t>(pick(bt))];
                   return sh.scalar() ? elem_load(t) : *tile_load(t, sh);
                 }});
  }
  const int dd = std::max(d - 1, 0);
  c.push_back({14, [&, dd] {
                 const E n = rand_num_elem();
                 Ex a = value(sh, n, dd), b = operand(sh, n, dd);
                 if (p_(0.25)) std::swap(a, b);
                 if (!unify(a, b)) std::swap(a, b);
                 if (!unify(a, b)) b = a;
                 if (a.ty.sh != sh && b.ty.sh != sh) a = value(sh, n, 0);
                 static const char* cmps[] = {"<", "<=", ">", ">=", "==", "!="};
                 Ex r;
                 r.t = "(" + a.t + " " + cmps[u(6)] + " " + b.t + ")";
                 r.ty = Ty::tile(E::b, sh);
                 return r;
               }});
  if (d > 0) {
    c.push_back({5, [&, dd] {
                   Ex a = boolean(sh, dd), b = boolean(p_(0.5) ? sh : Shape{}, dd);
                   if (p_(0.5)) std::swap(a, b);
                   return Ex{"(" + a.t + (p_(0.5) ? " && " : " || ") + b.t + ")", Ty::tile(E::b, sh)};
                 }});
    c.push_back({3, [&, dd] {
                   Ex a = boolean(sh, dd);
                   Ex r{"!(" + a.t + ")", a.ty};
                   r.lit = a.lit;
                   return r;
                 }});
  }
  return choose(c);
}

}  // namespace irisc_fuzz::detail
