// The built-in matmul.
#include "compiler/sema/sema_state.hpp"

namespace irisc::sema {

using namespace tir;

// matmul(A[m, :], B[:, n], acc: f32): the [rows(m), cols(n)] product over the shared extent K,
// accumulated in `acc` (f32 by default); or matmul(A[m, :], Bt[n, :]) with B transposed.
KernelChecker::Called KernelChecker::builtin_matmul(const CallSite& site) {
  const ast::Expr& e = site.e;
  const std::string& fn = e.name;
  ValuePtr result;
  // matmul(A[m, :], B[:, n], acc: f32): the [rows(m), cols(n)] product over the
  // shared extent K, accumulated in `acc` (f32 by default). The second operand may
  // also be a row panel Bt[n, :] of an [N, K] tensor (B transposed): [rows(m), rows(n)].
  if (!check_named(e, {"acc"}) || !want_args(site, 2)) return {error_value(e.range), true};
  auto a = view(*e.args[0], fn, true);
  auto b = a ? view(*e.args[1], fn) : std::nullopt;
  if (!a || !b) return {error_value(e.range), true};
  if (a->slice_dim != 1 || b->slice_dim < 0) {
    diags_.emit(DiagnosticKind::ExpectedView, a->slice_dim != 1 ? e.args[0]->range : e.args[1]->range,
                {"matmul (its operands are panels: matmul(A[m, :], B[:, n]) or, B transposed, "
                 "matmul(A[m, :], Bt[n, :]))"});
    return {error_value(e.range), true};
  }
  const std::int64_t cols = b->slice_dim == 0 ? b->size : b->rows;
  if (!same_value(*a->full, *b->full)) {
    diags_.emit(DiagnosticKind::TileShapeMismatch, e.range,
                {"K = " + extent_text(*a->full), "K = " + extent_text(*b->full)});
    return {error_value(e.range), true};
  }
  const ScalarType ta = out_.params[static_cast<std::size_t>(a->param)].elem;
  const ScalarType tb = out_.params[static_cast<std::size_t>(b->param)].elem;
  if (!is_float(ta) || ta != tb) {
    diags_.emit(DiagnosticKind::TypeMismatch, e.range,
                {ast::scalar_type_name(ta), ast::scalar_type_name(tb), " (matmul needs two float operands of one type)"});
    return {error_value(e.range), true};
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
      return {error_value(e.range), true};
    }
  }
  if (a->rows * cols > 32768) {
    diags_.emit(DiagnosticKind::TileSizeInvalid, e.range,
                {std::to_string(a->rows) + " x " + std::to_string(cols), "a matmul tile holds at most 32768 elements"});
    return {error_value(e.range), true};
  }
  result = make(ValueKind::Matmul, Type::tile2d(acc, a->rows, cols), e.range);
  result->view = *a;
  result->view_b = *b;
  return {result, false};
}

}  // namespace irisc::sema
