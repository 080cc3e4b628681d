// The TIR reader (see tir_read.hpp): a recursive-descent parser over the scanner in
// tir_scan.hpp. Errors are thrown as a private exception (detail::Fail) inside the
// reader and turned into a ReadError at its entry; nothing escapes read().
#include "compiler/tir/tir_read.hpp"

#include <map>
#include <memory>
#include <new>
#include <set>
#include <utility>
#include <vector>

#include "compiler/tir/tir_scan.hpp"
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
      if (v.axis == 0 || v.axis == 1) return Type::tile(op(0)->type.elem, v.axis == 0 ? op(0)->type.size : op(0)->type.rows);
      return Type::scalar(op(0)->type.elem);
    case ValueKind::Select: {
      const Value *a = op(1), *b = op(2);
      if (!a || !b || !op(0)) return std::nullopt;
      Type t = a->type;
      if (!t.is_tile() && b->type.is_tile()) t = b->type;
      if (!t.is_tile() && op(0)->type.is_tile()) t = op(0)->type;
      t.elem = a->type.elem;
      return t;
    }
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
    case ValueKind::LoadFlagged:
    case ValueKind::Receive:
    case ValueKind::Fill:
    case ValueKind::Broadcast:
    case ValueKind::Matmul: return std::nullopt;
  }
  return std::nullopt;
}

namespace {

using detail::digit;
using detail::enum_named;
using detail::Fail;
using detail::ident_start;

class Reader : private detail::Scanner {
 public:
  Reader(std::string_view text, ReadError* err) : Scanner(text, err) {}

  void module(Module& m) {
    std::set<std::string> names;
    while (!at_end()) {
      const std::size_t at = here();
      if (!eat_word("kernel")) fail("expected 'kernel', found " + found());
      m.kernels.emplace_back();
      kernel(m.kernels.back());
      if (!names.insert(m.kernels.back().name).second) {
        fail_at(at, "kernel '" + m.kernels.back().name + "' is defined twice");
      }
    }
  }

 private:
  struct Depth {
    Reader& r;
    explicit Depth(Reader& reader) : r(reader) {
      if (++r.depth_ > kMaxReadNesting) r.fail("nesting deeper than " + std::to_string(kMaxReadNesting) + " levels");
    }
    ~Depth() { --r.depth_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;
  };

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
    gemm_role_.clear();
    k.range = position();
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
        const std::size_t at = here();
        std::string n = sigil_name('#', "a size symbol (#NAME)");
        if (!listed.insert(n).second) fail_at(at, "size #" + n + " is listed twice");
        clause.push_back(std::move(n));
      } while (eat(","));
      expect(")");
    }
    if (eat_word("with")) {
      std::set<std::string> seen;
      do {
        const std::size_t at = here();
        std::string n = ident_here("a compile-time parameter (NAME=VALUE)");
        expect("=");
        const std::int64_t v = integer("an integer value");
        if (!seen.insert(n).second) fail_at(at, "compile-time parameter '" + n + "' is given twice");
        k.constants.emplace_back(std::move(n), v);
      } while (peek_binding());  // another NAME=VALUE, else the next clause
    }
    if (eat_word("grid")) k.grid = value();
    expect("{");
    if (eat_word("launch")) launch(k);
    body(k.body, /*eaten_open=*/true);
    if (!gemm_role_.empty()) {
      for (std::size_t r = 0; r < k.roles.size(); ++r) {
        if (k.roles[r].name == gemm_role_) k.gemm.role = static_cast<int>(r);
      }
      if (k.gemm.role < 0) fail_at(gemm_role_at_, "the kernel has no role '" + gemm_role_ + "'");
    }
    // Size symbols: the sizes(...) clause, else the order of first use.
    k.size_symbols = have_clause ? clause : sizes_seen_;
    std::map<std::string, int> index;
    for (std::size_t i = 0; i < k.size_symbols.size(); ++i) index[k.size_symbols[i]] = static_cast<int>(i);
    for (const auto& [v, at, n] : size_refs_) {
      auto it = index.find(n);
      if (it == index.end()) fail_at(at, "size #" + n + " is not in the kernel's sizes(...)");
      v->size = it->second;
    }
    // Recomputed, as select_matmul decides it: some matmul runs on tensor (matrix) cores.
    k.uses_mma = any_value(k.body, [](const Value& v) {
      return v.kind == ValueKind::Matmul && (v.matmul == MatmulLowering::mma_sync || v.matmul == MatmulLowering::mfma);
    });
  }

  void param(Kernel& k) {
    const std::size_t at = here();
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
      const std::size_t at = here();
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
      } else if (eat_word("gemm")) {
        item = "gemm";
        expect_word("stages");
        k.gemm.stages = static_cast<int>(integer_in("a stage count", 1, 64));
        expect_word("group_m");
        k.gemm.group_m = static_cast<int>(integer_in("a tile-row group", 1, 1 << 20));
        expect_word("cluster");
        k.gemm.cluster = static_cast<int>(integer_in("a cluster size", 1, 8));
        k.gemm.tma_stores = eat_word("tma_stores");
        if (eat_word("role")) {  // resolved once the body has defined the roles
          gemm_role_at_ = here();
          gemm_role_ = ident_here("a role name");
          expect_word("others");
          k.gemm.others_threads = static_cast<int>(integer_in("a thread count", 1, 1024));
        }
      } else if (eat_word("layouts")) {
        item = "layouts";
        k.layouts_chosen = true;
        while (digit(peek())) k.layouts.push_back(layout());
      } else {
        fail("expected 'threads', 'blocks/sm', 'dynamic shared', 'gemm' or 'layouts', found " + found());
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

  // `@BEGIN:END` (tir::print with positions): a source range; {0, 0} where absent.
  SourceRange position() {
    if (peek() != '@') return {};
    expect("@");
    SourceRange r;
    r.begin = static_cast<std::uint32_t>(integer_in("a source offset", 0, 0xffffffffLL));
    expect(":");
    r.end = static_cast<std::uint32_t>(integer_in("a source offset", r.begin, 0xffffffffLL));
    return r;
  }

  StmtPtr stmt() {
    const SourceRange range = position();
    StmtPtr s = stmt_body();
    s->range = range;
    return s;
  }

  StmtPtr stmt_body() {
    const std::size_t at = here();
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
    } else if (eat_word("store_flagged")) {
      s->kind = StmtKind::StoreFlagged;
      s->view = view();
      expect("<-");
      s->value = value();
      expect(",");
      if (eat_word("to")) {
        s->rank = value();
        expect(",");
      }
      expect_word("flag");
      s->flag = value();
    } else if (eat_word("store")) {
      s->kind = StmtKind::Store;
      put(*s);
    } else if (eat_word("send")) {
      s->kind = StmtKind::Send;
      put(*s);
    } else if (eat_word("signal")) {
      s->kind = StmtKind::Signal;
      semantics(&s->order, &s->scope);
      expect(">");
      if (eat_word("add")) s->signal_op = SignalOp::add;
      else if (eat_word("set")) s->signal_op = SignalOp::set;
      else fail("expected 'set' or 'add', found " + found());
      put(*s);
    } else if (eat_word("wait")) {
      s->kind = StmtKind::Wait;
      semantics(&s->order, &s->scope);
      expect(">");
      s->view = view();
      s->cmp = enum_word<Cmp>("comparison");
      s->value = value();
    } else if (eat_word("fence")) {
      s->kind = StmtKind::Fence;
      semantics(&s->order, &s->scope);
      expect(">");
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
      const std::size_t name_at = here();
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

  // `VIEW <- VALUE[, to VALUE]`: what store and signal write, where, on which rank.
  void put(Stmt& s) {
    s.view = view();
    expect("<-");
    s.value = value();
    if (eat(",")) {
      expect_word("to");
      s.rank = value();
    }
  }

  // `<ORDER, SCOPE`: the memory semantics of signal, wait and the atomics; the caller
  // reads the `>` (an atomic may give its type before it).
  void semantics(Order* order, Scope* scope) {
    expect("<");
    *order = enum_word<Order>("memory order");
    expect(",");
    *scope = enum_word<Scope>("scope");
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
      if (eat(",")) {
        expect_word("from_row");
        expect(":");
        s.lo = value();
      }
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
      if (eat(",")) s.stride = value();
      expect(")");
      s.var = new_var(a, Type::scalar(ScalarType::int_), false);
    } else if (eat_word("chunks")) {
      s.kind = StmtKind::ForChunks;
      expect("(");
      s.lo = value();
      expect(",");
      s.hi = value();
      expect(",");
      s.step = extent("a chunk size");
      expect(")");
      s.var = new_var(a, Type::range(s.step), false);
    } else {
      fail("expected blocks(...), tiles(...), chunks(...), ranks, peers or range(...), found " + found());
    }
    body(s.body);
    close_scope(mark);
  }

  // ---- views and values --------------------------------------------------------------------------
  View view() {
    const std::size_t at = here();
    View w;
    w.gathered = eat_qualifier("gathered");
    w.param = param_named(ident_here("a tensor name"), at, /*tensor=*/true);
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
    if (eat_word("at")) {  // each dimension's first index (tir::print with positions)
      expect("(");
      do w.index.push_back(value());
      while (eat(","));
      expect(")");
    }
    expect("]");
    return w;
  }

  // The parameter named `n` (at `at`), which must be a tensor, or a scalar.
  int param_named(const std::string& n, std::size_t at, bool tensor) {
    auto p = params_.find(n);
    if (p == params_.end() || k_->params[static_cast<std::size_t>(p->second)].is_tensor != tensor) {
      fail_at(at, "'" + n + "' is not a " + (tensor ? "tensor" : "scalar") + " parameter");
    }
    return p->second;
  }

  ValuePtr make(ValueKind kind, const Type& t) {
    auto v = std::make_shared<Value>();
    v->kind = kind;
    v->type = t;
    return v;
  }

  // `<TYPE` after the name of a value whose listing always gives its type.
  ValuePtr typed(ValueKind kind) {
    auto v = make(kind, {});
    expect("<");
    v->type = type();
    return v;
  }

  // A value, after its source range where the listing gives one.
  ValuePtr value() {
    const SourceRange r = position();
    ValuePtr v = value_body();
    if (r.end > r.begin) v->range = r;
    return v;
  }

  ValuePtr value_body() {
    Depth d(*this);
    const std::size_t at = here();
    if (at_end()) fail("expected a value, found the end of the text");
    const char c = peek();
    if (c == '$') {
      const int param = param_named(sigil_name('$', "a scalar parameter ($NAME)"), at, /*tensor=*/false);
      auto v = make(ValueKind::ParamRef, Type::scalar(k_->params[static_cast<std::size_t>(param)].elem));
      v->param = param;
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
    if (at_literal()) {
      const detail::Literal lit = literal();
      auto v = make(ValueKind::Const, Type::scalar(lit.type));
      v->int_value = lit.int_value;
      v->float_value = lit.float_value;
      return v;
    }
    if (!ident_start(c)) fail("expected a value, found " + found());
    const std::string w = ident_here("a value");
    Builtin b;
    if (enum_named(w, &b)) {
      auto v = make(ValueKind::BuiltinRef, Type::scalar(ScalarType::int_));
      v->builtin = b;
      return v;
    }
    return call(w, at);
  }

  ValuePtr call(const std::string& w, std::size_t at) {
    if (w == "cast" || w == "fill") {
      auto v = typed(w == "cast" ? ValueKind::Cast : ValueKind::Fill);
      expect(">");
      expect("(");
      v->operands.push_back(value());
      expect(")");
      return v;
    }
    if (w == "load") {
      auto v = typed(ValueKind::Load);
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
    if (w == "load_flagged") {
      auto v = typed(ValueKind::LoadFlagged);
      expect(">");
      expect("(");
      v->view = view();
      expect(",");
      expect_word("flag");
      v->operands.push_back(value());
      expect(")");
      return v;
    }
    if (w == "receive") {
      auto v = typed(ValueKind::Receive);
      expect(">");
      expect("(");
      v->view = view();
      expect(")");
      return v;
    }
    if (w == "matmul") {
      auto v = typed(ValueKind::Matmul);
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
      semantics(&v->order, &v->scope);
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
    int axis = -1;  // a trailing `axis N` (reductions of 2-D tiles, broadcasts)
    if (!eat(")")) {
      do {
        if (!args.empty() && eat_word("axis")) {
          axis = static_cast<int>(integer_in("an axis", 0, 1));
          break;
        }
        args.push_back(value());
      } while (eat(","));
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
      v->axis = axis;
    } else if (args.size() == 1 && w == "broadcast" && ann && axis >= 0) {
      v = make(ValueKind::Broadcast, {});
      v->axis = axis;
    } else if (args.size() == 3 && w == "select") {
      v = make(ValueKind::Select, {});
    } else if (args.size() == 1 && enum_named(w, &u)) {
      v = make(ValueKind::Unary, {});
      v->unop = u;
    } else if (args.size() == 2 && enum_named(w, &b)) {
      v = make(ValueKind::Binary, {});
      v->binop = b;
    } else {
      fail_at(at, "unknown operation '" + w + "' with " + std::to_string(args.size()) + " operand(s)");
    }
    if (axis >= 0 && v->kind != ValueKind::Reduce && v->kind != ValueKind::Broadcast) fail_at(at, "'" + w + "' takes no axis");
    v->operands = std::move(args);
    v->type = ann ? *ann : *implied_type(*k_, *v);
    return v;
  }

  struct SizeUse {
    Value* value;
    std::size_t at;
    std::string name;
  };

  int depth_ = 0;
  Kernel* k_ = nullptr;
  std::vector<std::string> scope_;                    // names defined, innermost last
  std::map<std::string, std::vector<int>> visible_;  // name -> its definitions in scope
  std::set<std::string> sizes_known_;
  std::map<std::string, int> params_;
  std::set<std::string> roles_;
  std::string gemm_role_;  // the launch line's `gemm ... role NAME`
  std::size_t gemm_role_at_ = 0;
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
