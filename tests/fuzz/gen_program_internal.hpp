// Internals of the .iris program generator (gen_program*.cpp): the value model and class Gen.
//
// The generator keeps a model of what sema will infer for every expression it builds
// (element type, tile shape, whether sema sees a literal constant and, for integers, its
// folded value), and only combines operands the way sema's rules allow
// (compiler/sema/check_*.cpp):
//   * a literal adapts to the other operand's type (but a float literal never becomes
//     an integer); the index type `int` adapts to any integer type;
//   * in `a op b`, b is converted to a's type first when it can be, else a to b's;
//   * integer literal arithmetic is folded at compile time (overflow and division by
//     zero are errors there), float literal arithmetic is not;
//   * tiles combine with scalars and with tiles of the same shape only.
//
// Gen's members are defined in gen_program.cpp (names, scopes, literals),
// gen_program_expr.cpp (expressions), gen_program_msg.cpp (slots and data-and-flag
// words) and gen_program_stmt.cpp (statements, kernels, the program).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/fuzz/gen_program.hpp"

namespace irisc_fuzz::detail {

// ---- types -------------------------------------------------------------------------------
enum class E : std::uint8_t { f32, f16, bf16, i32, i64, u32, u64, b, int_ };

inline const char* en(E e) {
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
inline bool isf(E e) { return e == E::f32 || e == E::f16 || e == E::bf16; }
inline bool isi(E e) { return e == E::i32 || e == E::i64 || e == E::u32 || e == E::u64 || e == E::int_; }
// Element types of atomics (sema: atomic_supports); f32 only for add, sub, xchg, cas.
inline bool atomic_ok(E e) { return e == E::i32 || e == E::i64 || e == E::u32 || e == E::u64 || e == E::f32; }

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

  GenProgram run(std::uint64_t seed);  // gen_program_stmt.cpp

 private:
  // ---- randomness (own helpers: identical on every standard library) --------------------
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

  // ---- per-kernel state -----------------------------------------------------------------
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

  // ---- names, element types, scopes (gen_program.cpp) -----------------------------------
  std::string fresh(const char* prefix) { return prefix + std::to_string(names_++); }
  std::set<std::string> used_names_;
  std::string user_name(const char* prefix);
  E rand_scalar_elem();
  E rand_num_elem();
  E rand_tensor_elem();
  E rand_int_elem();
  std::vector<Var> visible(std::function<bool(const Var&)> f) const;
  void declare(const std::string& name, Ty ty, bool mut, bool hidden = false);
  std::vector<std::int64_t> range_sizes() const;
  bool has_range(std::int64_t n) const;
  std::vector<int> tensors_where(std::function<bool(const Tensor&)> f) const;

  // ---- literals (gen_program.cpp) -------------------------------------------------------
  Ex lit_int_edge();
  static Ex lit_int(std::int64_t v);
  Ex lit_float();
  Ex lit_bool();
  std::string const_text(std::int64_t v);

  // Expressions, from here down to the statements: gen_program_expr.cpp.
  // ---- hoisting: a let made right before the statement, used only at one odd place ------
  Ex hoist(const Ex& x);

  // ---- sema's conversion rules (check_expr.cpp: coerce / Binary) ------------------------
  static bool coerce_ok(const Ex& v, E to);
  static std::optional<E> unify(const Ex& a, const Ex& b);
  static Ex exact(const Ex& x, E e);

  // ---- integer leaves -------------------------------------------------------------------
  Ex int_leaf();
  static Ex named_int(const std::string& n);

  // ---- ranges ---------------------------------------------------------------------------
  Ex range_of(const Var& v, bool odd);
  std::optional<Ex> range_sized(std::int64_t n, bool odd = true);
  Ex range_any();

  // ---- integer positions: indices, ranks, wait indices, bounds --------------------------
  Ex ipos(int d, bool odd = true, double hoist_p = 0.15);
  Ex bound(int d);

  // ---- views ----------------------------------------------------------------------------
  std::string elem_view(const Tensor& t);
  std::optional<std::string> tile_view(const Tensor& t, Shape sh);
  bool can_view(const Tensor& t, Shape sh) const;
  std::string named_args(std::vector<std::string> args);
  Ex elem_load(const Tensor& t);
  std::optional<Ex> tile_load(const Tensor& t, Shape sh);

  // ---- tile shapes ----------------------------------------------------------------------
  bool has_2d_tensor() const;
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
  std::vector<Shape> shapes_1d() const;
  std::vector<Shape> shapes_2d() const;
  std::int64_t fill_size();
  Shape pick_tile_shape(bool allow2d);

  // ---- values ---------------------------------------------------------------------------
  Ex operand(Shape sh, E e, int d, bool scalar_only = false);
  Ex value(Shape sh, E e, int d);
  Ex fill(Shape sh, E e, int d);

  // Each matmul instantiates a large template (unrolled 4 times more in a loop over
  // ranks): at most two per kernel, rarely in a rank loop, keep NVRTC fast.
  int matmuls_ = 0;
  bool can_matmul() { return !gemms_.empty() && matmuls_ < 2 && (world_depth_ == 0 || p_(0.1)); }
  Ex matmul(Shape sh, E acc);

  Ex atomic_value(const Tensor& t, Shape sh, int d);
  std::string atomic_call(const Tensor& t, Shape sh, int d);
  Ex binary(Shape sh, E e, int d);
  Ex unary(Shape sh, E e, int d);
  Ex minmax(Shape sh, E e, int d);
  Ex boolean(Shape sh, int d);

  // ---- statements (gen_program_stmt.cpp) ------------------------------------------------
  GenNode leaf(std::string s);
  int edepth() { return static_cast<int>(u(static_cast<std::uint64_t>(o_.max_expr_depth + 1))); }
  std::vector<GenNode> block(int depth, int n);
  std::vector<GenNode> body(int depth);
  void stmt(std::vector<GenNode>& out, int depth);
  void stmt_let(std::vector<GenNode>& out);
  void stmt_range_let(std::vector<GenNode>& out);
  void stmt_assign(std::vector<GenNode>& out);
  std::pair<std::string, Shape> any_view(const Tensor& t);
  void stmt_store(std::vector<GenNode>& out);
  void stmt_get(std::vector<GenNode>& out);
  std::string atomic_stmt();
  const Tensor& int_tensor();
  Ex flag_value(const Tensor& f);
  void stmt_signal(std::vector<GenNode>& out);
  void stmt_wait(std::vector<GenNode>& out);
  GenNode loop_node(std::string head, int depth, std::vector<Var> vars);
  void stmt_blocks(std::vector<GenNode>& out, int depth);
  void stmt_tiles(std::vector<GenNode>& out, int depth);

  // Loops over ranks (and range loops whose bounds mention world) are unrolled 4 times
  // by the emitted #pragma; three nested ones are 64 copies of the body and NVRTC takes
  // seconds, so a kernel nests at most world_cap_ of them.
  int world_depth_ = 0, world_cap_ = 1;

  void stmt_ranks(std::vector<GenNode>& out, int depth);
  void stmt_range(std::vector<GenNode>& out, int depth);
  GenNode if_node(int depth);
  void stmt_if(std::vector<GenNode>& out, int depth);
  void stmt_eval(std::vector<GenNode>& out);

  // ---- messages: slots and data-and-flag words (gen_program_msg.cpp) ---------------------
  // A kernel that sends or receives runs as few threads as give each 16 bytes of its
  // smallest tile, a warp at the least (choose_launch.cpp): 32 threads for most. Only
  // kernels chosen for slots use them, and keep every tile within 1024 elements (32 a
  // thread), or NVRTC takes tens of seconds on a receive's unrolled polls.
  bool slots_ = false;
  std::vector<Dim> msg_dims(const std::vector<std::string>& syms);
  bool has_slots() const;
  Ex receive(Shape sh, E e);
  void stmt_send(std::vector<GenNode>& out);
  bool has_words() const;
  static bool word_ok(E e);       // a word carries it (sema: at most 4 bytes, not int)
  static bool word_elem_ok(E e);  // ... one to a word, so also as a single element
  const Tensor& words_tensor();
  Ex word_flag();
  Ex load_flagged(Shape sh, E e);
  void stmt_store_flagged(std::vector<GenNode>& out);

  // ---- kernels (gen_program_stmt.cpp) ---------------------------------------------------
  std::string role_programs();
  Dim plain_dim(const std::vector<std::string>& syms);
  GenKernel kernel(const std::string& name, std::map<std::string, std::int64_t>& defines);
};

}  // namespace irisc_fuzz::detail
