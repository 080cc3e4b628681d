// Constant folding over TIR values (see fold_constants.hpp).
#include "compiler/passes/fold_constants.hpp"

#include <cmath>

namespace irisc {
namespace {

using namespace tir;

bool fold_value(ValuePtr& v, int& count);

void fold_view(View& view, int& count) {
  if (view.offset) fold_value(view.offset, count);
  if (view.extent) fold_value(view.extent, count);
}

// Wraps an integer to the width and signedness of `t`.
std::int64_t wrap(std::int64_t x, ScalarType t) {
  switch (t) {
    case ScalarType::i32: return static_cast<std::int32_t>(x);
    case ScalarType::u32: return static_cast<std::uint32_t>(x);
    default: return x;
  }
}

bool fold_value(ValuePtr& v, int& count) {
  for (ValuePtr& o : v->operands) fold_value(o, count);
  fold_view(v->view, count);
  if (v->rank) fold_value(v->rank, count);
  if (v->kind == ValueKind::Cast && v->operands[0]->kind == ValueKind::Const && v->type.is_scalar()) {
    const Value& c = *v->operands[0];
    auto out = std::make_shared<Value>(*v);
    out->kind = ValueKind::Const;
    out->operands.clear();
    if (is_float(v->type.elem)) {
      out->float_value = is_float(c.type.elem) ? c.float_value : static_cast<double>(c.int_value);
    } else if (v->type.elem == ScalarType::boolean) {
      out->int_value = is_float(c.type.elem) ? c.float_value != 0 : c.int_value != 0;
    } else if (is_float(c.type.elem)) {
      // Out of range (or NaN), the conversion has no defined value: leave it to run time.
      const double t = std::trunc(c.float_value);
      if (!(t >= -9.2233720368547758e18 && t < 9.2233720368547758e18)) return false;
      out->int_value = wrap(static_cast<std::int64_t>(t), v->type.elem);
    } else {
      out->int_value = wrap(c.int_value, v->type.elem);
    }
    v = out;
    ++count;
    return true;
  }
  if (v->kind == ValueKind::Binary && v->type.is_scalar() && is_float(v->type.elem) &&
      v->operands[0]->kind == ValueKind::Const && v->operands[1]->kind == ValueKind::Const) {
    const double a = v->operands[0]->float_value, b = v->operands[1]->float_value;
    double r;
    switch (v->binop) {
      case BinOp::add: r = a + b; break;
      case BinOp::sub: r = a - b; break;
      case BinOp::mul: r = a * b; break;
      default: return false;
    }
    auto out = std::make_shared<Value>(*v);
    out->kind = ValueKind::Const;
    out->operands.clear();
    out->float_value = r;
    v = out;
    ++count;
    return true;
  }
  return false;
}

void fold_stmts(std::vector<StmtPtr>& body, int& count) {
  for (StmtPtr& s : body) {
    if (s->value) fold_value(s->value, count);
    if (s->rank) fold_value(s->rank, count);
    if (s->lo) fold_value(s->lo, count);
    if (s->hi) fold_value(s->hi, count);
    fold_view(s->view, count);
    fold_stmts(s->body, count);
    fold_stmts(s->else_body, count);
  }
}

}  // namespace

int fold_constants(Module& module) {
  int count = 0;
  for (Kernel& k : module.kernels) fold_stmts(k.body, count);
  return count;
}

}  // namespace irisc
