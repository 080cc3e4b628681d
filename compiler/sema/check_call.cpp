// Built-in functions: value calls (load, fill/zeros/ones, index, reductions, math,
// atomics) and statement calls (store/put, get, signal, wait).
#include "compiler/sema/sema_state.hpp"

namespace irisc::sema {

using namespace tir;

namespace {

struct AtomicName {
  const char* name;
  AtomicOp op;
};
const AtomicName kAtomics[] = {{"atomic_add", AtomicOp::add}, {"atomic_sub", AtomicOp::sub},
                               {"atomic_and", AtomicOp::and_}, {"atomic_or", AtomicOp::or_},
                               {"atomic_xor", AtomicOp::xor_}, {"atomic_min", AtomicOp::min},
                               {"atomic_max", AtomicOp::max}, {"atomic_xchg", AtomicOp::xchg},
                               {"atomic_cas", AtomicOp::cas}};

bool atomic_supports(AtomicOp op, ScalarType t) {
  switch (t) {
    case ScalarType::i32:
    case ScalarType::i64:
    case ScalarType::u32:
    case ScalarType::u64: return true;
    case ScalarType::f32: return op == AtomicOp::add || op == AtomicOp::sub || op == AtomicOp::xchg || op == AtomicOp::cas;
    default: return false;
  }
}

}  // namespace

ValuePtr KernelChecker::to_element(ValuePtr v, ScalarType elem, SourceRange where) {
  if (v->error || v->type.elem == elem) return v;
  if (v->kind == ValueKind::Const || (v->type.elem == ScalarType::int_ && is_integer(elem))) {
    return coerce(v, elem, where);
  }
  diags_.emit(DiagnosticKind::StoreTypeMismatch, where,
              {type_name(v->type), "a tensor of " + std::string(ast::scalar_type_name(elem)), ast::scalar_type_name(elem)});
  return error_value(where);
}

std::optional<FlagOperands> KernelChecker::flag_operands(const std::string& fn, const ast::Expr& flag_expr,
                                                         const ast::Expr& value_expr) {
  auto flag = view(flag_expr, fn);
  if (!flag) return std::nullopt;
  if (flag->size) {
    diags_.emit(DiagnosticKind::ExpectedScalarElement, flag_expr.range, {fn});
    return std::nullopt;
  }
  const Param& fp = out_.params[static_cast<std::size_t>(flag->param)];
  if (!is_integer(fp.elem) || (byte_size(fp.elem) != 4 && byte_size(fp.elem) != 8)) {
    diags_.emit(DiagnosticKind::AtomicTypeUnsupported, flag_expr.range,
                {fn, std::string(ast::scalar_type_name(fp.elem)) + " flags (use u32, i32, u64 or i64)"});
    return std::nullopt;
  }
  ValuePtr value = expr(value_expr);
  if (value->error) return std::nullopt;
  if (!value->type.is_scalar()) {
    diags_.emit(DiagnosticKind::ExpectedScalarElement, value_expr.range, {fn});
    return std::nullopt;
  }
  value = coerce(value, fp.elem, value_expr.range);
  if (value->error) return std::nullopt;
  return FlagOperands{*flag, value};
}

// `axis: 0` or `axis: 1`; -1 after a diagnostic.
int KernelChecker::axis_arg(const ast::Expr& a) {
  const int before = diags_.error_count();
  ValuePtr v = expr(a);
  if (diags_.error_count() != before) return -1;
  if (v->kind != ValueKind::Const || !is_integer(v->type.elem) || (v->int_value != 0 && v->int_value != 1)) {
    diags_.emit(DiagnosticKind::BadNamedValue, a.range, {std::string(diags_.source()->slice(a.range)), "axis", "0 (down the columns) or 1 (along the rows)"});
    return -1;
  }
  return static_cast<int>(v->int_value);
}

ValuePtr KernelChecker::call(const ast::Expr& e, bool as_statement, std::vector<StmtPtr>* stmts) {
  const std::string& fn = e.name;
  if (auto f = functions_.find(fn); f != functions_.end()) return inline_call(*f->second, e, as_statement);
  auto want_args = [&](std::size_t n) {
    if (e.args.size() == n) return true;
    diags_.emit(DiagnosticKind::WrongArgumentCount, e.range, {fn, std::to_string(n), std::to_string(e.args.size())});
    return false;
  };
  auto no_value = [&]() {
    if (!as_statement) diags_.emit(DiagnosticKind::NoValue, e.range, {fn});
    return error_value(e.range);
  };

  // ---- statement calls -----------------------------------------------------------------
  if (fn == "store" && named(e, "flag")) return store_flagged(e, as_statement, stmts);
  if (fn == "store" || fn == "put" || fn == "get") {
    const bool is_get = fn == "get";
    if (!check_named(e, {is_get ? "from" : "to"}) || !want_args(2)) return no_value();
    auto dst = view(*e.args[0], fn);
    if (!dst || !plain_view(*dst, e.args[0]->range)) return no_value();
    ValuePtr value;
    ValuePtr to;
    const Param& dp = out_.params[static_cast<std::size_t>(dst->param)];
    if (is_get) {
      auto src = view(*e.args[1], fn);
      if (!src || !plain_view(*src, e.args[1]->range)) return no_value();
      const Param& sp = out_.params[static_cast<std::size_t>(src->param)];
      value = make(ValueKind::Load, view_type(*src, sp.elem), e.range);
      value->view = *src;
      value->rank = rank_arg(e, "from", *src);
    } else {
      value = expr(*e.args[1]);
      to = rank_arg(e, "to", *dst);
    }
    if (value->type.kind == TypeKind::Range || value->type.kind == TypeKind::Void) {
      diags_.emit(DiagnosticKind::TypeMismatch, e.args[1]->range, {type_name(value->type), "a value", ""});
      return no_value();
    }
    value = to_element(value, dp.elem, e.args[1]->range);
    if (value->error) return no_value();
    if (value->type.is_tile() && !same_shape(value->type, view_type(*dst, dp.elem))) {
      diags_.emit(DiagnosticKind::TileShapeMismatch, e.range,
                  {shape_text(value->type), dst->size ? shape_text(view_type(*dst, dp.elem)) : "1"});
      return no_value();
    }
    if (!as_statement) return no_value();
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::Store;
    s->range = e.range;
    s->view = *dst;
    s->value = value;
    s->rank = to;
    stmts->push_back(std::move(s));
    return nullptr;
  }
  if (fn == "signal") {
    if (!check_named(e, {"to", "op", "order", "scope"}) || !want_args(2)) return no_value();
    auto ops = flag_operands(fn, *e.args[0], *e.args[1]);
    if (!ops) return no_value();
    const View* flag = &ops->flag;
    const ValuePtr value = ops->value;
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::Signal;
    s->range = e.range;
    s->view = *flag;
    s->value = value;
    s->rank = rank_arg(e, "to", *flag);
    s->order = order_arg(e, Order::release);
    s->scope = scope_arg(e, Scope::system);
    if (s->order == Order::acquire || s->order == Order::acq_rel) {
      diags_.emit(DiagnosticKind::SignalWithAcquire, named(e, "order")->range, {name(s->order)});
    }
    // To another rank (anything but `to: rank`), only system scope orders anything.
    if (const ast::Expr* to = named(e, "to"); to && s->scope != Scope::system &&
                                                !(to->kind == ast::ExprKind::Name && to->name == "rank")) {
      diags_.emit(DiagnosticKind::NarrowScopeToPeer, named(e, "scope")->range, {name(s->scope)});
    }
    if (const ast::Expr* op = named(e, "op")) {
      if (op->kind == ast::ExprKind::Name && (op->name == "set" || op->name == "add")) {
        s->signal_op = op->name == "add" ? SignalOp::add : SignalOp::set;
      } else {
        diags_.emit(DiagnosticKind::BadNamedValue, op->range,
                    {std::string(diags_.source()->slice(op->range)), "signal op", "set or add"});
      }
    }
    if (!as_statement) return no_value();
    stmts->push_back(std::move(s));
    return nullptr;
  }
  if (fn == "fence") {
    if (!check_named(e, {"scope"}) || !want_args(0)) return no_value();
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::Fence;
    s->range = e.range;
    s->order = Order::acq_rel;
    s->scope = scope_arg(e, Scope::system);
    if (!as_statement) return no_value();
    stmts->push_back(std::move(s));
    return nullptr;
  }
  if (fn == "wait") {
    if (!check_named(e, {"order", "scope", "from"}) || !want_args(1)) return no_value();
    if (const ast::Expr* f = named(e, "from")) {
      diags_.emit(DiagnosticKind::WaitOnRemote, f->range);
      return no_value();
    }
    const ast::Expr& c = *e.args[0];
    static const std::pair<TokenKind, Cmp> cmps[] = {{TokenKind::EqEq, Cmp::eq}, {TokenKind::NotEq, Cmp::ne},
                                                     {TokenKind::Greater, Cmp::gt}, {TokenKind::GreaterEq, Cmp::ge},
                                                     {TokenKind::Less, Cmp::lt}, {TokenKind::LessEq, Cmp::le}};
    std::optional<Cmp> cmp;
    if (c.kind == ast::ExprKind::Binary) {
      for (auto [tk, cm] : cmps) {
        if (c.op == tk) cmp = cm;
      }
    }
    if (!cmp || c.args[0]->kind != ast::ExprKind::Index) {
      diags_.emit(DiagnosticKind::WaitNeedsComparison, c.range);
      return no_value();
    }
    auto ops = flag_operands(fn, *c.args[0], *c.args[1]);
    if (!ops) return no_value();
    const View* flag = &ops->flag;
    const ValuePtr value = ops->value;
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::Wait;
    s->range = e.range;
    s->view = *flag;
    s->cmp = *cmp;
    s->value = value;
    s->order = order_arg(e, Order::acquire);
    s->scope = scope_arg(e, Scope::system);
    if (s->order == Order::release || s->order == Order::acq_rel) {
      diags_.emit(DiagnosticKind::WaitWithRelease, named(e, "order")->range, {name(s->order)});
    }
    if (!as_statement) return no_value();
    stmts->push_back(std::move(s));
    return nullptr;
  }

  // ---- value calls -----------------------------------------------------------------------
  ValuePtr result;
  if (fn == "load" && named(e, "flag")) return load_flagged(e);
  if (fn == "load") {
    if (!check_named(e, {"from", "other"}) || !want_args(1)) return error_value(e.range);
    auto v = view(*e.args[0], fn);
    if (!v || !plain_view(*v, e.args[0]->range)) return error_value(e.range);
    const Param& p = out_.params[static_cast<std::size_t>(v->param)];
    result = make(ValueKind::Load, view_type(*v, p.elem), e.range);
    result->view = *v;
    result->rank = rank_arg(e, "from", *v);
    if (const ast::Expr* other = named(e, "other")) {
      // What the tile's masked elements read (default 0), e.g. the identity of a max.
      if (!v->size) {
        diags_.emit(DiagnosticKind::BadOtherValue, other->range,
                    {"applies to tile views such as x[i] with i a range; this load reads one element"});
        return error_value(e.range);
      }
      ValuePtr o = expr(*other);
      if (o->error) return error_value(e.range);
      if (o->type.is_tile()) {
        diags_.emit(DiagnosticKind::BadOtherValue, other->range, {"must be a scalar, not " + type_name(o->type)});
        return error_value(e.range);
      }
      o = to_element(o, p.elem, other->range);
      if (o->error) return error_value(e.range);
      result->operands.push_back(std::move(o));
    }
  } else if (fn == "fill" || fn == "zeros" || fn == "ones") {
    // fill<T>(v, B), zeros<T>(B), ones<T>(B): a 1-D tile; with two sizes (R, C) a 2-D one.
    const bool is_fill = fn == "fill";
    const std::size_t first = is_fill ? 1 : 0;
    const bool two_d = e.args.size() == first + 2;
    if (!check_named(e, {}) || (!two_d && !want_args(first + 1))) return error_value(e.range);
    if (!e.type_arg) {
      diags_.emit(DiagnosticKind::ExpectedType, e.range, {"'" + fn + "(' without <type>"});
      return error_value(e.range);
    }
    const ScalarType t = resolve(*e.type_arg);
    std::vector<std::int64_t> sizes;
    for (std::size_t a = first; a < e.args.size(); ++a) {
      const ast::Expr& size_expr = *e.args[a];
      const int before = diags_.error_count();
      ValuePtr size_v = expr(size_expr);
      if (diags_.error_count() != before) return error_value(e.range);
      if (size_v->kind != ValueKind::Const) {
        diags_.emit(DiagnosticKind::TileSizeNotConstant, size_expr.range, {"'" + std::string(diags_.source()->slice(size_expr.range)) + "'"});
        return error_value(e.range);
      }
      const std::int64_t n = size_v->int_value;
      const bool ok = two_d ? n >= 16 && n <= 256 && (n & (n - 1)) == 0 : n >= 32 && n <= 16384 && (n & (n - 1)) == 0;
      if (!ok) {
        diags_.emit(DiagnosticKind::TileSizeInvalid, size_expr.range,
                    {std::to_string(n), two_d ? "2-D tiles' sides must be powers of two from 16 to 256"
                                              : "1-D tiles must be a power of two from 32 to 16384 elements"});
        return error_value(e.range);
      }
      sizes.push_back(n);
    }
    if (two_d && sizes[0] * sizes[1] > 32768) {
      diags_.emit(DiagnosticKind::TileSizeInvalid, e.range,
                  {std::to_string(sizes[0]) + " x " + std::to_string(sizes[1]), "2-D tiles hold at most 32768 elements"});
      return error_value(e.range);
    }
    ValuePtr value = is_fill ? expr(*e.args[0]) : make(ValueKind::Const, Type::scalar(t), e.range);
    if (!is_fill) {
      value->int_value = fn == "ones";
      value->float_value = fn == "ones";
    }
    if (!value->type.is_scalar()) {
      diags_.emit(DiagnosticKind::ExpectedScalarElement, e.args[0]->range, {fn});
      return error_value(e.range);
    }
    value = coerce(value, t, e.range);
    result = make(ValueKind::Fill, two_d ? Type::tile2d(t, sizes[0], sizes[1]) : Type::tile(t, sizes[0]), e.range);
    result->operands.push_back(value);
  } else if (fn == "matmul") {
    // matmul(A[m, :], B[:, n], acc: f32): the [rows(m), cols(n)] product over the
    // shared extent K, accumulated in `acc` (f32 by default). The second operand may
    // also be a row panel Bt[n, :] of an [N, K] tensor (B transposed): [rows(m), rows(n)].
    if (!check_named(e, {"acc"}) || !want_args(2)) return error_value(e.range);
    auto a = view(*e.args[0], fn, true);
    auto b = a ? view(*e.args[1], fn) : std::nullopt;
    if (!a || !b) return error_value(e.range);
    if (a->slice_dim != 1 || b->slice_dim < 0) {
      diags_.emit(DiagnosticKind::ExpectedView, a->slice_dim != 1 ? e.args[0]->range : e.args[1]->range,
                  {"matmul (its operands are panels: matmul(A[m, :], B[:, n]) or, B transposed, "
                   "matmul(A[m, :], Bt[n, :]))"});
      return error_value(e.range);
    }
    const std::int64_t cols = b->slice_dim == 0 ? b->size : b->rows;
    if (!same_value(*a->full, *b->full)) {
      diags_.emit(DiagnosticKind::TileShapeMismatch, e.range,
                  {"K = " + extent_text(*a->full), "K = " + extent_text(*b->full)});
      return error_value(e.range);
    }
    const ScalarType ta = out_.params[static_cast<std::size_t>(a->param)].elem;
    const ScalarType tb = out_.params[static_cast<std::size_t>(b->param)].elem;
    if (!is_float(ta) || ta != tb) {
      diags_.emit(DiagnosticKind::TypeMismatch, e.range,
                  {ast::scalar_type_name(ta), ast::scalar_type_name(tb), " (matmul needs two float operands of one type)"});
      return error_value(e.range);
    }
    ScalarType acc = ScalarType::f32;
    if (const ast::Expr* at = named(e, "acc")) {
      const char* names[] = {"f32", "f16", "bf16"};
      bool ok = false;
      for (const char* n : names) ok |= at->kind == ast::ExprKind::Name && at->name == n;
      // Type names are keywords, so `acc: f32` parses as a cast-less type token only
      // inside `as`; accept the spelled-out name here, or a type parameter.
      const Entity* tp = at->kind == ast::ExprKind::Name ? lookup(at->name) : nullptr;
      if (tp && tp->kind == EntityKind::Type && is_float(tp->type)) {
        ok = true;
        acc = tp->type;
      } else if (ok) {
        acc = at->name == "f32" ? ScalarType::f32 : at->name == "f16" ? ScalarType::f16 : ScalarType::bf16;
      }
      if (!ok) {
        diags_.emit(DiagnosticKind::BadNamedValue, at->range,
                    {std::string(diags_.source()->slice(at->range)), "accumulator type", "f32"});
        return error_value(e.range);
      }
    }
    if (a->rows * cols > 32768) {
      diags_.emit(DiagnosticKind::TileSizeInvalid, e.range,
                  {std::to_string(a->rows) + " x " + std::to_string(cols), "a matmul tile holds at most 32768 elements"});
      return error_value(e.range);
    }
    result = make(ValueKind::Matmul, Type::tile2d(acc, a->rows, cols), e.range);
    result->view = *a;
    result->view_b = *b;
  } else if (fn == "index") {
    if (!check_named(e, {}) || !want_args(1)) return error_value(e.range);
    ValuePtr r = expr(*e.args[0]);
    if (r->type.kind != TypeKind::Range) {
      diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range, {type_name(r->type), "a range", " (index(i) takes a blocks() loop variable)"});
      return error_value(e.range);
    }
    result = make(ValueKind::Iota, Type::tile(ScalarType::int_, r->type.size), e.range);
    result->operands.push_back(r);
  } else if (fn == "start" || fn == "extent") {
    // The first global index of a range and how many of its B indices are valid.
    if (!check_named(e, {}) || !want_args(1)) return error_value(e.range);
    ValuePtr r = expr(*e.args[0]);
    if (r->error) return error_value(e.range);
    if (r->type.kind != TypeKind::Range) {
      diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range,
                  {type_name(r->type), "a range", " (" + fn + "(i) takes a blocks() or tiles() loop variable)"});
      return error_value(e.range);
    }
    result = make(fn == "start" ? ValueKind::RangeStart : ValueKind::RangeExtent, Type::scalar(ScalarType::int_), e.range);
    result->operands.push_back(r);
  } else if ((fn == "sum" || fn == "max" || fn == "min") && e.args.size() == 1) {
    // sum(t): the tile to a scalar; sum(t, axis: 0 | 1): a 2-D tile along one axis, to
    // the 1-D tile of the other (axis 0 sums each column, axis 1 each row).
    if (!check_named(e, {"axis"})) return error_value(e.range);
    ValuePtr t = expr(*e.args[0]);
    if (t->error) return error_value(e.range);
    if (!t->type.is_tile() || t->type.elem == ScalarType::boolean) {
      diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range, {type_name(t->type), "a numeric tile", " (reductions work on tiles)"});
      return error_value(e.range);
    }
    int axis = -1;
    if (const ast::Expr* ax = named(e, "axis")) {
      if (!(axis = axis_arg(*ax), axis >= 0)) return error_value(e.range);
      if (!t->type.rows) {
        diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range,
                    {type_name(t->type), "a 2-D tile", " (a reduction along an axis takes a 2-D tile; sum(t) reduces a 1-D one)"});
        return error_value(e.range);
      }
      const std::int64_t kept = axis == 0 ? t->type.size : t->type.rows;
      if (kept < 32) {
        diags_.emit(DiagnosticKind::TileSizeInvalid, e.range,
                    {std::to_string(kept), "the result is a 1-D tile, and 1-D tiles are powers of two from 32 to 16384 elements"});
        return error_value(e.range);
      }
      result = make(ValueKind::Reduce, Type::tile(t->type.elem, kept), e.range);
    } else {
      result = make(ValueKind::Reduce, Type::scalar(t->type.elem), e.range);
    }
    result->axis = axis;
    result->reduce_op = fn == "sum" ? ReduceOp::sum : fn == "max" ? ReduceOp::max : ReduceOp::min;
    result->operands.push_back(t);
  } else if (fn == "broadcast") {
    // broadcast(t, rows: R): R rows, each the 1-D tile t; broadcast(t, cols: C): C
    // columns, each t (element [i, j] is t[i]).
    if (!check_named(e, {"rows", "cols"}) || !want_args(1)) return error_value(e.range);
    const ast::Expr* rows = named(e, "rows");
    const ast::Expr* cols = named(e, "cols");
    if (!rows == !cols) {
      diags_.emit(DiagnosticKind::WrongArgumentCount, e.range, {"broadcast(t, rows: R) or broadcast(t, cols: C)", "1 named", rows ? "2" : "0"});
      return error_value(e.range);
    }
    ValuePtr t = expr(*e.args[0]);
    if (t->error) return error_value(e.range);
    if (!t->type.is_tile() || t->type.rows) {
      diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range, {type_name(t->type), "a 1-D tile", " (broadcast repeats a 1-D tile)"});
      return error_value(e.range);
    }
    const ast::Expr& count_expr = rows ? *rows : *cols;
    const int before = diags_.error_count();
    ValuePtr count = expr(count_expr);
    if (diags_.error_count() != before) return error_value(e.range);
    if (count->kind != ValueKind::Const) {
      diags_.emit(DiagnosticKind::TileSizeNotConstant, count_expr.range, {"'" + std::string(diags_.source()->slice(count_expr.range)) + "'"});
      return error_value(e.range);
    }
    const std::int64_t n = count->int_value;
    const std::int64_t r = rows ? n : t->type.size, c = rows ? t->type.size : n;
    for (std::int64_t side : {r, c}) {
      if (!power_of_two(side) || side < 16 || side > 256) {
        diags_.emit(DiagnosticKind::TileSizeInvalid, side == n ? count_expr.range : e.args[0]->range,
                    {std::to_string(side), "2-D tile sides must be powers of two from 16 to 256"});
        return error_value(e.range);
      }
    }
    if (r * c > 32768) {
      diags_.emit(DiagnosticKind::TileSizeInvalid, e.range,
                  {std::to_string(r) + " x " + std::to_string(c), "a 2-D tile holds at most 32768 elements"});
      return error_value(e.range);
    }
    result = make(ValueKind::Broadcast, Type::tile2d(t->type.elem, r, c), e.range);
    result->axis = rows ? 0 : 1;
    result->operands.push_back(t);
  } else if (fn == "select") {
    // select(c, a, b): a where c, else b; elementwise where any of them is a tile.
    if (!check_named(e, {}) || !want_args(3)) return error_value(e.range);
    ValuePtr c = expr(*e.args[0]), a = expr(*e.args[1]), b = expr(*e.args[2]);
    if (c->error || a->error || b->error) return error_value(e.range);
    if (c->type.kind == TypeKind::Range || c->type.elem != ScalarType::boolean) {
      diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range,
                  {type_name(c->type), "bool", " (select's condition is a bool or a tile of bools)"});
      return error_value(e.range);
    }
    for (const ValuePtr& x : {a, b}) {
      if (x->type.kind == TypeKind::Range) {
        diags_.emit(DiagnosticKind::TypeMismatch, e.range, {type_name(x->type), "a scalar or tile", " (select chooses between values)"});
        return error_value(e.range);
      }
    }
    if (a->type.elem != b->type.elem) {
      if (is_literal(b) || (b->type.elem == ScalarType::int_ && is_integer(a->type.elem))) {
        b = coerce(b, a->type.elem, e.args[2]->range);
      } else if (is_literal(a) || (a->type.elem == ScalarType::int_ && is_integer(b->type.elem))) {
        a = coerce(a, b->type.elem, e.args[1]->range);
      } else {
        diags_.emit(DiagnosticKind::TypeMismatch, e.range, {type_name(a->type), type_name(b->type), " (convert one side with 'as')"});
        return error_value(e.range);
      }
      if (a->error || b->error) return error_value(e.range);
    }
    Type t = a->type;
    for (const ValuePtr& x : {c, a, b}) {
      if (!x->type.is_tile()) continue;
      if (t.is_tile() && !same_shape(t, x->type)) {
        diags_.emit(DiagnosticKind::TileShapeMismatch, e.range, {shape_text(t), shape_text(x->type)});
        return error_value(e.range);
      }
      t = Type{TypeKind::Tile, a->type.elem, x->type.size, x->type.rows};
    }
    t.elem = a->type.elem;
    result = make(ValueKind::Select, t, e.range);
    result->operands = {c, a, b};
  } else if (fn == "max" || fn == "min") {
    if (!check_named(e, {}) || !want_args(2)) return error_value(e.range);
    ValuePtr a = expr(*e.args[0]), b = expr(*e.args[1]);
    if (a->type.elem != b->type.elem) {
      if (b->kind == ValueKind::Const) b = coerce(b, a->type.elem, e.args[1]->range);
      else a = coerce(a, b->type.elem, e.args[0]->range);
    }
    if (a->type.is_tile() && b->type.is_tile() && !same_shape(a->type, b->type)) {
      diags_.emit(DiagnosticKind::TileShapeMismatch, e.range, {shape_text(a->type), shape_text(b->type)});
      return error_value(e.range);
    }
    result = make(ValueKind::Binary, a->type.is_tile() ? a->type : b->type, e.range);
    result->binop = fn == "max" ? BinOp::max : BinOp::min;
    result->operands = {a, b};
  } else if (fn == "abs" || fn == "sqrt" || fn == "exp" || fn == "log") {
    if (!check_named(e, {}) || !want_args(1)) return error_value(e.range);
    ValuePtr a = expr(*e.args[0]);
    if (a->type.elem == ScalarType::boolean || (fn != "abs" && !is_float(a->type.elem))) {
      diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range, {type_name(a->type), fn == "abs" ? "a number" : "a float", ""});
      return error_value(e.range);
    }
    result = make(ValueKind::Unary, a->type, e.range);
    result->unop = fn == "abs" ? UnOp::abs : fn == "sqrt" ? UnOp::sqrt : fn == "exp" ? UnOp::exp : UnOp::log;
    result->operands.push_back(a);
  } else if (fn == "gathered") {
    // gathered(A) alone, not indexed as a matmul's first operand.
    const std::string what = e.args.size() == 1 ? std::string(diags_.source()->slice(e.args[0]->range)) : "A";
    diags_.emit(DiagnosticKind::GatheredNotAPanel, e.range, {what});
    return error_value(e.range);
  } else {
    const AtomicName* atomic = nullptr;
    for (const AtomicName& a : kAtomics) {
      if (fn == a.name) atomic = &a;
    }
    if (!atomic) {
      diags_.emit(DiagnosticKind::UnknownFunction, e.name_range, {fn});
      for (const auto& a : e.args) expr(*a);  // still report errors inside
      return error_value(e.range);
    }
    const std::size_t nargs = atomic->op == AtomicOp::cas ? 3 : 2;
    if (!check_named(e, {"to", "order", "scope"}) || !want_args(nargs)) return error_value(e.range);
    auto v = view(*e.args[0], fn);
    if (!v || !plain_view(*v, e.args[0]->range)) return error_value(e.range);
    const Param& p = out_.params[static_cast<std::size_t>(v->param)];
    // On a 2-D tile, add and sub only, as one-way reductions: nothing is read back
    // (`red` on the GPU), so the call is a statement and cannot acquire.
    if (v->rows && atomic->op != AtomicOp::add && atomic->op != AtomicOp::sub) {
      diags_.emit(DiagnosticKind::AtomicTypeUnsupported, e.args[0]->range,
                  {fn, "2-D tiles (atomic_add and atomic_sub do; use a 1-D view)"});
      return error_value(e.range);
    }
    if (!atomic_supports(atomic->op, p.elem)) {
      diags_.emit(DiagnosticKind::AtomicTypeUnsupported, e.args[0]->range, {fn, ast::scalar_type_name(p.elem)});
      return error_value(e.range);
    }
    if (v->rows && !as_statement) {
      diags_.emit(DiagnosticKind::TileAtomicHasNoValue, e.range, {fn});
      return error_value(e.range);
    }
    const Type view_t = view_type(*v, p.elem);
    result = make(ValueKind::Atomic, view_t, e.range);
    result->atomic_op = atomic->op;
    result->view = *v;
    result->rank = rank_arg(e, "to", *v);
    // A 2-D tile atomic is a one-way reduction: relaxed unless an order is given (the
    // acq_rel of other atomics is not one it can take).
    result->order = order_arg(e, v->rows ? Order::relaxed : Order::acq_rel);
    result->scope = scope_arg(e, Scope::system);
    if (v->rows && result->order != Order::relaxed && result->order != Order::release) {
      const ast::Expr* o = named(e, "order");
      diags_.emit(DiagnosticKind::TileAtomicOrder, o ? o->range : e.range, {fn, name(result->order)});
      return error_value(e.range);
    }
    for (std::size_t i = 1; i < nargs; ++i) {
      ValuePtr operand = expr(*e.args[i]);
      if (operand->type.is_tile() && !same_shape(operand->type, view_t)) {
        diags_.emit(DiagnosticKind::TileShapeMismatch, e.args[i]->range,
                    {shape_text(operand->type), v->size ? shape_text(view_t) : "1"});
        return error_value(e.range);
      }
      operand = to_element(operand, p.elem, e.args[i]->range);
      if (operand->error) return operand;
      result->operands.push_back(operand);
    }
  }
  if (as_statement) {
    // A value computed as a statement: an atomic (kept for its effect) or a pure value
    // (kept, but it has no effect).
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::Eval;
    s->range = e.range;
    s->value = result;
    stmts->push_back(std::move(s));
    return nullptr;
  }
  return result;
}

}  // namespace irisc::sema
