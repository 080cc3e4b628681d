// Slots: values whose arrival is their own signal. A slot of a floating-point tensor is
// empty (every bit set, a NaN that no send writes) or holds a value; `send` stores a
// tile into slots, here or on another rank, and `receive` waits until every slot of its
// view holds a value, returns them and empties the slots again. No flag, no fence and
// no bytes beside the data: a message costs one trip over the link at the data's size
// (the data-and-flag words of check_flagged.cpp carry twice it).
//
//   send(slots[j], v, to: r);   // slots: symmetric tensor<T>, T f32, f16 or bf16
//   let v = receive(slots[j]);  // this rank's slots; waits, reads, empties
//
// A send writes a value whose bits are all set (a NaN) with its sign bit clear, so that
// it never reads as empty. The program sees to it that a slot is sent to again only
// after its receive (dsl/ccl/slots.iris's kernels use two halves in turn); the library
// hands out slots empty.
#include "compiler/sema/sema_state.hpp"

namespace irisc::sema {

using namespace tir;

// The slots of a send or receive: a plain 1-D tile view of a floating-point tensor.
std::optional<View> KernelChecker::slots_view(const ast::Expr& arg, const std::string& fn) {
  auto v = view(arg, fn);
  if (!v || !plain_view(*v, arg.range)) return std::nullopt;
  const Param& p = out_.params[static_cast<std::size_t>(v->param)];
  if (!is_float(p.elem) || v->rows || !v->size) {
    diags_.emit(DiagnosticKind::BadSlotAccess, arg.range,
                {fn + " takes a 1-D tile view (x[i], i a range) of a tensor of f32, f16 or bf16 (all bits set is "
                      "an empty slot, which integers cannot spare), not " +
                 (!is_float(p.elem) ? "a tensor<" + std::string(ast::scalar_type_name(p.elem)) + ">"
                  : v->rows         ? std::string("a 2-D view")
                                    : std::string("a single element"))});
    return std::nullopt;
  }
  return v;
}

// send(slots[j], v [, to: r]): a statement.
KernelChecker::Called KernelChecker::builtin_send(const CallSite& site) {
  const ast::Expr& e = site.e;
  if (!check_named(e, {"to"}) || !want_args(site, 2)) return {no_value(site), true};
  auto dst = slots_view(*e.args[0], e.name);
  if (!dst) return {no_value(site), true};
  const ScalarType t = out_.params[static_cast<std::size_t>(dst->param)].elem;
  ValuePtr value = expr(*e.args[1]);
  if (value->error) return {no_value(site), true};
  if (!value->type.is_tile()) {
    diags_.emit(DiagnosticKind::BadSlotAccess, e.args[1]->range,
                {"send takes a tile of the view's size, not " + type_name(value->type)});
    return {no_value(site), true};
  }
  value = to_element(value, t, e.args[1]->range);
  if (value->error) return {no_value(site), true};
  if (!same_shape(value->type, view_type(*dst, t))) {
    diags_.emit(DiagnosticKind::TileShapeMismatch, e.range, {shape_text(value->type), shape_text(view_type(*dst, t))});
    return {no_value(site), true};
  }
  if (!site.as_statement) return {no_value(site), true};
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::Send;
  s->range = e.range;
  s->view = *dst;
  s->value = value;
  s->rank = rank_arg(e, "to", *dst);
  site.stmts->push_back(std::move(s));
  return {nullptr, true};
}

// receive(slots[j]): this rank's slots, waited for, read and emptied.
KernelChecker::Called KernelChecker::builtin_receive(const CallSite& site) {
  const ast::Expr& e = site.e;
  if (const ast::Expr* from = named(e, "from")) {
    diags_.emit(DiagnosticKind::BadSlotAccess, from->range,
                {"receive waits on this rank's slots until their values arrive; it takes no 'from:'"});
    return {error_value(e.range), true};
  }
  if (!check_named(e, {}) || !want_args(site, 1)) return {error_value(e.range), true};
  auto v = slots_view(*e.args[0], e.name);
  if (!v) return {error_value(e.range), true};
  const ScalarType t = out_.params[static_cast<std::size_t>(v->param)].elem;
  auto result = make(ValueKind::Receive, view_type(*v, t), e.range);
  result->view = *v;
  return {result, false};
}

}  // namespace irisc::sema
