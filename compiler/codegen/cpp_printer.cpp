// The shared C++ printer (see cpp_printer.hpp).
#include "compiler/codegen/cpp_printer.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace irisc {

using namespace tir;

void CppPrinter::line(int depth, const std::string& s) {
  out_ += std::string(static_cast<std::size_t>(depth) * 2, ' ') + s + "\n"; 
}

std::string CppPrinter::fresh(const char* prefix) {
  return std::string(prefix) + std::to_string(counter_++); 
}

std::string CppPrinter::literal(const Value& v) const {
  if (v.type.elem == ScalarType::boolean) return v.int_value ? "true" : "false";
  if (is_float(v.type.elem)) {
    // The constant as the f32 it rounds to (IEEE: 1e39 -> inf, 1e-50 -> 0), spelled
    // by its bits when a decimal literal would be rejected or inexact (inf, NaN,
    // subnormal, out of range).
    const float f = static_cast<float>(v.float_value);
    std::string s;
    if (!std::isfinite(f) || (f != 0 && std::fabs(f) < 1.17549435e-38f)) {
      std::uint32_t bits;
      std::memcpy(&bits, &f, 4);
      s = float_from_bits(bits);
    } else {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
      s = buf;
      if (s.find_first_of(".en") == std::string::npos) s += ".0";
      s += "f";
    }
    if (v.type.elem == ScalarType::f32) return s;
    return std::string(type_name(v.type.elem)) + "(" + s + ")";
  }
  if (v.type.elem == ScalarType::u64) return std::to_string(static_cast<unsigned long long>(v.int_value)) + "ull";
  if (v.type.elem == ScalarType::u32) return std::to_string(static_cast<unsigned long long>(v.int_value)) + "u";
  if (v.type.elem == ScalarType::i32) return "(int)" + std::to_string(v.int_value);
  return std::to_string(v.int_value) + "ll";
}

std::string CppPrinter::typed_binop(BinOp op, ScalarType t, const std::string& a, const std::string& b) const {
  // Shifts by the width or more give 0 (or the sign, shifting a negative right), as
  // PTX's shl/shr do; C++ leaves them undefined.
  if (op == BinOp::shl || op == BinOp::shr) {
    return std::string(op == BinOp::shl ? "iris_shl(" : "iris_shr(") + a + ", " + b + ")";
  }
  if ((op == BinOp::div || op == BinOp::rem) && (t == ScalarType::int_ || t == ScalarType::i64)) {
    return std::string(op == BinOp::div ? "iris_div(" : "iris_rem(") + a + ", " + b + ")";
  }
  return binop(op, a, b);
}

std::string CppPrinter::binop(BinOp op, const std::string& a, const std::string& b) const {
  switch (op) {
    case BinOp::add: return "(" + a + " + " + b + ")";
    case BinOp::sub: return "(" + a + " - " + b + ")";
    case BinOp::mul: return "(" + a + " * " + b + ")";
    case BinOp::div: return "(" + a + " / " + b + ")";
    case BinOp::rem: return "(" + a + " % " + b + ")";
    case BinOp::eq: return "(" + a + " == " + b + ")";
    case BinOp::ne: return "(" + a + " != " + b + ")";
    case BinOp::lt: return "(" + a + " < " + b + ")";
    case BinOp::le: return "(" + a + " <= " + b + ")";
    case BinOp::gt: return "(" + a + " > " + b + ")";
    case BinOp::ge: return "(" + a + " >= " + b + ")";
    case BinOp::land: return "(" + a + " && " + b + ")";
    case BinOp::lor: return "(" + a + " || " + b + ")";
    case BinOp::band: return "(" + a + " & " + b + ")";
    case BinOp::bor: return "(" + a + " | " + b + ")";
    case BinOp::bxor: return "(" + a + " ^ " + b + ")";
    case BinOp::min: return "(" + a + " < " + b + " ? " + a + " : " + b + ")";
    case BinOp::max: return "(" + a + " > " + b + " ? " + a + " : " + b + ")";
    case BinOp::shl: return "iris_shl(" + a + ", " + b + ")";
    case BinOp::shr: return "iris_shr(" + a + ", " + b + ")";
  }
  return a;
}

std::string CppPrinter::unop(UnOp op, const std::string& a, ScalarType t) const {
  const bool half = t == ScalarType::f16 || t == ScalarType::bf16;
  const std::string f = half ? "(float)" + a : a;
  auto back = [&](const std::string& s) { return half ? std::string(type_name(t)) + "(" + s + ")" : s; };
  switch (op) {
    // `-` before a negative literal would make `--`, a decrement.
    case UnOp::neg: return a.starts_with("-") ? "(-(" + a + "))" : "(-" + a + ")";
    case UnOp::lnot: return "(!" + a + ")";
    case UnOp::abs: return is_float(t) ? back("fabsf(" + f + ")") : "(" + a + " < 0 ? -(" + a + ") : " + a + ")";
    case UnOp::sqrt: return back("sqrtf(" + f + ")");
    case UnOp::exp: return back("expf(" + f + ")");
    case UnOp::log: return back("logf(" + f + ")");
  }
  return a;
}

std::string CppPrinter::cast(ScalarType to, ScalarType from, const std::string& a) const {
  if (to == from) return a;
  const bool from_half = from == ScalarType::f16 || from == ScalarType::bf16;
  const bool to_half = to == ScalarType::f16 || to == ScalarType::bf16;
  if (from_half && to_half) return std::string(type_name(to)) + "((float)" + a + ")";
  if (to_half && from == ScalarType::boolean && bool_to_half_as_select()) {
    return std::string(type_name(to)) + "((" + a + ") ? 1.0f : 0.0f)";
  }
  if (to_half) return std::string(type_name(to)) + "((float)(" + a + "))";
  // The same for f32: a bool made a float, then bf16 (`(b as f32) as bf16`), folds
  // into the i1-to-bf16 conversion the AMDGPU backend cannot select either.
  if (from == ScalarType::boolean && bool_to_half_as_select() && to == ScalarType::f32) {
    return "((" + a + ") ? (" + std::string(type_name(to)) + ")1 : (" + std::string(type_name(to)) + ")0)";
  }
  if (from_half) return "(" + std::string(type_name(to)) + ")(float)" + a;
  return "(" + std::string(type_name(to)) + ")(" + a + ")";
}

}  // namespace irisc
