// Random well-typed .iris programs (see gen_program.hpp). The generator keeps a model
// of what sema will infer for every expression it builds (element type, tile shape,
// whether sema sees a literal constant and, for integers, its folded value), and only
// combines operands the way sema's rules allow (compiler/sema/check_*.cpp):
//   * a literal adapts to the other operand's type (but a float literal never becomes
//     an integer); the index type `int` adapts to any integer type;
//   * in `a op b`, b is converted to a's type first when it can be, else a to b's;
//   * integer literal arithmetic is folded at compile time (overflow and division by
//     zero are errors there), float literal arithmetic is not;
//   * tiles combine with scalars and with tiles of the same shape only.
#include "tests/fuzz/gen_program.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <utility>

namespace irisc_fuzz {
namespace {

// ---- types -------------------------------------------------------------------------------
enum class E : std::uint8_t { f32, f16, bf16, i32, i64, u32, u64, b, int_ };

const char* en(E e) {
  switch (e) {
    case E::f32: return "f32";
    case E::f16: return "f16";
    case E::bf16: return "bf16";
    case E::i32: return "i32";
    case E::i64: return "i64";
    case E::u32: return "u32";
    case E::u64: return "u64";
    case E::b: return "bool";
    case E::int_: return "int";
  }
  return "int";
}
bool isf(E e) { return e == E::f32 || e == E::f16 || e == E::bf16; }
bool isi(E e) { return e == E::i32 || e == E::i64 || e == E::u32 || e == E::u64 || e == E::int_; }
// Element types of atomics (sema: atomic_supports); f32 only for add, sub, xchg, cas.
bool atomic_ok(E e) { return e == E::i32 || e == E::i64 || e == E::u32 || e == E::u64 || e == E::f32; }

enum class K : std::uint8_t { Scalar, Tile, Range };

// Shape of a value: size 0 = scalar; rows 0 = 1-D.
struct Shape {
  std::int64_t size = 0, rows = 0;
  bool scalar() const { return size == 0; }
  bool operator==(const Shape&) const = default;
};

struct Ty {
  K k = K::Scalar;
  E e = E::int_;
  Shape sh;
  static Ty scalar(E e) { return {K::Scalar, e, {}}; }
  static Ty tile(E e, Shape s) { return {s.scalar() ? K::Scalar : K::Tile, e, s}; }
  static Ty range(std::int64_t n) { return {K::Range, E::int_, {n, 0}}; }
  bool operator==(const Ty&) const = default;
};

// An expression and what sema will make of it.
struct Ex {
  std::string t;
  Ty ty;
  bool lit = false;    // sema sees a constant (ValueKind::Const): literals, folded ints, consts
  bool konst = false;  // an integer constant of the index type with value kv
  std::int64_t kv = 0;
};

struct Tensor {
  std::string name;
  E e;
  bool sym;
  int dims;
  std::vector<std::string> dim_text;  // what sema prints for each extent (for matmul's K)
};
struct ScalarParam {
  std::string name;
  E e;  // `int` parameters are i64 in TIR
};
struct Var {
  std::string name;
  Ty ty;
  bool mut;
  bool hidden;  // a hoisted let: used only where it was made for
};
struct Gemm {
  int a, b;  // A[X, K], B[K, Y] (tensor indices)
};

// One extent of a tensor parameter while the parameter list is planned.
struct Dim {
  std::string text;
  std::string bare;               // the size symbol it binds, if it is one alone
  std::vector<std::string> syms;  // size symbols it mentions
  std::string sema_text;          // dim_text as sema prints it (for matmul's K check)
};

using Choices = std::vector<std::pair<int, std::function<Ex()>>>;

class Gen {
 public:
  Gen(std::uint64_t seed, const GenOptions& o) : rng_(seed), o_(o) {}

  GenProgram run(std::uint64_t seed) {
    GenProgram p;
    p.seed = seed;
    const int nk = p_(0.12) ? 2 : 1;
    for (int k = 0; k < nk; ++k) p.kernels.push_back(kernel("k" + std::to_string(k), p.defines));
    return p;
  }

 private:
  // ---- randomness (own helpers: identical on every standard library) -------------------
  std::mt19937_64 rng_;
  const GenOptions& o_;
  std::uint64_t u(std::uint64_t n) { return n ? rng_() % n : 0; }
  std::int64_t between(std::int64_t lo, std::int64_t hi) { return lo + static_cast<std::int64_t>(u(static_cast<std::uint64_t>(hi - lo + 1))); }
  bool p_(double prob) { return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0) < prob; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[u(v.size())]; }
  std::size_t pickw(const std::vector<int>& w) {
    int total = 0;
    for (int x : w) total += x;
    int r = static_cast<int>(u(static_cast<std::uint64_t>(std::max(total, 1))));
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (r < w[i]) return i;
      r -= w[i];
    }
    return 0;
  }
  Ex choose(Choices& c) {
    std::vector<int> w;
    for (auto& x : c) w.push_back(x.first);
    return c[pickw(w)].second();
  }

  // ---- per-kernel state ------------------------------------------------------------------
  std::vector<std::pair<std::string, std::int64_t>> consts_;
  std::vector<std::string> sizes_;
  std::vector<Tensor> tensors_;
  std::vector<ScalarParam> scalars_;
  std::vector<std::vector<Var>> scopes_;
  std::vector<Gemm> gemms_;
  std::vector<GenNode>* pre_ = nullptr;  // where hoisted lets go (before the current statement)
  int names_ = 0;
  int stmts_ = 0;
  bool roles_ = false;
  std::set<std::string> all_consts_;  // compile-time parameter names of every kernel so far

  std::string fresh(const char* prefix) { return prefix + std::to_string(names_++); }
  // A user name: usually fresh, sometimes one that looks like a built-in function, a
  // named-argument value, a C++ keyword or a name the CUDA emitter generates.
  std::set<std::string> used_names_;
  std::string user_name(const char* prefix) {
    static const char* tricky[] = {
        "start", "extent", "index", "load", "store", "sum", "min", "max", "fill", "zeros", "ones", "tiles",
        "blocks", "range", "acc", "order", "scope", "to", "from", "other", "op", "set", "add", "relaxed",
        "acquire", "system", "device", "block", "float", "half", "__half", "threadIdx", "blockIdx", "ctx", "s",
        "L64", "iris_bcast", "iris_program", "iris_first", "bound0", "main", "auto", "class", "template", "new",
        "this", "signed", "kPerThread", "matmul", "get", "put", "signal", "wait", "abs", "exp", "log", "sqrt",
        "atomic_add", "f", "e", "v0_x", "p_x", "s_N", "i", "j", "_", "__syncthreads", "nullptr", "NULL"};
    if (p_(0.07)) {
      const std::string n = tricky[u(std::size(tricky))];
      if (used_names_.insert(n).second) return n;
    }
    std::string n = fresh(prefix);
    used_names_.insert(n);
    return n;
  }

  E rand_scalar_elem() {
    static const E es[] = {E::f32, E::f16, E::bf16, E::i32, E::i64, E::u32, E::u64, E::int_, E::b};
    return es[pickw({25, 9, 9, 12, 8, 10, 8, 14, 5})];
  }
  E rand_num_elem() {
    static const E es[] = {E::f32, E::f16, E::bf16, E::i32, E::i64, E::u32, E::u64, E::int_};
    return es[pickw({25, 9, 9, 12, 8, 10, 8, 14})];
  }
  E rand_tensor_elem() {
    static const E es[] = {E::f32, E::f16, E::bf16, E::i32, E::i64, E::u32, E::u64, E::b, E::int_};
    return es[pickw({30, 12, 12, 14, 8, 14, 10, 3, 3})];
  }
  E rand_int_elem() {
    static const E es[] = {E::i32, E::i64, E::u32, E::u64, E::int_};
    return es[pickw({3, 2, 3, 2, 4})];
  }

  // Copies: hoisting declares new variables while a caller still holds these.
  std::vector<Var> visible(std::function<bool(const Var&)> f) const {
    std::vector<Var> out;
    for (const auto& s : scopes_) {
      for (const Var& v : s) {
        if (!v.hidden && f(v)) out.push_back(v);
      }
    }
    return out;
  }
  void declare(const std::string& name, Ty ty, bool mut, bool hidden = false) {
    scopes_.back().push_back({name, ty, mut, hidden});
  }
  std::vector<std::int64_t> range_sizes() const {
    std::set<std::int64_t> s;
    for (const Var& v : visible([](const Var& v) { return v.ty.k == K::Range; })) s.insert(v.ty.sh.size);
    return {s.begin(), s.end()};
  }
  bool has_range(std::int64_t n) const {
    return !visible([n](const Var& v) { return v.ty.k == K::Range && v.ty.sh.size == n; }).empty();
  }
  std::vector<int> tensors_where(std::function<bool(const Tensor&)> f) const {
    std::vector<int> out;
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
      if (f(tensors_[i])) out.push_back(static_cast<int>(i));
    }
    return out;
  }

  // ---- literals ------------------------------------------------------------------------------
  // An integer literal, sometimes an extreme one (sema folds them; overflow is avoided).
  Ex lit_int_edge() {
    static const std::int64_t vs[] = {0, 1, -1, 31, 32, 255, 65535, 2147483647, -2147483647, 4294967295, 4611686018427387903};
    return lit_int(vs[u(std::size(vs))]);
  }
  static Ex lit_int(std::int64_t v) {
    Ex x;
    x.t = v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
    x.ty = Ty::scalar(E::int_);
    x.lit = x.konst = true;
    x.kv = v;
    return x;
  }
  Ex lit_float() {
    static const char* fs[] = {"0.5", "1.0", "2.0", "1.5", "0.25", "3.0", "1e-3", "100.0", "0.0", "7.5", "2.5e2", ".125"};
    static const char* edge[] = {"1e39", "1e-45", "3.4e38", "65504.0", "65520.0", "1e30", "1e-30", "0.1", "1e-320", "3.3895e38"};
    Ex x;
    x.t = p_(0.06) ? edge[u(std::size(edge))] : fs[u(std::size(fs))];
    x.ty = Ty::scalar(E::f32);
    x.lit = true;
    return x;
  }
  Ex lit_bool() {
    Ex x;
    x.t = p_(0.5) ? "true" : "false";
    x.ty = Ty::scalar(E::b);
    x.lit = true;
    return x;
  }
  // A compile-time-constant spelling of v: a literal, a compile-time parameter, or
  // arithmetic on them (all folded by sema).
  std::string const_text(std::int64_t v) {
    std::vector<std::string> c = {std::to_string(v)};
    for (auto& [n, cv] : consts_) {
      if (cv == v) c.push_back(n), c.push_back(n);
      if (cv > 0 && cv * 2 == v) c.push_back(n + " * 2");
      if (cv > 0 && v > 0 && cv % 2 == 0 && cv / 2 == v) c.push_back(n + " / 2");
      if (cv > 0 && cv * 4 == v) c.push_back("(" + n + " * 4)");
    }
    if (v % 2 == 0 && v >= 32) c.push_back("(" + std::to_string(v / 2) + " + " + std::to_string(v / 2) + ")");
    if (v >= 16) c.push_back(std::to_string(v * 2) + " / 2");
    return p_(0.45) ? c[0] : pick(c);
  }

  // ---- hoisting: a let made right before the statement, used only at one odd place ------
  Ex hoist(const Ex& x) {
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
  static bool coerce_ok(const Ex& v, E to) {
    const E from = v.ty.e;
    if (from == to) return true;
    return (v.lit && from != E::b && to != E::b && !(isf(from) && isi(to))) || (from == E::int_ && isi(to)) ||
           (isi(from) && to == E::int_);
  }
  static std::optional<E> unify(const Ex& a, const Ex& b) {
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
  static Ex exact(const Ex& x, E e) {
    if (x.ty.e == e) return x;
    Ex r;
    r.t = "(" + x.t + ") as " + en(e);
    r.ty = x.ty;
    r.ty.e = e;
    return r;
  }

  // ---- integer leaves --------------------------------------------------------------------------
  // A scalar of the index type `int` that sema does not see as a constant.
  Ex int_leaf() {
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
  static Ex named_int(const std::string& n) {
    Ex x;
    x.t = n;
    x.ty = Ty::scalar(E::int_);
    return x;
  }

  // ---- ranges ------------------------------------------------------------------------------------
  Ex range_of(const Var& v, bool odd) {
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
  std::optional<Ex> range_sized(std::int64_t n, bool odd = true) {
    auto rs = visible([n](const Var& v) { return v.ty.k == K::Range && v.ty.sh.size == n; });
    if (rs.empty()) return std::nullopt;
    return range_of(pick(rs), odd);
  }
  Ex range_any() {
    auto rs = visible([](const Var& v) { return v.ty.k == K::Range; });
    return range_of(pick(rs), true);
  }

  // ---- integer positions: indices, ranks, wait indices, bounds ----------------------------------
  // Any integer scalar (sema converts every integer type to the index type there),
  // sometimes through a let made just for this place.
  Ex ipos(int d, bool odd = true, double hoist_p = 0.15) {
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
  Ex bound(int d) {
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
  std::string elem_view(const Tensor& t) {
    std::string s = t.name + "[" + ipos(1).t;
    if (t.dims == 2) s += ", " + ipos(1).t;
    return s + "]";
  }
  // A tile view of shape sh (1-D: t[r] or t[i, r]; 2-D: t[m, n]); nullopt if impossible here.
  std::optional<std::string> tile_view(const Tensor& t, Shape sh) {
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
  bool can_view(const Tensor& t, Shape sh) const {
    if (sh.scalar()) return true;
    if (sh.rows) return t.dims == 2 && has_range(sh.rows) && has_range(sh.size);
    return has_range(sh.size);
  }
  std::string named_args(std::vector<std::string> args) {
    for (std::size_t i = args.size(); i > 1; --i) std::swap(args[i - 1], args[u(i)]);
    std::string s;
    for (const std::string& a : args) s += ", " + a;
    return s;
  }
  Ex elem_load(const Tensor& t) {
    Ex x;
    x.ty = Ty::scalar(t.e);
    const std::string v = elem_view(t);
    if (t.sym && p_(0.4)) x.t = "load(" + v + ", from: " + ipos(1).t + ")";
    else if (p_(0.5)) x.t = "load(" + v + ")";
    else x.t = v;
    return x;
  }
  std::optional<Ex> tile_load(const Tensor& t, Shape sh) {
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
  bool has_2d_tensor() const {
    for (const Tensor& t : tensors_) {
      if (t.dims == 2) return true;
    }
    return false;
  }
  // Tile sizes. A kernel runs min(256, smallest 1-D tile) threads and unrolls every tile
  // over them, so a 32-element tile next to an 8192-element one makes NVRTC take
  // minutes. Each kernel therefore picks its smallest 1-D tile, tmin_, and keeps every
  // tile within tmax_ elements (32 per thread; 64 with 256 threads). Legal programs
  // outside these bounds are only slow to compile, not different.
  std::int64_t tmin_ = 256, tmax_ = 16384;
  bool ok1d(std::int64_t n) const { return n >= tmin_ && n <= tmax_; }
  bool ok2d(std::int64_t r, std::int64_t c) const {
    return r <= 256 && c <= 256 && r * c <= std::min<std::int64_t>(tmax_, 8192);
  }
  std::vector<Shape> shapes_1d() const {
    std::vector<Shape> v;
    for (std::int64_t s : range_sizes()) {
      if (ok1d(s)) v.push_back({s, 0});
    }
    return v;
  }
  std::vector<Shape> shapes_2d() const {
    std::vector<Shape> v;
    for (std::int64_t r : range_sizes()) {
      for (std::int64_t s : range_sizes()) {
        if (ok2d(r, s)) v.push_back({s, r});
      }
    }
    return v;
  }
  std::int64_t fill_size() {
    static const std::int64_t fs[] = {32, 64, 128, 256, 512, 1024, 2048, 4096};
    static const int w[] = {10, 14, 12, 12, 6, 4, 1, 1};
    std::vector<int> ws;
    for (std::size_t i = 0; i < std::size(fs); ++i) ws.push_back(ok1d(fs[i]) ? w[i] : 0);
    return fs[pickw(ws)];
  }
  Shape pick_tile_shape(bool allow2d) {
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
  Ex operand(Shape sh, E e, int d, bool scalar_only = false) {
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
  Ex value(Shape sh, E e, int d) {
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

  Ex fill(Shape sh, E e, int d) {
    Ex x;
    x.ty = Ty::tile(e, sh);
    const std::string n = const_text(sh.size);
    const int k = static_cast<int>(u(3));
    if (k == 0) x.t = "zeros<" + std::string(en(e)) + ">(" + n + ")";
    else if (k == 1) x.t = "ones<" + std::string(en(e)) + ">(" + n + ")";
    else x.t = "fill<" + std::string(en(e)) + ">(" + operand({}, e, std::max(d - 1, 0), true).t + ", " + n + ")";
    return x;
  }

  // Each matmul instantiates a large template (unrolled 4 times more in a loop over
  // ranks): at most two per kernel, rarely in a rank loop, keep NVRTC fast.
  int matmuls_ = 0;
  bool can_matmul() { return !gemms_.empty() && matmuls_ < 2 && (world_depth_ == 0 || p_(0.1)); }
  Ex matmul(Shape sh, E acc) {
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

  Ex atomic_value(const Tensor& t, Shape sh, int d) {
    Ex x;
    x.ty = Ty::tile(t.e, sh);
    x.t = atomic_call(t, sh, d);
    return x;
  }
  // atomic_<op>(view, v[, desired], to:, order:, scope:) on an element (sh scalar) or a
  // 1-D tile view of t.
  std::string atomic_call(const Tensor& t, Shape sh, int d) {
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

  Ex binary(Shape sh, E e, int d) {
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

  Ex unary(Shape sh, E e, int d) {
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

  Ex minmax(Shape sh, E e, int d) {
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

  Ex boolean(Shape sh, int d) {
    Choices c;
    if (sh.scalar()) {
      c.push_back({3, [&] { return lit_bool(); }});
      for (const ScalarParam& s : scalars_) {
        if (s.e == E::b) c.push_back({4, [s] { return Ex{s.name, Ty::scalar(E::b)}; }});
      }
    }
    auto vs = visible([&](const Var& v) { return v.ty == Ty::tile(E::b, sh); });
    if (!vs.empty()) c.push_back({6, [&, vs] { const Var& v = pick(vs); return Ex{v.name, v.ty}; }});
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

  // ---- statements -------------------------------------------------------------------------
  GenNode leaf(std::string s) {
    GenNode n;
    n.head = std::move(s);
    return n;
  }
  int edepth() { return static_cast<int>(u(static_cast<std::uint64_t>(o_.max_expr_depth + 1))); }

  std::vector<GenNode> block(int depth, int n) {
    std::vector<GenNode> out;
    scopes_.emplace_back();
    for (int i = 0; i < n && stmts_ < o_.max_stmts; ++i) stmt(out, depth);
    scopes_.pop_back();
    return out;
  }
  // A block body that is never empty (an empty loop body is legal but tests little).
  std::vector<GenNode> body(int depth) {
    auto b = block(depth, static_cast<int>(between(1, 3)));
    return b;
  }

  void stmt(std::vector<GenNode>& out, int depth) {
    std::vector<GenNode>* saved = pre_;
    pre_ = &out;
    ++stmts_;
    const bool can_nest = depth < o_.max_block_depth && stmts_ < o_.max_stmts - 1;
    const bool has_sym = !tensors_where([](const Tensor& t) { return t.sym; }).empty();
    const bool has_int = !tensors_where([](const Tensor& t) { return isi(t.e); }).empty();
    const bool has_atomic = !tensors_where([](const Tensor& t) { return atomic_ok(t.e); }).empty();
    const bool has_mut = !visible([](const Var& v) { return v.mut && v.ty.k != K::Range; }).empty();
    std::vector<int> w = {
        14,                            // 0 let
        has_mut ? 8 : 0,               // 1 assign
        18,                            // 2 store
        has_sym ? 3 : 0,               // 3 get
        has_atomic ? 6 : 0,            // 4 atomic
        has_int ? 4 : 0,               // 5 signal
        has_int ? 3 : 0,               // 6 wait
        can_nest ? 10 : 0,             // 7 blocks
        can_nest ? (gemms_.empty() ? 3 : 9) : 0,  // 8 tiles
        can_nest && world_depth_ < world_cap_ ? 4 : 0,  // 9 ranks / peers
        can_nest ? 4 : 0,              // 10 range
        can_nest ? 6 : 0,              // 11 if
        2,                             // 12 a value call as a statement
        1,                             // 13 reassigned range let
    };
    switch (pickw(w)) {
      case 0: stmt_let(out); break;
      case 1: stmt_assign(out); break;
      case 2: stmt_store(out); break;
      case 3: stmt_get(out); break;
      case 4: out.push_back(leaf(atomic_stmt() + ";")); break;
      case 5: stmt_signal(out); break;
      case 6: stmt_wait(out); break;
      case 7: stmt_blocks(out, depth); break;
      case 8: stmt_tiles(out, depth); break;
      case 9: stmt_ranks(out, depth); break;
      case 10: stmt_range(out, depth); break;
      case 11: stmt_if(out, depth); break;
      case 12: stmt_eval(out); break;
      case 13: stmt_range_let(out); break;
    }
    pre_ = saved;
  }

  void stmt_let(std::vector<GenNode>& out) {
    const std::string n = user_name("v");
    Ex x;
    const int k = static_cast<int>(u(10));
    if (k < 5) x = value({}, rand_scalar_elem(), edepth());
    else if (k < 9) x = value(pick_tile_shape(true), rand_scalar_elem(), edepth());
    else if (!range_sizes().empty()) x = range_any();
    else x = value({}, rand_scalar_elem(), edepth());
    out.push_back(leaf("let " + n + " = " + x.t + ";"));
    declare(n, x.ty, true);
  }

  void stmt_range_let(std::vector<GenNode>& out) {
    // `let j = n; j = n2;` (a range let reassigned) and `let j = n;` used in a view.
    if (range_sizes().empty()) return stmt_let(out);
    const std::string n = user_name("v");
    Ex r = range_any();
    out.push_back(leaf("let " + n + " = " + r.t + ";"));
    declare(n, r.ty, true);
    if (p_(0.5)) {
      auto other = range_sized(r.ty.sh.size, false);
      out.push_back(leaf(n + " = " + other->t + ";"));
    }
    if (ok1d(r.ty.sh.size) && p_(0.7)) {
      auto ts = tensors_where([](const Tensor&) { return true; });
      const Tensor& t = tensors_[static_cast<std::size_t>(pick(ts))];
      std::string view = t.dims == 1 ? t.name + "[" + n + "]" : t.name + "[" + ipos(0).t + ", " + n + "]";
      out.push_back(leaf("store(" + view + ", " + value(r.ty.sh, t.e, 1).t + ");"));
    }
  }

  void stmt_assign(std::vector<GenNode>& out) {
    auto vs = visible([](const Var& v) { return v.mut && v.ty.k != K::Range; });
    const Var v = pick(vs);
    const E e = v.ty.e;
    if (e == E::b) {
      out.push_back(leaf(v.name + " = " + boolean(p_(0.7) ? v.ty.sh : Shape{}, edepth()).t + ";"));
      return;
    }
    static const char* ops[] = {"=", "+=", "-=", "*=", "/="};
    const std::string op = ops[pickw({4, 3, 2, 2, 1})];
    Ex x = p_(0.6) ? value(v.ty.sh, e, edepth()) : operand(v.ty.sh, e, edepth(), true);
    if (op == "/=" && x.lit && !isf(x.ty.e) && x.kv == 0) x = lit_int(3);
    if (!coerce_ok(x, e)) x = exact(x, e);
    out.push_back(leaf(v.name + " " + op + " " + x.t + ";"));
  }

  // A view of some tensor with a shape that works here, and the shape.
  std::pair<std::string, Shape> any_view(const Tensor& t) {
    std::vector<Shape> shapes = {{}};
    for (const Shape& s : shapes_1d()) shapes.push_back(s), shapes.push_back(s);
    if (t.dims == 2) {
      for (const Shape& s : shapes_2d()) shapes.push_back(s), shapes.push_back(s);
    }
    const Shape sh = pick(shapes);
    if (sh.scalar()) return {elem_view(t), sh};
    return {*tile_view(t, sh), sh};
  }

  void stmt_store(std::vector<GenNode>& out) {
    const Tensor& t = pick(tensors_);
    auto [view, sh] = any_view(t);
    Ex x = p_(0.75) ? value(sh, t.e, edepth()) : operand(sh, t.e, edepth(), true);
    if (!coerce_ok(x, t.e) || (!x.lit && x.ty.e != t.e && !(x.ty.e == E::int_ && isi(t.e)))) x = exact(x, t.e);
    std::string s = std::string(p_(0.85) ? "store(" : "put(") + view + ", " + x.t;
    if (t.sym && p_(0.55)) s += ", to: " + ipos(1).t;
    out.push_back(leaf(s + ");"));
  }

  void stmt_get(std::vector<GenNode>& out) {
    const Tensor& src = tensors_[static_cast<std::size_t>(pick(tensors_where([](const Tensor& t) { return t.sym; })))];
    auto dsts = tensors_where([&](const Tensor& t) { return t.e == src.e; });
    const Tensor& dst = tensors_[static_cast<std::size_t>(pick(dsts))];
    // Both views of one shape: an element, a 1-D tile or (both 2-D) a 2-D tile.
    std::vector<Shape> shapes = {{}};
    for (const Shape& s : shapes_1d()) shapes.push_back(s), shapes.push_back(s);
    if (src.dims == 2 && dst.dims == 2) {
      for (const Shape& s : shapes_2d()) shapes.push_back(s);
    }
    const Shape sh = pick(shapes);
    const std::string dv = sh.scalar() ? elem_view(dst) : *tile_view(dst, sh);
    const std::string sv = sh.scalar() ? elem_view(src) : *tile_view(src, sh);
    std::string s = "get(" + dv + ", " + sv;
    if (p_(0.85)) s += ", from: " + ipos(1).t;
    out.push_back(leaf(s + ");"));
  }

  std::string atomic_stmt() {
    auto at = tensors_where([](const Tensor& t) { return atomic_ok(t.e); });
    const Tensor& t = tensors_[static_cast<std::size_t>(pick(at))];
    Shape sh;
    auto rs = shapes_1d();
    if (!rs.empty() && p_(0.6)) sh = pick(rs);
    return atomic_call(t, sh, edepth());
  }

  const Tensor& int_tensor() {
    return tensors_[static_cast<std::size_t>(pick(tensors_where([](const Tensor& t) { return isi(t.e); })))];
  }
  Ex flag_value(const Tensor& f) {
    const int k = static_cast<int>(u(4));
    if (k == 0) return lit_int(between(0, 3));
    if (k == 1) return exact(ipos(1, false), f.e);
    if (k == 2) return int_leaf();
    return value({}, f.e, 1);
  }

  void stmt_signal(std::vector<GenNode>& out) {
    const Tensor& f = int_tensor();
    std::string s = "signal(" + elem_view(f) + ", " + flag_value(f).t;
    std::vector<std::string> named;
    if (f.sym && p_(0.7)) named.push_back("to: " + ipos(1).t);
    if (p_(0.5)) named.push_back(std::string("op: ") + (p_(0.5) ? "add" : "set"));
    if (p_(0.4)) named.push_back(std::string("order: ") + (p_(0.5) ? "relaxed" : "release"));
    if (p_(0.4)) named.push_back(std::string("scope: ") + pick(std::vector<std::string>{"block", "device", "system"}));
    out.push_back(leaf(s + named_args(named) + ");"));
  }

  void stmt_wait(std::vector<GenNode>& out) {
    const Tensor& f = int_tensor();
    static const char* cmps[] = {"==", "!=", ">", ">=", "<", "<="};
    std::string s = "wait(" + elem_view(f) + " " + cmps[u(6)] + " " + flag_value(f).t;
    std::vector<std::string> named;
    if (p_(0.4)) named.push_back(std::string("order: ") + (p_(0.5) ? "relaxed" : "acquire"));
    if (p_(0.4)) named.push_back(std::string("scope: ") + pick(std::vector<std::string>{"block", "device", "system"}));
    out.push_back(leaf(s + named_args(named) + ");"));
  }

  GenNode loop_node(std::string head, int depth, std::vector<Var> vars) {
    GenNode n;
    n.head = std::move(head);
    n.is_block = true;
    scopes_.emplace_back();
    for (const Var& v : vars) scopes_.back().push_back(v);
    n.body = body(depth + 1);
    scopes_.pop_back();
    return n;
  }

  void stmt_blocks(std::vector<GenNode>& out, int depth) {
    static const std::int64_t bs[] = {32, 64, 128, 256, 512, 1024, 2048, 4096, 16384};
    static const int bw[] = {60, 80, 80, 80, 50, 40, 8, 8, 3};
    std::vector<int> ws;
    for (std::size_t i = 0; i < std::size(bs); ++i) ws.push_back(ok1d(bs[i]) ? bw[i] : 0);
    const std::int64_t b = bs[pickw(ws)];
    const std::string i = user_name("i");
    const Ex hi = bound(1);
    std::string head = "for " + i + " in blocks(" + hi.t + ", " + const_text(b) + ")";
    if (p_(0.15)) head += " persistent";
    out.push_back(loop_node(head, depth, {{i, Ty::range(b), false, false}}));
  }

  void stmt_tiles(std::vector<GenNode>& out, int depth) {
    static const std::int64_t ss[] = {16, 32, 64, 128, 256};
    std::int64_t s0 = ss[pickw({2, 6, 6, 3, 1})], s1 = ss[pickw({2, 6, 6, 3, 1})];
    while (!ok2d(s0, s1)) (p_(0.5) ? s0 : s1) /= 2;
    if (s0 < 16) s0 = 16;
    if (s1 < 16) s1 = 16;
    const std::string m = user_name("m"), n = user_name("n");
    const bool with_t = p_(0.25);
    const std::string t = with_t ? user_name("t") : "";
    const Ex b0 = bound(1), b1 = bound(1);  // a let used only as a tiles bound: `let cols = N;`
    std::string head = "for " + (with_t ? t + ", " : std::string()) + "(" + m + ", " + n + ") in tiles([" + b0.t +
                       ", " + b1.t + "], [" + const_text(s0) + ", " + const_text(s1) + "])";
    if (p_(0.15)) head += " persistent";
    std::vector<Var> vars = {{m, Ty::range(s0), false, false}, {n, Ty::range(s1), false, false}};
    if (with_t) vars.push_back({t, Ty::scalar(E::int_), false, false});
    GenNode node;
    node.head = head;
    node.is_block = true;
    scopes_.emplace_back();
    for (const Var& v : vars) scopes_.back().push_back(v);
    // The GEMM shape: a product of this tile, stored somewhere 2-D.
    if (can_matmul() && p_(0.7)) {
      std::vector<GenNode>* saved = pre_;
      pre_ = &node.body;
      ++stmts_;
      const Shape sh{s1, s0};
      const E acc = pick(std::vector<E>{E::f32, E::f32, E::f32, E::f16, E::bf16});
      Ex c = matmul(sh, acc);
      // Into a 2-D tensor (the A and B operands at least are): a bool one takes `c > 0`.
      auto outs = tensors_where([](const Tensor& x) { return x.dims == 2; });
      const Tensor& dst = tensors_[static_cast<std::size_t>(pick(outs))];
      if (dst.e == E::b) c = Ex{"(" + c.t + " > 0.0)", Ty::tile(E::b, sh)};
      if (p_(0.5)) {
        const std::string cn = user_name("c");
        node.body.push_back(leaf("let " + cn + " = " + exact(c, dst.e).t + ";"));
        scopes_.back().push_back({cn, Ty::tile(dst.e, sh), true, false});
        c = Ex{cn, Ty::tile(dst.e, sh)};
      } else {
        c = exact(c, dst.e);
      }
      std::string s = "store(" + *tile_view(dst, sh) + ", " + c.t;
      if (dst.sym && p_(0.5)) s += ", to: " + ipos(1).t;
      node.body.push_back(leaf(s + ");"));
      pre_ = saved;
    }
    auto more = block(depth + 1, static_cast<int>(between(node.body.empty() ? 1 : 0, 2)));
    for (auto& x : more) node.body.push_back(std::move(x));
    scopes_.pop_back();
    out.push_back(std::move(node));
  }

  // Loops over ranks (and range loops whose bounds mention world) are unrolled 4 times
  // by the emitted #pragma; three nested ones are 64 copies of the body and NVRTC takes
  // seconds, so a kernel nests at most world_cap_ of them.
  int world_depth_ = 0, world_cap_ = 1;

  void stmt_ranks(std::vector<GenNode>& out, int depth) {
    const std::string r = user_name("r");
    ++world_depth_;
    out.push_back(loop_node("for " + r + " in " + (p_(0.5) ? "ranks" : "peers"), depth, {{r, Ty::scalar(E::int_), false, false}}));
    --world_depth_;
  }

  void stmt_range(std::vector<GenNode>& out, int depth) {
    const std::string k = user_name("k");
    std::string head;
    if (world_depth_ >= world_cap_) {
      // No world in the bounds' expressions (a let holding it is fine: not unrolled).
      auto b = [&] {
        const int f = static_cast<int>(u(3));
        if (f == 0) return lit_int(between(0, 40)).t;
        if (f == 1 && !sizes_.empty()) return pick(sizes_);
        return hoist(ipos(1, false)).t;
      };
      head = p_(0.5) ? "range(" + b() + ")" : "range(" + b() + ", " + b() + ")";
    } else {
      const int form = static_cast<int>(u(4));
      if (form == 0) head = "range(" + lit_int(between(0, 2)).t + ", " + ipos(1, true, 0.35).t + ")";
      else if (form == 1) head = "range(" + ipos(1, true, 0.35).t + ")";
      else if (form == 2) head = "range(1, world + 1)";
      else head = "range(" + ipos(0).t + ", " + bound(0).t + ")";
    }
    const bool w = head.find("world") != std::string::npos;
    world_depth_ += w;
    out.push_back(loop_node("for " + k + " in " + head, depth, {{k, Ty::scalar(E::int_), false, false}}));
    world_depth_ -= w;
  }

  GenNode if_node(int depth) {
    GenNode n;
    n.head = "if " + boolean({}, edepth()).t;
    n.is_block = true;
    n.body = body(depth + 1);
    if (p_(0.4)) {
      n.has_else = true;
      if (p_(0.3) && depth + 1 < o_.max_block_depth) {
        n.else_is_if = true;
        // Lets hoisted out of the else-if condition go before the whole if.
        scopes_.emplace_back();
        n.else_body.push_back(if_node(depth + 1));
        scopes_.pop_back();
      } else {
        n.else_body = body(depth + 1);
      }
    }
    return n;
  }
  void stmt_if(std::vector<GenNode>& out, int depth) { out.push_back(if_node(depth)); }

  void stmt_eval(std::vector<GenNode>& out) {
    const int k = static_cast<int>(u(3));
    if (k == 0 && !shapes_1d().empty()) {
      auto ts = tensors_where([&](const Tensor&) { return true; });
      const Tensor& t = tensors_[static_cast<std::size_t>(pick(ts))];
      auto [view, sh] = any_view(t);
      out.push_back(leaf("load(" + view + ");"));
      return;
    }
    const E e = rand_num_elem();
    if (k == 1) {
      out.push_back(leaf(std::string(pick(std::vector<std::string>{"sum", "max", "min"})) + "(" +
                         value(pick_tile_shape(true), e, 1).t + ");"));
      return;
    }
    out.push_back(leaf("abs(" + value({}, e == E::b ? E::f32 : e, 1).t + ");"));
  }

  // ---- kernels -------------------------------------------------------------------------------
  std::string role_programs() {
    std::vector<std::string> c = {"1", "2", "3", "sms", "sms - 1", "sms - 2", "sms - 50", "sms / 2", "sms / 56",
                                  "world", "world * 2", "world + 1", "min(sms, 8)", "max(1, world - 1)",
                                  "max(world - 1, 1)", "min(4, world)", "sms - world", "(sms - world) / 2",
                                  "min(sms - 1, 64)", "2 * 3"};
    for (auto& [n, v] : consts_) {
      if (v >= 1 && v <= 100000) {
        c.push_back(n);
        c.push_back("min(" + n + ", sms)");
        c.push_back("max(" + n + " / 1000, 1)");
      }
    }
    return pick(c);
  }

  Dim plain_dim(const std::vector<std::string>& syms) {
    Dim d;
    const int k = static_cast<int>(pickw({45, 10, 8, 8, 16, 5}));
    const std::string s = pick(syms);
    switch (k) {
      case 0: d.text = d.bare = d.sema_text = s; d.syms = {s}; break;
      case 1: {
        const std::int64_t v = pick(std::vector<std::int64_t>{1, 2, 4, 16, 64, 1000, 4096});
        d.text = d.sema_text = std::to_string(v);
        break;
      }
      case 2:
        if (!consts_.empty()) {
          auto& [n, v] = pick(consts_);
          d.text = n;
          d.sema_text = std::to_string(v);
          break;
        }
        [[fallthrough]];
      case 3: d.text = d.sema_text = "world"; break;
      case 4: {
        static const char* fs[] = {"{} * world", "world * {}", "{} * 2", "{} + 8", "{} / 2", "{} - 1", "2 * {} + 1"};
        std::string f = fs[u(std::size(fs))];
        f.replace(f.find("{}"), 2, s);
        d.text = f;
        d.sema_text = "?" + f;  // never matched against another extent
        d.syms = {s};
        break;
      }
      default: d.text = d.sema_text = "world * 2"; break;
    }
    return d;
  }

  GenKernel kernel(const std::string& name, std::map<std::string, std::int64_t>& defines) {
    consts_.clear();
    sizes_.clear();
    tensors_.clear();
    scalars_.clear();
    scopes_.clear();
    gemms_.clear();
    names_ = 0;
    stmts_ = 0;
    used_names_.clear();
    tmin_ = pick(std::vector<std::int64_t>{16, 32, 32, 64, 64, 128, 128, 256, 256, 256});
    tmax_ = tmin_ == 256 ? 16384 : 32 * tmin_;
    world_depth_ = 0;
    world_cap_ = p_(0.85) ? 1 : 2;
    matmuls_ = 0;
    GenKernel k;
    k.name = name;

    // Compile-time parameters.
    std::vector<std::string> cnames = {"B", "BM", "BN", "BK", "C", "D", "U", "W"};
    for (std::size_t i = cnames.size(); i > 1; --i) std::swap(cnames[i - 1], cnames[u(i)]);
    const int nconst = static_cast<int>(pickw({3, 4, 3, 2}));
    for (int i = 0; i < nconst; ++i) {
      const std::string n = cnames[static_cast<std::size_t>(i)];
      static const char* types[] = {"int", "int", "int", "i32", "i64", "u32", "u64"};
      const std::string ty = types[u(std::size(types))];
      std::int64_t v = p_(0.7) ? pick(std::vector<std::int64_t>{32, 64, 64, 128, 256, 512, 1024}) : between(1, 8);
      std::string text = n + ": " + ty;
      int how = static_cast<int>(pickw({70, 12, 10}));
      // A -D applies to every kernel declaring the name: no new -D for a name an
      // earlier kernel declared (it would change that kernel's value too).
      if (!all_consts_.insert(n).second) how = 0;
      if (auto d = defines.find(n); d != defines.end()) {
        v = d->second;  // another kernel's -D applies here too
        text += " = " + std::to_string(between(1, 64));
      } else if (how == 0) {
        text += " = " + const_text(v);
      } else if (how == 1) {
        defines[n] = v;  // no default: given with -D
      } else {
        text += " = " + std::to_string(between(1, 4096));  // overridden with -D
        defines[n] = v;
      }
      k.consts.push_back(text);
      consts_.push_back({n, v});
    }

    // Tensors (and their size symbols), scalars.
    std::vector<std::string> syms = {"N", "M", "K", "L", "P"};
    syms.resize(static_cast<std::size_t>(between(1, 4)));
    std::vector<std::pair<Tensor, std::vector<Dim>>> plan;
    auto add_tensor = [&](E e, bool sym, std::vector<Dim> dims) {
      Tensor t{user_name("x"), e, sym, static_cast<int>(dims.size()), {}};
      plan.push_back({t, std::move(dims)});
      return static_cast<int>(plan.size() - 1);
    };
    const int nt = static_cast<int>(between(2, 5));
    for (int i = 0; i < nt; ++i) {
      std::vector<Dim> dims;
      const int rank = p_(0.4) ? 2 : 1;
      for (int d = 0; d < rank; ++d) dims.push_back(plain_dim(syms));
      add_tensor(rand_tensor_elem(), p_(0.5), std::move(dims));
    }
    if (p_(0.5)) {
      Dim d;
      d.text = d.sema_text = pick(std::vector<std::string>{"1", "world", "4"});
      add_tensor(pick(std::vector<E>{E::u64, E::u32, E::i32, E::i64}), p_(0.8), {d});
    }
    if (p_(0.4)) {
      // A GEMM: A[X, K] x B[K, Y] with K spelled so that sema sees the same extent.
      const E f = pick(std::vector<E>{E::bf16, E::bf16, E::f16, E::f16, E::f32});
      Dim kd;
      const int kk = static_cast<int>(u(4));
      Dim kd2;
      if (kk == 0 || (kk >= 2 && consts_.empty())) {
        kd.text = kd.bare = kd.sema_text = "K";
        kd.syms = {"K"};
        kd2 = kd;
      } else if (kk == 1) {
        kd.text = kd.sema_text = std::to_string(pick(std::vector<std::int64_t>{16, 32, 64, 100}));
        kd2 = kd;
      } else {
        auto& [n, v] = pick(consts_);
        kd.text = n;
        kd.sema_text = std::to_string(v);
        kd2 = kd;
        if (p_(0.5)) kd2.text = std::to_string(v);
      }
      Dim x = plain_dim(syms), y = plain_dim(syms);
      if (p_(0.5)) x.text = x.bare = x.sema_text = "M", x.syms = {"M"};
      const int a = add_tensor(f, false, {x, kd});
      const int b = add_tensor(f, p_(0.2), {kd2, y});
      gemms_.push_back({a, b});
      if (p_(0.6)) {
        Dim cx = plain_dim(syms), cy = plain_dim(syms);
        add_tensor(pick(std::vector<E>{f, f, E::f32}), p_(0.6), {cx, cy});
      }
    }
    // Every size symbol must appear alone in some extent.
    std::set<std::string> bare, used;
    for (auto& [t, dims] : plan) {
      for (const Dim& d : dims) {
        if (!d.bare.empty()) bare.insert(d.bare);
        for (const std::string& s : d.syms) used.insert(s);
      }
    }
    for (const std::string& s : used) {
      if (bare.count(s)) continue;
      for (auto& [t, dims] : plan) {
        bool done = false;
        for (Dim& d : dims) {
          if (std::find(d.syms.begin(), d.syms.end(), s) != d.syms.end() && d.bare.empty()) {
            d.text = d.bare = d.sema_text = s;
            d.syms = {s};
            done = true;
            break;
          }
        }
        if (done) break;
      }
      bare.insert(s);
    }
    sizes_.assign(bare.begin(), bare.end());
    std::vector<std::string> params;
    for (auto& [t, dims] : plan) {
      std::string s = t.name + ": " + (t.sym ? "symmetric " : "") + "tensor<" + en(t.e) + ">[";
      for (std::size_t i = 0; i < dims.size(); ++i) {
        s += (i ? ", " : "") + dims[i].text;
        t.dim_text.push_back(dims[i].sema_text);
      }
      params.push_back(s + "]");
      tensors_.push_back(t);
    }
    // matmul needs K to read the same to sema in both operands
    std::vector<Gemm> ok;
    for (const Gemm& g : gemms_) {
      if (tensors_[static_cast<std::size_t>(g.a)].dim_text[1] == tensors_[static_cast<std::size_t>(g.b)].dim_text[0]) ok.push_back(g);
    }
    gemms_ = ok;
    const int ns = static_cast<int>(pickw({3, 4, 3, 2}));
    for (int i = 0; i < ns; ++i) {
      const E e = rand_scalar_elem();
      const std::string n = user_name("s");
      params.push_back(n + ": " + en(e));
      scalars_.push_back({n, e == E::int_ ? E::i64 : e});
    }
    for (std::size_t i = params.size(); i > 1; --i) std::swap(params[i - 1], params[u(i)]);
    k.params = params;

    // Body: plain statements, or lets and roles.
    scopes_.emplace_back();
    roles_ = p_(0.22);
    if (!roles_) {
      const int n = static_cast<int>(between(2, 6));
      for (int i = 0; i < n && stmts_ < o_.max_stmts; ++i) stmt(k.body, 0);
    } else {
      auto top_let = [&](std::vector<GenNode>& out) {
        std::vector<GenNode>* saved = pre_;
        pre_ = &out;
        const std::string n = user_name("v");
        Ex x;
        const int kk = static_cast<int>(u(6));
        if (kk == 0) x = named_int(p_(0.5) ? "program" : "programs");
        else if (kk == 1) x = named_int(p_(0.5) ? "programs * 2" : "program + rank");
        else if (kk == 2) x = named_int("(rank + 1) % world");
        else if (kk == 3) x = value(pick_tile_shape(false), rand_scalar_elem(), 1);
        else x = value({}, rand_scalar_elem(), edepth());
        out.push_back(leaf("let " + n + " = " + x.t + ";"));
        ++stmts_;
        declare(n, x.ty, true);
        pre_ = saved;
      };
      const int lets = static_cast<int>(between(0, 2));
      for (int i = 0; i < lets; ++i) top_let(k.body);
      const int nroles = static_cast<int>(between(1, 3));
      for (int i = 0; i < nroles; ++i) {
        GenNode r;
        r.is_block = true;
        r.head = "role " + fresh(i == 0 ? "producer" : "consumer") + "(programs: " + role_programs() + ")";
        r.body = block(1, static_cast<int>(between(1, 3)));
        k.body.push_back(std::move(r));
        if (p_(0.2)) top_let(k.body);
      }
    }
    scopes_.pop_back();
    return k;
  }
};

void render_nodes(const std::vector<GenNode>& nodes, int depth, std::string& out) {
  const std::string ind(static_cast<std::size_t>(depth) * 4, ' ');
  for (const GenNode& n : nodes) {
    if (!n.is_block) {
      if (!n.head.empty()) out += ind + n.head + "\n";  // the minimizer empties inlined lets
      continue;
    }
    out += ind + n.head + " {\n";
    render_nodes(n.body, depth + 1, out);
    const GenNode* cur = &n;
    while (cur->has_else) {
      if (cur->else_is_if && cur->else_body.size() == 1 && cur->else_body[0].is_block) {
        cur = &cur->else_body[0];
        out += ind + "} else " + cur->head + " {\n";
        render_nodes(cur->body, depth + 1, out);
        continue;
      }
      out += ind + "} else {\n";
      render_nodes(cur->else_body, depth + 1, out);
      break;
    }
    out += ind + "}\n";
  }
}

// Visits removable items in a fixed order; with `apply`, performs the k-th removal.
struct Walker {
  std::size_t k = 0;
  bool apply = false;
  bool done = false;
  std::size_t n = 0;
  bool hit() {
    if (apply && !done && n == k) {
      done = true;
      ++n;
      return true;
    }
    ++n;
    return false;
  }
  void nodes(std::vector<GenNode>& list) {
    for (std::size_t i = 0; i < list.size() && !done; ++i) {
      if (hit()) {
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
      if (list[i].is_block) {
        if (hit()) {  // unwrap: the body replaces the block
          std::vector<GenNode> b = std::move(list[i].body);
          list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
          list.insert(list.begin() + static_cast<std::ptrdiff_t>(i), std::make_move_iterator(b.begin()),
                      std::make_move_iterator(b.end()));
          return;
        }
      }
      if (list[i].has_else && hit()) {
        list[i].has_else = false;
        list[i].else_is_if = false;
        list[i].else_body.clear();
        return;
      }
      nodes(list[i].body);
      if (done) return;
      nodes(list[i].else_body);
      if (done) return;
    }
  }
  template <class T>
  void items(std::vector<T>& list) {
    for (std::size_t i = 0; i < list.size() && !done; ++i) {
      if (hit()) {
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
    }
  }
  void program(GenProgram& p) {
    if (p.kernels.size() > 1) items(p.kernels);
    for (GenKernel& k : p.kernels) {
      if (done) return;
      items(k.params);
      if (done) return;
      items(k.consts);
      if (done) return;
      nodes(k.body);
    }
  }
};

}  // namespace

std::string GenProgram::render() const {
  std::string out;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const GenKernel& k = kernels[i];
    if (i) out += "\n";
    out += "kernel " + k.name;
    if (!k.consts.empty()) {
      out += "<";
      for (std::size_t j = 0; j < k.consts.size(); ++j) out += (j ? ", " : "") + k.consts[j];
      out += ">";
    }
    out += "(";
    if (!k.params.empty()) {
      out += "\n";
      for (const std::string& p : k.params) out += "    " + p + ",\n";
    }
    out += ") {\n";
    render_nodes(k.body, 1, out);
    out += "}\n";
  }
  return out;
}

std::string GenProgram::define_args() const {
  std::string s;
  for (const auto& [n, v] : defines) {
    // Only defines some kernel still declares (a minimized program may have lost it).
    bool declared = false;
    for (const GenKernel& k : kernels) {
      for (const std::string& c : k.consts) declared |= c.rfind(n + ":", 0) == 0;
    }
    if (!declared) continue;
    s += (s.empty() ? "" : " ") + std::string("-D") + n + "=" + std::to_string(v);
  }
  return s;
}

GenProgram generate_program(std::uint64_t seed, const GenOptions& options) {
  return Gen(seed, options).run(seed);
}

std::size_t count_items(const GenProgram& p) {
  GenProgram copy = p;
  Walker w;
  w.program(copy);
  return w.n;
}

GenProgram remove_item(const GenProgram& p, std::size_t k) {
  GenProgram copy = p;
  Walker w;
  w.k = k;
  w.apply = true;
  w.program(copy);
  return copy;
}

}  // namespace irisc_fuzz
