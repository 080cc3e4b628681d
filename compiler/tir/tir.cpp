// TIR helpers: type queries, enum names.
#include "compiler/tir/tir.hpp"

namespace irisc::tir {

bool is_float(ScalarType t) { return t == ScalarType::f32 || t == ScalarType::f16 || t == ScalarType::bf16; }
bool is_integer(ScalarType t) {
  return t == ScalarType::i32 || t == ScalarType::i64 || t == ScalarType::u32 || t == ScalarType::u64 ||
         t == ScalarType::int_;
}
bool is_signed(ScalarType t) { return t == ScalarType::i32 || t == ScalarType::i64 || t == ScalarType::int_; }
int byte_size(ScalarType t) {
  switch (t) {
    case ScalarType::f16:
    case ScalarType::bf16: return 2;
    case ScalarType::f32:
    case ScalarType::i32:
    case ScalarType::u32: return 4;
    case ScalarType::boolean: return 1;
    default: return 8;
  }
}

std::string to_string(const Type& t) {
  switch (t.kind) {
    case TypeKind::Void: return "void";
    case TypeKind::Scalar: return ast::scalar_type_name(t.elem);
    case TypeKind::Tile:
      return std::string("tile<") + ast::scalar_type_name(t.elem) + ">[" +
             (t.rows ? std::to_string(t.rows) + ", " : std::string()) + std::to_string(t.size) + "]";
    case TypeKind::Range: return "range[" + std::to_string(t.size) + "]";
    case TypeKind::Rank: return "rank";
  }
  return "?";
}

const char* name(Order o) {
  static const char* n[] = {"relaxed", "acquire", "release", "acq_rel"};
  return n[static_cast<int>(o)];
}
const char* name(Scope s) {
  static const char* n[] = {"block", "device", "system"};
  return n[static_cast<int>(s)];
}
const char* name(Cmp c) {
  static const char* n[] = {"eq", "ne", "gt", "ge", "lt", "le"};
  return n[static_cast<int>(c)];
}
const char* name(AtomicOp o) {
  static const char* n[] = {"add", "sub", "and", "or", "xor", "min", "max", "xchg", "cas"};
  return n[static_cast<int>(o)];
}
const char* name(ReduceOp o) {
  static const char* n[] = {"sum", "max", "min"};
  return n[static_cast<int>(o)];
}
const char* name(Builtin b) {
  static const char* n[] = {"rank", "world", "sms", "program", "programs"};
  return n[static_cast<int>(b)];
}
const char* name(BinOp o) {
  static const char* n[] = {"add", "sub", "mul", "div", "rem", "eq", "ne", "lt", "le",
                            "gt", "ge", "and", "or", "band", "bor", "bxor", "min", "max"};
  return n[static_cast<int>(o)];
}
const char* name(UnOp o) {
  static const char* n[] = {"neg", "not", "abs", "sqrt", "exp", "log"};
  return n[static_cast<int>(o)];
}

}  // namespace irisc::tir
