// Built-in calls on tensors: store, put, get, load, and the atomics.
#include "compiler/sema/sema_state.hpp"

namespace irisc::sema {

using namespace tir;

namespace {

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

// store(view, v [, to: r]), put (the same), get(dst, src, from: r); store with `flag:` is
// a data-and-flag store (check_flagged.cpp).
KernelChecker::Called KernelChecker::builtin_store(const CallSite& site) {
  const ast::Expr& e = site.e;
  const std::string& fn = e.name;
  const bool as_statement = site.as_statement;
  std::vector<StmtPtr>* stmts = site.stmts;
  if (fn == "store" && named(e, "flag")) return {store_flagged(e, as_statement, stmts), true};
  const bool is_get = fn == "get";
  if (!check_named(e, {is_get ? "from" : "to"}) || !want_args(site, 2)) return {no_value(site), true};
  auto dst = view(*e.args[0], fn);
  if (!dst || !plain_view(*dst, e.args[0]->range)) return {no_value(site), true};
  ValuePtr value;
  ValuePtr to;
  const Param& dp = out_.params[static_cast<std::size_t>(dst->param)];
  if (is_get) {
    auto src = view(*e.args[1], fn);
    if (!src || !plain_view(*src, e.args[1]->range)) return {no_value(site), true};
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
    return {no_value(site), true};
  }
  value = to_element(value, dp.elem, e.args[1]->range);
  if (value->error) return {no_value(site), true};
  if (value->type.is_tile() && !same_shape(value->type, view_type(*dst, dp.elem))) {
    diags_.emit(DiagnosticKind::TileShapeMismatch, e.range,
                {shape_text(value->type), dst->size ? shape_text(view_type(*dst, dp.elem)) : "1"});
    return {no_value(site), true};
  }
  if (!as_statement) return {no_value(site), true};
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::Store;
  s->range = e.range;
  s->view = *dst;
  s->value = value;
  s->rank = to;
  stmts->push_back(std::move(s));
  return {nullptr, true};
}

// load(view [, from: r] [, other: v]); with `flag:` a data-and-flag load (check_flagged.cpp).
KernelChecker::Called KernelChecker::builtin_load(const CallSite& site) {
  const ast::Expr& e = site.e;
  const std::string& fn = e.name;
  ValuePtr result;
  // Not final: as a statement it is kept (an Eval), since it waits for its words.
  if (named(e, "flag")) return {load_flagged(e), false};
  if (!check_named(e, {"from", "other"}) || !want_args(site, 1)) return {error_value(e.range), true};
  auto v = view(*e.args[0], fn);
  if (!v || !plain_view(*v, e.args[0]->range)) return {error_value(e.range), true};
  const Param& p = out_.params[static_cast<std::size_t>(v->param)];
  result = make(ValueKind::Load, view_type(*v, p.elem), e.range);
  result->view = *v;
  result->rank = rank_arg(e, "from", *v);
  if (const ast::Expr* other = named(e, "other")) {
    // What the tile's masked elements read (default 0), e.g. the identity of a max.
    if (!v->size) {
      diags_.emit(DiagnosticKind::BadOtherValue, other->range,
                  {"applies to tile views such as x[i] with i a range; this load reads one element"});
      return {error_value(e.range), true};
    }
    ValuePtr o = expr(*other);
    if (o->error) return {error_value(e.range), true};
    if (o->type.is_tile()) {
      diags_.emit(DiagnosticKind::BadOtherValue, other->range, {"must be a scalar, not " + type_name(o->type)});
      return {error_value(e.range), true};
    }
    o = to_element(o, p.elem, other->range);
    if (o->error) return {error_value(e.range), true};
    result->operands.push_back(std::move(o));
  }
  return {result, false};
}

// atomic_add ... atomic_cas(view, v [, compare], to:, order:, scope:): old values, or on a 2-D
// tile a one-way reduction (a statement).
KernelChecker::Called KernelChecker::builtin_atomic(const CallSite& site) {
  const ast::Expr& e = site.e;
  const std::string& fn = e.name;
  const bool as_statement = site.as_statement;
  ValuePtr result;
  const AtomicOp op = static_cast<AtomicOp>(site.variant);
  const std::size_t nargs = op == AtomicOp::cas ? 3 : 2;
  if (!check_named(e, {"to", "order", "scope"}) || !want_args(site, nargs)) return {error_value(e.range), true};
  auto v = view(*e.args[0], fn);
  if (!v || !plain_view(*v, e.args[0]->range)) return {error_value(e.range), true};
  const Param& p = out_.params[static_cast<std::size_t>(v->param)];
  // On a 2-D tile, add and sub only, as one-way reductions: nothing is read back
  // (`red` on the GPU), so the call is a statement and cannot acquire.
  if (v->rows && op != AtomicOp::add && op != AtomicOp::sub) {
    diags_.emit(DiagnosticKind::AtomicTypeUnsupported, e.args[0]->range,
                {fn, "2-D tiles (atomic_add and atomic_sub do; use a 1-D view)"});
    return {error_value(e.range), true};
  }
  if (!atomic_supports(op, p.elem)) {
    diags_.emit(DiagnosticKind::AtomicTypeUnsupported, e.args[0]->range, {fn, ast::scalar_type_name(p.elem)});
    return {error_value(e.range), true};
  }
  if (v->rows && !as_statement) {
    diags_.emit(DiagnosticKind::TileAtomicHasNoValue, e.range, {fn});
    return {error_value(e.range), true};
  }
  const Type view_t = view_type(*v, p.elem);
  result = make(ValueKind::Atomic, view_t, e.range);
  result->atomic_op = op;
  result->view = *v;
  result->rank = rank_arg(e, "to", *v);
  // A 2-D tile atomic is a one-way reduction: relaxed unless an order is given (the
  // acq_rel of other atomics is not one it can take).
  result->order = order_arg(e, v->rows ? Order::relaxed : Order::acq_rel);
  result->scope = scope_arg(e, Scope::system);
  if (v->rows && result->order != Order::relaxed && result->order != Order::release) {
    const ast::Expr* o = named(e, "order");
    diags_.emit(DiagnosticKind::TileAtomicOrder, o ? o->range : e.range, {fn, name(result->order)});
    return {error_value(e.range), true};
  }
  for (std::size_t i = 1; i < nargs; ++i) {
    ValuePtr operand = expr(*e.args[i]);
    if (operand->type.is_tile() && !same_shape(operand->type, view_t)) {
      diags_.emit(DiagnosticKind::TileShapeMismatch, e.args[i]->range,
                  {shape_text(operand->type), v->size ? shape_text(view_t) : "1"});
      return {error_value(e.range), true};
    }
    operand = to_element(operand, p.elem, e.args[i]->range);
    if (operand->error) return {operand, true};
    result->operands.push_back(operand);
  }
  return {result, false};
}

}  // namespace irisc::sema
