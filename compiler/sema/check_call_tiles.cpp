// Built-in calls that make and shape tiles: fill, zeros, ones, index, start, extent,
// broadcast, select (and gathered, which is no value of its own).
#include "compiler/sema/sema_state.hpp"

namespace irisc::sema {

using namespace tir;

// fill<T>(v, B), zeros<T>(B), ones<T>(B): a 1-D tile; with two sizes (R, C) a 2-D one.
KernelChecker::Called KernelChecker::builtin_fill(const CallSite& site) {
  const ast::Expr& e = site.e;
  const std::string& fn = e.name;
  ValuePtr result;
  // fill<T>(v, B), zeros<T>(B), ones<T>(B): a 1-D tile; with two sizes (R, C) a 2-D one.
  const bool is_fill = fn == "fill";
  const std::size_t first = is_fill ? 1 : 0;
  const bool two_d = e.args.size() == first + 2;
  if (!check_named(e, {}) || (!two_d && !want_args(site, first + 1))) return {error_value(e.range), true};
  if (!e.type_arg) {
    diags_.emit(DiagnosticKind::ExpectedType, e.range, {"'" + fn + "(' without <type>"});
    return {error_value(e.range), true};
  }
  const ScalarType t = resolve(*e.type_arg);
  std::vector<std::int64_t> sizes;
  for (std::size_t a = first; a < e.args.size(); ++a) {
    const ast::Expr& size_expr = *e.args[a];
    const int before = diags_.error_count();
    ValuePtr size_v = expr(size_expr);
    if (diags_.error_count() != before) return {error_value(e.range), true};
    if (size_v->kind != ValueKind::Const) {
      diags_.emit(DiagnosticKind::TileSizeNotConstant, size_expr.range, {"'" + std::string(diags_.source()->slice(size_expr.range)) + "'"});
      return {error_value(e.range), true};
    }
    const std::int64_t n = size_v->int_value;
    const bool ok = two_d ? n >= 16 && n <= 256 && (n & (n - 1)) == 0 : n >= 32 && n <= 16384 && (n & (n - 1)) == 0;
    if (!ok) {
      diags_.emit(DiagnosticKind::TileSizeInvalid, size_expr.range,
                  {std::to_string(n), two_d ? "2-D tiles' sides must be powers of two from 16 to 256"
                                            : "1-D tiles must be a power of two from 32 to 16384 elements"});
      return {error_value(e.range), true};
    }
    sizes.push_back(n);
  }
  if (two_d && sizes[0] * sizes[1] > 32768) {
    diags_.emit(DiagnosticKind::TileSizeInvalid, e.range,
                {std::to_string(sizes[0]) + " x " + std::to_string(sizes[1]), "2-D tiles hold at most 32768 elements"});
    return {error_value(e.range), true};
  }
  ValuePtr value = is_fill ? expr(*e.args[0]) : make(ValueKind::Const, Type::scalar(t), e.range);
  if (!is_fill) {
    value->int_value = fn == "ones";
    value->float_value = fn == "ones";
  }
  if (!value->type.is_scalar()) {
    diags_.emit(DiagnosticKind::ExpectedScalarElement, e.args[0]->range, {fn});
    return {error_value(e.range), true};
  }
  value = coerce(value, t, e.range);
  result = make(ValueKind::Fill, two_d ? Type::tile2d(t, sizes[0], sizes[1]) : Type::tile(t, sizes[0]), e.range);
  result->operands.push_back(value);
  return {result, false};
}

// index(i): the tile of range i's global indices.
KernelChecker::Called KernelChecker::builtin_index(const CallSite& site) {
  const ast::Expr& e = site.e;
  ValuePtr result;
  if (!check_named(e, {}) || !want_args(site, 1)) return {error_value(e.range), true};
  ValuePtr r = expr(*e.args[0]);
  if (r->type.kind != TypeKind::Range) {
    diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range, {type_name(r->type), "a range", " (index(i) takes a blocks() loop variable)"});
    return {error_value(e.range), true};
  }
  result = make(ValueKind::Iota, Type::tile(ScalarType::int_, r->type.size), e.range);
  result->operands.push_back(r);
  return {result, false};
}

// start(i), extent(i): the first global index of a range and how many of its B indices are valid.
KernelChecker::Called KernelChecker::builtin_range_bound(const CallSite& site) {
  const ast::Expr& e = site.e;
  const std::string& fn = e.name;
  ValuePtr result;
  // The first global index of a range and how many of its B indices are valid.
  if (!check_named(e, {}) || !want_args(site, 1)) return {error_value(e.range), true};
  ValuePtr r = expr(*e.args[0]);
  if (r->error) return {error_value(e.range), true};
  if (r->type.kind != TypeKind::Range) {
    diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range,
                {type_name(r->type), "a range", " (" + fn + "(i) takes a blocks() or tiles() loop variable)"});
    return {error_value(e.range), true};
  }
  result = make(fn == "start" ? ValueKind::RangeStart : ValueKind::RangeExtent, Type::scalar(ScalarType::int_), e.range);
  result->operands.push_back(r);
  return {result, false};
}

// broadcast(t, rows: R), broadcast(t, cols: C): a 1-D tile repeated into a 2-D one.
KernelChecker::Called KernelChecker::builtin_broadcast(const CallSite& site) {
  const ast::Expr& e = site.e;
  ValuePtr result;
  // broadcast(t, rows: R): R rows, each the 1-D tile t; broadcast(t, cols: C): C
  // columns, each t (element [i, j] is t[i]).
  if (!check_named(e, {"rows", "cols"}) || !want_args(site, 1)) return {error_value(e.range), true};
  const ast::Expr* rows = named(e, "rows");
  const ast::Expr* cols = named(e, "cols");
  if (!rows == !cols) {
    diags_.emit(DiagnosticKind::WrongArgumentCount, e.range, {"broadcast(t, rows: R) or broadcast(t, cols: C)", "1 named", rows ? "2" : "0"});
    return {error_value(e.range), true};
  }
  ValuePtr t = expr(*e.args[0]);
  if (t->error) return {error_value(e.range), true};
  if (!t->type.is_tile() || t->type.rows) {
    diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range, {type_name(t->type), "a 1-D tile", " (broadcast repeats a 1-D tile)"});
    return {error_value(e.range), true};
  }
  const ast::Expr& count_expr = rows ? *rows : *cols;
  const int before = diags_.error_count();
  ValuePtr count = expr(count_expr);
  if (diags_.error_count() != before) return {error_value(e.range), true};
  if (count->kind != ValueKind::Const) {
    diags_.emit(DiagnosticKind::TileSizeNotConstant, count_expr.range, {"'" + std::string(diags_.source()->slice(count_expr.range)) + "'"});
    return {error_value(e.range), true};
  }
  const std::int64_t n = count->int_value;
  const std::int64_t r = rows ? n : t->type.size, c = rows ? t->type.size : n;
  for (std::int64_t side : {r, c}) {
    if (!power_of_two(side) || side < 16 || side > 256) {
      diags_.emit(DiagnosticKind::TileSizeInvalid, side == n ? count_expr.range : e.args[0]->range,
                  {std::to_string(side), "2-D tile sides must be powers of two from 16 to 256"});
      return {error_value(e.range), true};
    }
  }
  if (r * c > 32768) {
    diags_.emit(DiagnosticKind::TileSizeInvalid, e.range,
                {std::to_string(r) + " x " + std::to_string(c), "a 2-D tile holds at most 32768 elements"});
    return {error_value(e.range), true};
  }
  result = make(ValueKind::Broadcast, Type::tile2d(t->type.elem, r, c), e.range);
  result->axis = rows ? 0 : 1;
  result->operands.push_back(t);
  return {result, false};
}

// select(c, a, b): a where c, else b; elementwise where any of them is a tile.
KernelChecker::Called KernelChecker::builtin_select(const CallSite& site) {
  const ast::Expr& e = site.e;
  ValuePtr result;
  // select(c, a, b): a where c, else b; elementwise where any of them is a tile.
  if (!check_named(e, {}) || !want_args(site, 3)) return {error_value(e.range), true};
  ValuePtr c = expr(*e.args[0]), a = expr(*e.args[1]), b = expr(*e.args[2]);
  if (c->error || a->error || b->error) return {error_value(e.range), true};
  if (c->type.kind == TypeKind::Range || c->type.elem != ScalarType::boolean) {
    diags_.emit(DiagnosticKind::TypeMismatch, e.args[0]->range,
                {type_name(c->type), "bool", " (select's condition is a bool or a tile of bools)"});
    return {error_value(e.range), true};
  }
  for (const ValuePtr& x : {a, b}) {
    if (x->type.kind == TypeKind::Range) {
      diags_.emit(DiagnosticKind::TypeMismatch, e.range, {type_name(x->type), "a scalar or tile", " (select chooses between values)"});
      return {error_value(e.range), true};
    }
  }
  if (a->type.elem != b->type.elem) {
    if (is_literal(b) || (b->type.elem == ScalarType::int_ && is_integer(a->type.elem))) {
      b = coerce(b, a->type.elem, e.args[2]->range);
    } else if (is_literal(a) || (a->type.elem == ScalarType::int_ && is_integer(b->type.elem))) {
      a = coerce(a, b->type.elem, e.args[1]->range);
    } else {
      diags_.emit(DiagnosticKind::TypeMismatch, e.range, {type_name(a->type), type_name(b->type), " (convert one side with 'as')"});
      return {error_value(e.range), true};
    }
    if (a->error || b->error) return {error_value(e.range), true};
  }
  Type t = a->type;
  for (const ValuePtr& x : {c, a, b}) {
    if (!x->type.is_tile()) continue;
    if (t.is_tile() && !same_shape(t, x->type)) {
      diags_.emit(DiagnosticKind::TileShapeMismatch, e.range, {shape_text(t), shape_text(x->type)});
      return {error_value(e.range), true};
    }
    t = Type{TypeKind::Tile, a->type.elem, x->type.size, x->type.rows};
  }
  t.elem = a->type.elem;
  result = make(ValueKind::Select, t, e.range);
  result->operands = {c, a, b};
  return {result, false};
}

// gathered(A) anywhere but as a matmul's first operand: an error.
KernelChecker::Called KernelChecker::builtin_gathered(const CallSite& site) {
  const ast::Expr& e = site.e;
  ValuePtr result;
  // gathered(A) alone, not indexed as a matmul's first operand.
  const std::string what = e.args.size() == 1 ? std::string(diags_.source()->slice(e.args[0]->range)) : "A";
  diags_.emit(DiagnosticKind::GatheredNotAPanel, e.range, {what});
  return {error_value(e.range), true};
  return {result, false};
}

}  // namespace irisc::sema
