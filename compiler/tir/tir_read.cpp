// The TIR reader (see tir_read.hpp): a recursive-descent parser over characters. Errors
// are thrown as a private exception inside the reader and turned into a ReadError at
// its entry; nothing escapes read().
#include "compiler/tir/tir_read.hpp"

#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <utility>
#include <vector>

#include "compiler/tir/visit.hpp"

namespace irisc::tir {
namespace {

bool is_compare(BinOp o) {
  return o == BinOp::eq || o == BinOp::ne || o == BinOp::lt || o == BinOp::le || o == BinOp::gt || o == BinOp::ge;
}

}  // namespace

std::optional<Type> implied_type(const Kernel& k, const Value& v) {
  auto op = [&](std::size_t i) -> const Value* { return i < v.operands.size() ? v.operands[i].get() : nullptr; };
  switch (v.kind) {
    case ValueKind::RangeStart:
    case ValueKind::RangeExtent: return Type::scalar(ScalarType::int_);
    case ValueKind::Unary:
      if (!op(0)) return std::nullopt;
      return op(0)->type;
    case ValueKind::Binary: {
      const Value *a = op(0), *b = op(1);
      if (!a || !b) return std::nullopt;
      if (a->type.kind == TypeKind::Range) return a->type;
      Type t = a->type.is_tile() ? a->type : b->type;
      if (is_compare(v.binop)) t.elem = ScalarType::boolean;
      return t;
    }
    case ValueKind::Reduce:
      if (!op(0)) return std::nullopt;
      return Type::scalar(op(0)->type.elem);
    case ValueKind::Iota:
      if (!op(0)) return std::nullopt;
      return Type::tile(ScalarType::int_, op(0)->type.size);
    case ValueKind::Atomic: {
      if (v.view.param < 0 || v.view.param >= static_cast<int>(k.params.size())) return std::nullopt;
      const ScalarType e = k.params[static_cast<std::size_t>(v.view.param)].elem;
      if (v.view.rows) return Type::tile2d(e, v.view.rows, v.view.size);
      if (v.view.size) return Type::tile(e, v.view.size);
      return Type::scalar(e);
    }
    case ValueKind::Const:
    case ValueKind::ParamRef:
    case ValueKind::SizeRef:
    case ValueKind::VarRef:
    case ValueKind::BuiltinRef:
    case ValueKind::Cast:
    case ValueKind::Load:
    case ValueKind::Fill:
    case ValueKind::Matmul: return std::nullopt;
  }
  return std::nullopt;
}

namespace {

struct Fail {};  // a parse error, already recorded in the ReadError

constexpr std::int64_t kMaxExtent = std::int64_t{1} << 20;  // tile sizes, steps, layout columns

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

// How many enumerators each enum the listing spells by name() has. The switches are
// exhaustive, so an enumerator added to tir.hpp is a build error here (-Werror=switch)
// until it is counted: the reader then reads every name the printer writes.
// clang-format off
constexpr int count(Builtin e) {
  switch (e) { case Builtin::rank: case Builtin::world: case Builtin::sms: case Builtin::program:
               case Builtin::programs: case Builtin::resident: return 6; }
  return 0;
}
constexpr int count(Order e) {
  switch (e) { case Order::relaxed: case Order::acquire: case Order::release: case Order::acq_rel: return 4; }
  return 0;
}
constexpr int count(Scope e) {
  switch (e) { case Scope::block: case Scope::device: case Scope::system: return 3; }
  return 0;
}
constexpr int count(Cmp e) {
  switch (e) { case Cmp::eq: case Cmp::ne: case Cmp::gt: case Cmp::ge: case Cmp::lt: case Cmp::le: return 6; }
  return 0;
}
constexpr int count(AtomicOp e) {
  switch (e) { case AtomicOp::add: case AtomicOp::sub: case AtomicOp::and_: case AtomicOp::or_: case AtomicOp::xor_:
               case AtomicOp::min: case AtomicOp::max: case AtomicOp::xchg: case AtomicOp::cas: return 9; }
  return 0;
}
constexpr int count(ReduceOp e) {
  switch (e) { case ReduceOp::sum: case ReduceOp::max: case ReduceOp::min: return 3; }
  return 0;
}
constexpr int count(BinOp e) {
  switch (e) { case BinOp::add: case BinOp::sub: case BinOp::mul: case BinOp::div: case BinOp::rem: case BinOp::eq:
               case BinOp::ne: case BinOp::lt: case BinOp::le: case BinOp::gt: case BinOp::ge: case BinOp::land:
               case BinOp::lor: case BinOp::band: case BinOp::bor: case BinOp::bxor: case BinOp::min:
               case BinOp::max: return 18; }
  return 0;
}
constexpr int count(UnOp e) {
  switch (e) { case UnOp::neg: case UnOp::lnot: case UnOp::abs: case UnOp::sqrt: case UnOp::exp: case UnOp::log: return 6; }
  return 0;
}
constexpr int count(MatmulLowering e) {
  switch (e) { case MatmulLowering::unchosen: case MatmulLowering::simt: case MatmulLowering::mma_sync: return 3; }
  return 0;
}
constexpr int count(ScalarType e) {
  switch (e) { case ScalarType::f32: case ScalarType::f16: case ScalarType::bf16: case ScalarType::i32:
               case ScalarType::i64: case ScalarType::u32: case ScalarType::u64: case ScalarType::boolean:
               case ScalarType::int_: return 9; }
  return 0;
}
// clang-format on

template <class E>
bool enum_named(std::string_view word, E* out) {
  for (int i = 0; i < count(E{}); ++i) {
    if (word == name(static_cast<E>(i))) {
      *out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

bool scalar_named(std::string_view word, ScalarType* out) {
  for (int i = 0; i < count(ScalarType{}); ++i) {
    if (word == ast::scalar_type_name(static_cast<ScalarType>(i))) {
      *out = static_cast<ScalarType>(i);
      return true;
    }
  }
  return false;
}

class Reader {
 public:
  Reader(std::string_view text, ReadError* err) : s_(text), err_(err) {}

  void module(Module& m) {
    std::set<std::string> names;
    while (!at_end()) {
      const std::size_t at = pos_;
      if (!eat_word("kernel")) fail("expected 'kernel', found " + found());
      m.kernels.emplace_back();
      kernel(m.kernels.back());
      if (!names.insert(m.kernels.back().name).second) {
        fail_at(at, "kernel '" + m.kernels.back().name + "' is defined twice");
      }
    }
  }

 private:
  // ---- errors -------------------------------------------------------------------------
  [[noreturn]] void fail(const std::string& what) {
    skip();
    fail_at(pos_, what);
  }
  [[noreturn]] void fail_at(std::size_t at, const std::string& what) {
    err_->offset = static_cast<std::uint32_t>(at);
    err_->line = 1;
    err_->column = 1;
    for (std::size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++err_->line;
        err_->column = 1;
      } else {
        ++err_->column;
      }
    }
    err_->message = what;
    throw Fail{};
  }
  // What is at the current position, for "expected X, found Y".
  std::string found() {
    skip();
    if (pos_ >= s_.size()) return "the end of the text";
    const char c = s_[pos_];
    if (ident_char(c)) {
      std::size_t e = pos_;
      while (e < s_.size() && ident_char(s_[e]) && e - pos_ < 40) ++e;
      return "'" + std::string(s_.substr(pos_, e - pos_)) + "'";
    }
    if (c > ' ' && c < 127) return std::string("'") + c + "'";
    static const char* hex = "0123456789abcdef";
    const auto u = static_cast<unsigned char>(c);
    return std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
  }

  struct Depth {
    Reader& r;
    explicit Depth(Reader& reader) : r(reader) {
      if (++r.depth_ > kMaxReadNesting) r.fail("nesting deeper than " + std::to_string(kMaxReadNesting) + " levels");
    }
    ~Depth() { --r.depth_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;
  };

  // ---- characters -------------------------------------------------------------------------
  void skip() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  bool at_end() {
    skip();
    return pos_ >= s_.size();
  }
  char peek() {
    skip();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool eat(std::string_view p) {
    skip();
    if (s_.substr(pos_, p.size()) != p) return false;
    pos_ += p.size();
    return true;
  }
  void expect(std::string_view p) {
    if (!eat(p)) fail("expected '" + std::string(p) + "', found " + found());
  }
  bool peek_word(std::string_view w) {
    skip();
    return s_.substr(pos_, w.size()) == w && !(pos_ + w.size() < s_.size() && ident_char(s_[pos_ + w.size()]));
  }
  bool eat_word(std::string_view w) {
    if (!peek_word(w)) return false;
    pos_ += w.size();
    return true;
  }
  void expect_word(std::string_view w) {
    if (!eat_word(w)) fail("expected '" + std::string(w) + "', found " + found());
  }
  // An identifier right here (no whitespace skipped).
  std::string ident_here(const std::string& what) {
    if (pos_ >= s_.size() || !ident_start(s_[pos_])) fail("expected " + what + ", found " + found());
    const std::size_t b = pos_;
    while (pos_ < s_.size() && ident_char(s_[pos_])) ++pos_;
    return std::string(s_.substr(b, pos_ - b));
  }
  std::string ident(const std::string& what) {
    skip();
    return ident_here(what);
  }
  // `%name`, `#name`, `$name`.
  std::string sigil_name(char sigil, const std::string& what) {
    skip();
    if (pos_ >= s_.size() || s_[pos_] != sigil) fail("expected " + what + ", found " + found());
    ++pos_;
    return ident_here(what);
  }
  // A decimal integer, optionally negative, that fits in 64 bits.
  std::int64_t integer(const std::string& what) {
    skip();
    const std::size_t at = pos_;
    const bool neg = pos_ < s_.size() && s_[pos_] == '-';
    if (neg) ++pos_;
    if (pos_ >= s_.size() || !digit(s_[pos_])) {
      pos_ = at;
      fail("expected " + what + ", found " + found());
    }
    std::uint64_t mag = 0;
    const std::uint64_t limit = neg ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
    while (pos_ < s_.size() && digit(s_[pos_])) {
      const auto d = static_cast<std::uint64_t>(s_[pos_] - '0');
      if (mag > (limit - d) / 10) fail_at(at, what + " does not fit in 64 bits");
      mag = mag * 10 + d;
      ++pos_;
    }
    return neg ? static_cast<std::int64_t>(0 - mag) : static_cast<std::int64_t>(mag);
  }
  std::int64_t integer_in(const std::string& what, std::int64_t lo, std::int64_t hi) {
    skip();
    const std::size_t at = pos_;
    const std::int64_t v = integer(what);
    if (v < lo || v > hi) {
      fail_at(at, what + " " + std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "]");
    }
    return v;
  }
  std::int64_t extent(const std::string& what) { return integer_in(what, 1, kMaxExtent); }

  // ---- types and names ----------------------------------------------------------------------
  ScalarType scalar_type() {
    skip();
    const std::size_t at = pos_;
    const std::string w = ident_here("an element type");
    ScalarType t;
    if (!scalar_named(w, &t)) fail_at(at, "unknown element type '" + w + "'");
    return t;
  }

  Type type() {
    skip();
    const std::size_t at = pos_;
    const std::string w = ident_here("a type");
    if (w == "tile") {
      expect("<");
      const ScalarType e = scalar_type();
      expect(">");
      expect("[");
      const std::int64_t a = extent("a tile size");
      if (eat(",")) {
        const std::int64_t b = extent("a tile size");
        expect("]");
        return Type::tile2d(e, a, b);
      }
      expect("]");
      return Type::tile(e, a);
    }
    if (w == "range") {
      expect("[");
      const std::int64_t n = extent("a range size");
      expect("]");
      return Type::range(n);
    }
    if (w == "rank") return Type{TypeKind::Rank, ScalarType::int_, 0, 0};
    if (w == "void") return Type{};
    ScalarType t;
    if (!scalar_named(w, &t)) fail_at(at, "unknown type '" + w + "'");
    return Type::scalar(t);
  }

  template <class E>
  E enum_word(const std::string& what) {
    skip();
    const std::size_t at = pos_;
    const std::string w = ident_here(what);
    E e;
    if (!enum_named(w, &e)) fail_at(at, "unknown " + what + " '" + w + "'");
    return e;
  }
  Order order() { return enum_word<Order>("memory order"); }
  Scope scope() { return enum_word<Scope>("scope"); }

  // ---- kernels --------------------------------------------------------------------------------
  void kernel(Kernel& k) {
    k_ = &k;
    scope_.clear();
    visible_.clear();
    params_.clear();
    sizes_seen_.clear();
    sizes_known_.clear();
    size_refs_.clear();
    roles_.clear();
    k.name = ident("a kernel name");
    expect("(");
    if (!eat(")")) {
      do param(k);
      while (eat(","));
      expect(")");
    }
    std::vector<std::string> clause;
    bool have_clause = false;
    if (eat_word("sizes")) {
      have_clause = true;
      std::set<std::string> listed;
      expect("(");
      do {
        skip();
        const std::size_t at = pos_;
        std::string n = sigil_name('#', "a size symbol (#NAME)");
        if (!listed.insert(n).second) fail_at(at, "size #" + n + " is listed twice");
        clause.push_back(std::move(n));
      } while (eat(","));
      expect(")");
    }
    if (eat_word("with")) {
      std::set<std::string> seen;
      do {
        skip();
        const std::size_t at = pos_;
        std::string n = ident_here("a compile-time parameter (NAME=VALUE)");
        expect("=");
        const std::int64_t v = integer("an integer value");
        if (!seen.insert(n).second) fail_at(at, "compile-time parameter '" + n + "' is given twice");
        k.constants.emplace_back(std::move(n), v);
        // Another NAME=VALUE follows, or the next clause.
        skip();
        std::size_t e = pos_;
        while (e < s_.size() && ident_char(s_[e])) ++e;
        while (e < s_.size() && (s_[e] == ' ' || s_[e] == '\t')) ++e;
        if (e == pos_ || e >= s_.size() || s_[e] != '=') break;
      } while (true);
    }
    if (eat_word("grid")) k.grid = value();
    expect("{");
    if (eat_word("launch")) launch(k);
    body(k.body, /*eaten_open=*/true);
    // Size symbols: the sizes(...) clause, else the order of first use.
    k.size_symbols = have_clause ? clause : sizes_seen_;
    std::map<std::string, int> index;
    for (std::size_t i = 0; i < k.size_symbols.size(); ++i) index[k.size_symbols[i]] = static_cast<int>(i);
    for (const auto& [v, at, n] : size_refs_) {
      auto it = index.find(n);
      if (it == index.end()) fail_at(at, "size #" + n + " is not in the kernel's sizes(...)");
      v->size = it->second;
    }
    // Recomputed, as select_matmul decides it: some matmul runs on tensor cores.
    k.uses_mma = any_value(k.body, [](const Value& v) {
      return v.kind == ValueKind::Matmul && v.matmul == MatmulLowering::mma_sync;
    });
  }

  void param(Kernel& k) {
    skip();
    const std::size_t at = pos_;
    Param p;
    p.name = ident_here("a parameter name");
    if (params_.count(p.name)) fail_at(at, "parameter '" + p.name + "' is defined twice");
    expect(":");
    p.symmetric = eat_word("symmetric");
    if (p.symmetric) expect_word("tensor");
    p.is_tensor = p.symmetric || eat_word("tensor");
    if (p.is_tensor) {
      expect("<");
      p.elem = scalar_type();
      expect(">");
      expect("[");
      if (!eat("]")) {
        do p.dims.push_back(value());
        while (eat(","));
        expect("]");
      }
    } else {
      p.elem = scalar_type();
    }
    params_[p.name] = static_cast<int>(k.params.size());
    k.params.push_back(std::move(p));
  }

  void launch(Kernel& k) {
    std::set<std::string> seen;
    do {
      skip();
      const std::size_t at = pos_;
      std::string item;
      if (eat_word("threads")) {
        item = "threads";
        k.block_threads = static_cast<int>(integer_in("a thread count", 1, 1024));
      } else if (eat_word("blocks")) {
        item = "blocks/sm";
        expect("/");
        expect_word("sm");
        k.min_blocks_per_sm = static_cast<int>(integer_in("a block count", 1, 1024));
      } else if (eat_word("dynamic")) {
        item = "dynamic shared";
        expect_word("shared");
        k.dynamic_shared_bytes = integer_in("a byte count", 1, std::int64_t{1} << 20);
      } else if (eat_word("layouts")) {
        item = "layouts";
        k.layouts_chosen = true;
        while (digit(peek())) {
          Layout l;
          const std::int64_t a = extent("a layout extent");
          if (eat("x")) {
            l.rows = a;
            l.cols = extent("a layout extent");
            if (eat("/")) l.vec = static_cast<int>(integer_in("a vector width", 1, 1024));
          } else {
            expect("/");
            l.cols = a;
            l.vec = static_cast<int>(integer_in("a vector width", 1, 1024));
          }
          k.layouts.push_back(l);
        }
      } else {
        fail("expected 'threads', 'blocks/sm', 'dynamic shared' or 'layouts', found " + found());
      }
      if (!seen.insert(item).second) fail_at(at, "'" + item + "' is given twice");
    } while (eat(","));
  }

  // ---- statements -----------------------------------------------------------------------------
  // `{ STATEMENT ... }`; definitions inside go out of scope at the `}`.
  void body(std::vector<StmtPtr>& out, bool eaten_open = false) {
    Depth d(*this);
    if (!eaten_open) expect("{");
    const std::size_t mark = scope_.size();
    while (!eat("}")) {
      if (at_end()) fail("expected '}', found the end of the text");
      out.push_back(stmt());
    }
    close_scope(mark);
  }

  int new_var(const std::string& n, const Type& t, bool mutable_) {
    k_->vars.push_back(Var{n, t, mutable_, false});
    const int v = static_cast<int>(k_->vars.size() - 1);
    scope_.push_back(n);
    visible_[n].push_back(v);
    return v;
  }

  // Ends the definitions made since scope_ had `mark` entries.
  void close_scope(std::size_t mark) {
    while (scope_.size() > mark) {
      auto it = visible_.find(scope_.back());
      it->second.pop_back();
      if (it->second.empty()) visible_.erase(it);
      scope_.pop_back();
    }
  }

  int lookup_var(const std::string& n, std::size_t at) {
    auto it = visible_.find(n);
    if (it == visible_.end()) fail_at(at, "unknown variable %" + n + " (no definition in scope)");
    return it->second.back();
  }

  StmtPtr stmt() {
    skip();
    const std::size_t at = pos_;
    auto s = std::make_unique<Stmt>();
    if (eat_word("let")) {
      s->kind = StmtKind::Let;
      const std::string n = sigil_name('%', "a variable (%NAME)");
      expect(":");
      const Type t = type();
      expect("=");
      s->value = value();
      s->var = new_var(n, t, true);  // after its value, which cannot see it
    } else if (peek() == '%') {
      s->kind = StmtKind::Assign;
      const std::string n = sigil_name('%', "a variable");
      s->var = lookup_var(n, at);
      if (!k_->vars[static_cast<std::size_t>(s->var)].mutable_) fail_at(at, "cannot assign to loop variable %" + n);
      expect("=");
      s->value = value();
    } else if (eat_word("store")) {
      s->kind = StmtKind::Store;
      s->view = view();
      expect("<-");
      s->value = value();
      if (eat(",")) {
        expect_word("to");
        s->rank = value();
      }
    } else if (eat_word("signal")) {
      s->kind = StmtKind::Signal;
      expect("<");
      s->order = order();
      expect(",");
      s->scope = scope();
      expect(">");
      if (eat_word("add")) s->signal_op = SignalOp::add;
      else if (eat_word("set")) s->signal_op = SignalOp::set;
      else fail("expected 'set' or 'add', found " + found());
      s->view = view();
      expect("<-");
      s->value = value();
      if (eat(",")) {
        expect_word("to");
        s->rank = value();
      }
    } else if (eat_word("wait")) {
      s->kind = StmtKind::Wait;
      expect("<");
      s->order = order();
      expect(",");
      s->scope = scope();
      expect(">");
      s->view = view();
      s->cmp = enum_word<Cmp>("comparison");
      s->value = value();
    } else if (eat_word("eval")) {
      s->kind = StmtKind::Eval;
      s->value = value();
    } else if (eat_word("for")) {
      loop(*s);
    } else if (eat_word("if")) {
      s->kind = StmtKind::If;
      s->value = value();
      body(s->body);
      if (eat_word("else")) body(s->else_body);
    } else if (eat_word("role")) {
      s->kind = StmtKind::Role;
      skip();
      const std::size_t name_at = pos_;
      Role r;
      r.name = ident_here("a role name");
      if (!roles_.insert(r.name).second) fail_at(name_at, "role '" + r.name + "' is defined twice");
      expect("=");
      r.programs = value();
      s->role = static_cast<int>(k_->roles.size());
      k_->roles.push_back(std::move(r));
      body(s->body);
    } else {
      fail("expected a statement, found " + found());
    }
    return s;
  }

  void loop(Stmt& s) {
    // The loop variables' names come first, their definitions after the bounds (which
    // are evaluated outside the loop).
    std::string t, a, b;
    bool tiles = false;
    if (eat("(")) {
      tiles = true;
    } else {
      a = sigil_name('%', "a loop variable (%NAME)");
      if (eat(",")) {
        t = std::move(a);
        expect("(");
        tiles = true;
      }
    }
    if (tiles) {
      a = sigil_name('%', "a loop variable (%NAME)");
      expect(",");
      b = sigil_name('%', "a loop variable (%NAME)");
      expect(")");
    }
    expect_word("in");
    const std::size_t mark = scope_.size();
    if (tiles) {
      s.kind = StmtKind::ForTiles;
      expect_word("tiles");
      expect("(");
      expect("[");
      s.hi = value();
      expect(",");
      s.hi2 = value();
      expect("]");
      expect(",");
      expect("[");
      s.step = extent("a tile side");
      expect(",");
      s.step2 = extent("a tile side");
      expect("]");
      expect(")");
      s.persistent = eat_word("persistent");
      if (!t.empty()) s.var_t = new_var(t, Type::scalar(ScalarType::int_), false);
      s.var = new_var(a, Type::range(s.step), false);
      s.var2 = new_var(b, Type::range(s.step2), false);
    } else if (eat_word("blocks")) {
      s.kind = StmtKind::ForBlocks;
      expect("(");
      s.hi = value();
      expect(",");
      s.step = extent("a block size");
      expect(")");
      s.persistent = eat_word("persistent");
      s.var = new_var(a, Type::range(s.step), false);
    } else if (peek_word("ranks") || peek_word("peers")) {
      s.kind = StmtKind::ForRanks;
      s.peers_only = eat_word("peers");
      if (!s.peers_only) expect_word("ranks");
      s.var = new_var(a, Type::scalar(ScalarType::int_), false);
    } else if (eat_word("range")) {
      s.kind = StmtKind::ForRange;
      expect("(");
      s.lo = value();
      expect(",");
      s.hi = value();
      expect(")");
      s.var = new_var(a, Type::scalar(ScalarType::int_), false);
    } else {
      fail("expected blocks(...), tiles(...), ranks, peers or range(...), found " + found());
    }
    body(s.body);
    close_scope(mark);
  }

  // ---- views and values --------------------------------------------------------------------------
  View view() {
    skip();
    const std::size_t at = pos_;
    const std::string n = ident_here("a tensor name");
    auto p = params_.find(n);
    if (p == params_.end() || !k_->params[static_cast<std::size_t>(p->second)].is_tensor) {
      fail_at(at, "'" + n + "' is not a tensor parameter");
    }
    View w;
    w.param = p->second;
    expect("[");
    w.offset = value();
    if (eat("+:")) {
      const std::int64_t a = extent("a view size");
      if (eat("x")) {
        w.rows = a;
        w.size = extent("a view size");
        expect_word("valid");
        w.row_extent = value();
        expect("x");
        w.extent = value();
      } else {
        w.size = a;
        expect_word("valid");
        w.extent = value();
      }
    } else if (eat_word("rows")) {
      w.slice_dim = 1;
      w.rows = extent("a panel height");
      expect_word("valid");
      w.row_extent = value();
      expect("x");
      expect_word("all");
      w.full = value();
    } else if (eat_word("all")) {
      w.slice_dim = 0;
      w.full = value();
      expect("x");
      expect_word("cols");
      w.size = extent("a panel width");
      expect_word("valid");
      w.extent = value();
    }
    if (eat_word("ld")) w.ld = value();
    expect("]");
    return w;
  }

  ValuePtr make(ValueKind kind, const Type& t) {
    auto v = std::make_shared<Value>();
    v->kind = kind;
    v->type = t;
    return v;
  }

  ValuePtr value() {
    Depth d(*this);
    skip();
    const std::size_t at = pos_;
    if (pos_ >= s_.size()) fail("expected a value, found the end of the text");
    const char c = s_[pos_];
    if (c == '$') {
      const std::string n = sigil_name('$', "a scalar parameter ($NAME)");
      auto p = params_.find(n);
      if (p == params_.end() || k_->params[static_cast<std::size_t>(p->second)].is_tensor) {
        fail_at(at, "'" + n + "' is not a scalar parameter");
      }
      auto v = make(ValueKind::ParamRef, Type::scalar(k_->params[static_cast<std::size_t>(p->second)].elem));
      v->param = p->second;
      return v;
    }
    if (c == '#') {
      std::string n = sigil_name('#', "a size symbol (#NAME)");
      auto v = make(ValueKind::SizeRef, Type::scalar(ScalarType::int_));
      if (sizes_known_.insert(n).second) sizes_seen_.push_back(n);
      size_refs_.push_back({v.get(), at, std::move(n)});
      return v;
    }
    if (c == '%') {
      const std::string n = sigil_name('%', "a variable (%NAME)");
      const int var = lookup_var(n, at);
      auto v = make(ValueKind::VarRef, k_->vars[static_cast<std::size_t>(var)].type);
      v->var = var;
      return v;
    }
    if (c == '-' || c == '+' || c == '.' || digit(c)) return constant(at);
    if (!ident_start(c)) fail("expected a value, found " + found());
    const std::string w = ident_here("a value");
    if ((w == "inf" || w == "nan") && pos_ < s_.size() && s_[pos_] == ':') {
      pos_ = at;
      return constant(at);
    }
    Builtin b;
    if (enum_named(w, &b)) {
      auto v = make(ValueKind::BuiltinRef, Type::scalar(ScalarType::int_));
      v->builtin = b;
      return v;
    }
    return call(w, at);
  }

  // INT:TYPE or FLOAT:TYPE, the number as printf("%g") or ("%.17g") writes it.
  ValuePtr constant(std::size_t at) {
    std::size_t e = pos_;
    while (e < s_.size() && (ident_char(s_[e]) || s_[e] == '.' || s_[e] == '+' || s_[e] == '-')) ++e;
    const std::string num(s_.substr(pos_, e - pos_));
    pos_ = e;
    if (pos_ >= s_.size() || s_[pos_] != ':') fail("expected ':TYPE' after the number '" + num + "', found " + found());
    ++pos_;
    const std::size_t type_at = pos_;
    const std::string tn = ident_here("an element type");
    ScalarType t;
    if (!scalar_named(tn, &t)) fail_at(type_at, "unknown element type '" + tn + "'");
    auto v = make(ValueKind::Const, Type::scalar(t));
    if (is_float(t)) {
      char* end = nullptr;
      v->float_value = std::strtod(num.c_str(), &end);
      if (num.empty() || end != num.c_str() + num.size()) fail_at(at, "malformed number '" + num + "'");
    } else {
      std::size_t i = num[0] == '-' ? 1 : 0;
      bool ok = i < num.size();
      for (std::size_t j = i; j < num.size(); ++j) ok = ok && digit(num[j]);
      if (!ok) fail_at(at, "malformed integer '" + num + "' for " + tn);
      const std::size_t saved = pos_;
      pos_ = at;
      v->int_value = integer("an integer");
      pos_ = saved;
    }
    return v;
  }

  ValuePtr call(const std::string& w, std::size_t at) {
    if (w == "cast" || w == "fill") {
      auto v = make(w == "cast" ? ValueKind::Cast : ValueKind::Fill, {});
      expect("<");
      v->type = type();
      expect(">");
      expect("(");
      v->operands.push_back(value());
      expect(")");
      return v;
    }
    if (w == "load") {
      auto v = make(ValueKind::Load, {});
      expect("<");
      v->type = type();
      expect(">");
      expect("(");
      v->view = view();
      while (eat(",")) {
        if (!v->rank && v->operands.empty() && eat_word("from")) {
          v->rank = value();
        } else if (v->operands.empty() && eat_word("other")) {
          v->operands.push_back(value());
        } else {
          fail("expected 'from' or 'other', found " + found());
        }
      }
      expect(")");
      return v;
    }
    if (w == "matmul") {
      auto v = make(ValueKind::Matmul, {});
      expect("<");
      v->type = type();
      if (eat(",")) v->matmul = enum_word<MatmulLowering>("matmul lowering");
      expect(">");
      expect("(");
      v->view = view();
      expect(",");
      v->view_b = view();
      expect(")");
      return v;
    }
    if (w.rfind("atomic_", 0) == 0) {
      auto v = make(ValueKind::Atomic, {});
      if (!enum_named(std::string_view(w).substr(7), &v->atomic_op)) fail_at(at, "unknown atomic '" + w + "'");
      expect("<");
      v->order = order();
      expect(",");
      v->scope = scope();
      std::optional<Type> ann;
      if (eat(",")) ann = type();
      expect(">");
      expect("(");
      v->view = view();
      while (eat(",")) {
        if (eat_word("to")) {
          v->rank = value();
          break;
        }
        v->operands.push_back(value());
      }
      expect(")");
      v->type = ann ? *ann : *implied_type(*k_, *v);
      return v;
    }
    // The rest: OP[<TYPE>](VALUE, ...), the operation known by its name and arity.
    std::optional<Type> ann;
    if (eat("<")) {
      ann = type();
      expect(">");
    }
    if (peek() != '(') fail_at(at, "unknown value '" + w + "'");
    expect("(");
    std::vector<ValuePtr> args;
    if (!eat(")")) {
      do args.push_back(value());
      while (eat(","));
      expect(")");
    }
    ValuePtr v;
    UnOp u;
    BinOp b;
    ReduceOp r;
    if (args.size() == 1 && (w == "start" || w == "extent" || w == "index")) {
      v = make(w == "start" ? ValueKind::RangeStart : w == "extent" ? ValueKind::RangeExtent : ValueKind::Iota, {});
    } else if (args.size() == 1 && enum_named(w, &r)) {
      v = make(ValueKind::Reduce, {});
      v->reduce_op = r;
    } else if (args.size() == 1 && enum_named(w, &u)) {
      v = make(ValueKind::Unary, {});
      v->unop = u;
    } else if (args.size() == 2 && enum_named(w, &b)) {
      v = make(ValueKind::Binary, {});
      v->binop = b;
    } else {
      fail_at(at, "unknown operation '" + w + "' with " + std::to_string(args.size()) + " operand(s)");
    }
    v->operands = std::move(args);
    v->type = ann ? *ann : *implied_type(*k_, *v);
    return v;
  }

  struct SizeUse {
    Value* value;
    std::size_t at;
    std::string name;
  };

  std::string_view s_;
  std::size_t pos_ = 0;
  ReadError* err_;
  int depth_ = 0;
  Kernel* k_ = nullptr;
  std::vector<std::string> scope_;                    // names defined, innermost last
  std::map<std::string, std::vector<int>> visible_;  // name -> its definitions in scope
  std::set<std::string> sizes_known_;
  std::map<std::string, int> params_;
  std::set<std::string> roles_;
  std::vector<std::string> sizes_seen_;  // size symbols in order of first use
  std::vector<SizeUse> size_refs_;       // resolved at the kernel's end
};

}  // namespace

bool read(std::string_view text, Module* out, ReadError* error) {
  ReadError scratch;
  ReadError& e = error ? *error : scratch;
  e = ReadError{};
  Module m;
  auto failed = [&](const std::string& why) {
    if (e.message.empty()) {
      e.line = e.column = 1;
      e.message = why;
    }
    if (out) *out = Module{};
    return false;
  };
  if (text.size() > (std::size_t{1} << 30)) return failed("the text is larger than 1 GiB");
  try {
    Reader(text, &e).module(m);
  } catch (const Fail&) {
    return failed("");
  } catch (const std::bad_alloc&) {
    return failed("out of memory");
  } catch (const std::exception& x) {
    return failed(std::string("internal error: ") + x.what());
  }
  if (out) *out = std::move(m);
  return true;
}

bool read(std::string_view text, Module* out, std::string* error) {
  ReadError e;
  const bool ok = read(text, out, &e);
  if (!ok && error) *error = std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.message;
  return ok;
}

}  // namespace irisc::tir
