// Constant folding over TIR values (see fold_constants.hpp).
#include "compiler/passes/fold_constants.hpp"

#include <cmath>

#include "compiler/tir/gemm_loop.hpp"
#include "compiler/tir/visit.hpp"

namespace irisc {
namespace {

using namespace tir;

// Wraps an integer to the width and signedness of `t`.
std::int64_t wrap(std::int64_t x, ScalarType t) {
  switch (t) {
    case ScalarType::i32: return static_cast<std::int32_t>(x);
    case ScalarType::u32: return static_cast<std::uint32_t>(x);
    default: return x;
  }
}

// The folded constant for `v` (whose children are already folded), or null.
ValuePtr fold(const Value& v) {
  if (v.kind == ValueKind::Cast && v.operands[0]->kind == ValueKind::Const && v.type.is_scalar()) {
    const Value& c = *v.operands[0];
    auto out = std::make_shared<Value>(v);
    out->kind = ValueKind::Const;
    out->operands.clear();
    if (is_float(v.type.elem)) {
      out->float_value = is_float(c.type.elem) ? c.float_value : static_cast<double>(c.int_value);
    } else if (v.type.elem == ScalarType::boolean) {
      out->int_value = is_float(c.type.elem) ? c.float_value != 0 : c.int_value != 0;
    } else if (is_float(c.type.elem)) {
      // Out of range (or NaN), the conversion has no defined value: leave it to run time.
      const double t = std::trunc(c.float_value);
      if (!(t >= -9.2233720368547758e18 && t < 9.2233720368547758e18)) return nullptr;
      out->int_value = wrap(static_cast<std::int64_t>(t), v.type.elem);
    } else {
      out->int_value = wrap(c.int_value, v.type.elem);
    }
    return out;
  }
  if (v.kind == ValueKind::Binary && v.type.is_scalar() && is_float(v.type.elem) &&
      v.operands[0]->kind == ValueKind::Const && v.operands[1]->kind == ValueKind::Const) {
    const double a = v.operands[0]->float_value, b = v.operands[1]->float_value;
    double r;
    switch (v.binop) {
      case BinOp::add: r = a + b; break;
      case BinOp::sub: r = a - b; break;
      case BinOp::mul: r = a * b; break;
      default: return nullptr;
    }
    auto out = std::make_shared<Value>(v);
    out->kind = ValueKind::Const;
    out->operands.clear();
    out->float_value = r;
    return out;
  }
  return nullptr;
}

}  // namespace

int fold_constants(Module& module) {
  int count = 0;
  for (Kernel& k : module.kernels) {
    mutate(k.body, [&](ValuePtr& v) {
      if (ValuePtr f = fold(*v)) {
        v = std::move(f);
        ++count;
      }
    });
    // A listing's GEMM decision holds only while the kernel keeps the GEMM's shape.
    forget_stale_gemm(k);
  }
  return count;
}

}  // namespace irisc
