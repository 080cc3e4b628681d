// The shared parts of the GPU translation units (see gpu_module.hpp).
#include "compiler/codegen/gpu_module.hpp"

#include "compiler/tir/visit.hpp"

namespace irisc {

using namespace tir;

const char* gpu_scalar_type_name(ScalarType t, const char* f16, const char* bf16) {
  switch (t) {
    case ScalarType::f32: return "float";
    case ScalarType::f16: return f16;
    case ScalarType::bf16: return bf16;
    case ScalarType::i32: return "int";
    case ScalarType::i64: return "iris_i64";
    case ScalarType::u32: return "iris_u32";
    case ScalarType::u64: return "iris_u64";
    case ScalarType::boolean: return "bool";
    case ScalarType::int_: return "iris_i64";
  }
  return "void";
}

bool module_uses_type(const Module& m, ScalarType t) {
  auto is_t = [t](const Value& v) { return v.type.elem == t; };
  for (const Kernel& k : m.kernels) {
    for (const Param& p : k.params) {
      if (p.elem == t) return true;
    }
    for (const Var& v : k.vars) {
      if (v.type.elem == t) return true;
    }
    if (any_value(k.body, is_t)) return true;
  }
  return false;
}

namespace {

bool uses_shifts(const Module& m) {
  auto shift = [](const Value& v) { return v.kind == ValueKind::Binary && (v.binop == BinOp::shl || v.binop == BinOp::shr); };
  for (const Kernel& k : m.kernels) {
    if (any_value(k.body, shift)) return true;
  }
  return false;
}

}  // namespace

std::string gpu_module_prelude(const Module& m) {
  std::string s;
  s += "typedef long long iris_i64;\ntypedef unsigned iris_u32;\ntypedef unsigned long long iris_u64;\n";
  s += "__device__ __forceinline__ long long iris_min(long long a, long long b) { return a < b ? a : b; }\n";
  s += "__device__ __forceinline__ long long iris_max(long long a, long long b) { return a > b ? a : b; }\n";
  s += "__device__ __forceinline__ long long iris_div(long long a, long long b) {\n"
       "  return ((unsigned long long)(a | b) >> 31) == 0 ? (long long)((unsigned)a / (unsigned)b) : a / b;\n}\n";
  s += "__device__ __forceinline__ long long iris_rem(long long a, long long b) {\n"
       "  return ((unsigned long long)(a | b) >> 31) == 0 ? (long long)((unsigned)a % (unsigned)b) : a % b;\n}\n";
  if (uses_shifts(m)) {
    s += "template <class T> __device__ __forceinline__ T iris_shl(T a, T b) {\n"
         "  return (unsigned long long)b >= sizeof(T) * 8 ? T(0) : T((unsigned long long)a << b);\n}\n";
    s += "template <class T> __device__ __forceinline__ T iris_shr(T a, T b) {\n"
         "  return (unsigned long long)b < sizeof(T) * 8 ? T(a >> b) : (T(-1) < T(0) && a < T(0)) ? T(-1) : T(0);\n}\n";
  }
  s += "\n";
  return s;
}

}  // namespace irisc
