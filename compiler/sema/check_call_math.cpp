// Built-in arithmetic: reductions (sum, max, min), elementwise max and min, abs, sqrt,
// exp, log.
#include "compiler/sema/sema_state.hpp"

namespace irisc::sema {

using namespace tir;

// sum(t), max(t), min(t): the tile to a scalar; with axis: 0 | 1, a 2-D tile along one axis.
KernelChecker::Called KernelChecker::builtin_reduce(const CallSite& site) {
  const ast::Expr& e = site.e;
  if (e.args.size() != 1) return unknown_function(site);
  const std::string& fn = e.name;
  ValuePtr result;
  // sum(t): the tile to a scalar; sum(t, axis: 0 | 1): a 2-D tile along one axis, to
  // the 1-D tile of the other (axis 0 sums each column, axis 1 each row).
  if (!check_named(e, {"axis"})) return {error_value(e.range), true};
  ValuePtr t = expr(*e.args[0]);
  if (t->error) return {error_value(e.range), true};
  if (!t->type.is_tile() || t->type.elem == ScalarType::boolean) {
    diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range, {type_name(t->type), "a numeric tile", " (reductions work on tiles)"});
    return {error_value(e.range), true};
  }
  int axis = -1;
  if (const ast::Expr* ax = named(e, "axis")) {
    if (!(axis = axis_arg(*ax), axis >= 0)) return {error_value(e.range), true};
    if (!t->type.rows) {
      diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range,
                  {type_name(t->type), "a 2-D tile", " (a reduction along an axis takes a 2-D tile; sum(t) reduces a 1-D one)"});
      return {error_value(e.range), true};
    }
    const std::int64_t kept = axis == 0 ? t->type.size : t->type.rows;
    if (kept < 32) {
      diags_.emit(DiagnosticKind::TileSizeInvalid, e.range,
                  {std::to_string(kept), "the result is a 1-D tile, and 1-D tiles are powers of two from 32 to 16384 elements"});
      return {error_value(e.range), true};
    }
    result = make(ValueKind::Reduce, Type::tile(t->type.elem, kept), e.range);
  } else {
    result = make(ValueKind::Reduce, Type::scalar(t->type.elem), e.range);
  }
  result->axis = axis;
  result->reduce_op = fn == "sum" ? ReduceOp::sum : fn == "max" ? ReduceOp::max : ReduceOp::min;
  result->operands.push_back(t);
  return {result, false};
}

// max(a, b), min(a, b) elementwise; with one argument, a reduction.
KernelChecker::Called KernelChecker::builtin_max_min(const CallSite& site) {
  const ast::Expr& e = site.e;
  const std::string& fn = e.name;
  ValuePtr result;
  if (e.args.size() == 1) return builtin_reduce(site);
  if (!check_named(e, {}) || !want_args(site, 2)) return {error_value(e.range), true};
  ValuePtr a = expr(*e.args[0]), b = expr(*e.args[1]);
  if (a->type.elem != b->type.elem) {
    if (b->kind == ValueKind::Const) b = coerce(b, a->type.elem, e.args[1]->range);
    else a = coerce(a, b->type.elem, e.args[0]->range);
  }
  if (a->type.is_tile() && b->type.is_tile() && !same_shape(a->type, b->type)) {
    diags_.emit(DiagnosticKind::TileShapeMismatch, e.range, {shape_text(a->type), shape_text(b->type)});
    return {error_value(e.range), true};
  }
  result = make(ValueKind::Binary, a->type.is_tile() ? a->type : b->type, e.range);
  result->binop = fn == "max" ? BinOp::max : BinOp::min;
  result->operands = {a, b};
  return {result, false};
}

// abs, sqrt, exp, log, elementwise.
KernelChecker::Called KernelChecker::builtin_unary(const CallSite& site) {
  const ast::Expr& e = site.e;
  const std::string& fn = e.name;
  ValuePtr result;
  if (!check_named(e, {}) || !want_args(site, 1)) return {error_value(e.range), true};
  ValuePtr a = expr(*e.args[0]);
  if (a->type.elem == ScalarType::boolean || (fn != "abs" && !is_float(a->type.elem))) {
    diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range, {type_name(a->type), fn == "abs" ? "a number" : "a float", ""});
    return {error_value(e.range), true};
  }
  result = make(ValueKind::Unary, a->type, e.range);
  result->unop = fn == "abs" ? UnOp::abs : fn == "sqrt" ? UnOp::sqrt : fn == "exp" ? UnOp::exp : UnOp::log;
  result->operands.push_back(a);
  return {result, false};
}

}  // namespace irisc::sema
