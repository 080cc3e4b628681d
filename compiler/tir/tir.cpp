// TIR helpers: type queries, enum names, structural equality.
#include "compiler/tir/tir.hpp"

#include "compiler/tir/visit.hpp"

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
  static const char* n[] = {"rank", "world", "sms", "program", "programs", "resident"};
  return n[static_cast<int>(b)];
}
const char* name(BinOp o) {
  static const char* n[] = {"add", "sub", "mul", "div", "rem", "eq", "ne", "lt", "le",
                            "gt", "ge", "and", "or", "band", "bor", "bxor", "min", "max", "shl", "shr"};
  return n[static_cast<int>(o)];
}
const char* name(UnOp o) {
  static const char* n[] = {"neg", "not", "abs", "sqrt", "exp", "log"};
  return n[static_cast<int>(o)];
}

const char* name(ValueKind k) {
  switch (k) {
#define IRIS_TIR_VALUE(Kind, MinOperands, MaxOperands) \
  case ValueKind::Kind: return #Kind;
#include "compiler/tir/value_kinds.def"
  }
  return "?";
}

const char* name(StmtKind k) {
  switch (k) {
#define IRIS_TIR_STMT(Kind, DefinesVar, HasBody) \
  case StmtKind::Kind: return #Kind;
#include "compiler/tir/stmt_kinds.def"
  }
  return "?";
}

const char* name(MatmulLowering m) {
  switch (m) {
    case MatmulLowering::unchosen: return "unchosen";
    case MatmulLowering::simt: return "simt";
    case MatmulLowering::mma_sync: return "mma_sync";
    case MatmulLowering::mfma: return "mfma";
    case MatmulLowering::wgmma_ws: return "wgmma_ws";
  }
  return "?";
}

const Layout* Kernel::layout_of(const Type& t) const {
  if (!t.is_tile()) return nullptr;
  for (const Layout& l : layouts) {
    if (l.rows == t.rows && l.cols == t.size) return &l;
  }
  return nullptr;
}

bool Kernel::has_layout(const Type& t) const { return layout_of(t) != nullptr; }

const Value* not_at_launch(const Value& v, LaunchUse use) {
  const bool grid = use == LaunchUse::grid;
  const Value* bad = nullptr;
  any_value(v, [&](const Value& x) {
    const bool integer = x.type.is_scalar() && is_integer(x.type.elem);
    bool ok = false;
    switch (x.kind) {
      case ValueKind::Const:
      case ValueKind::SizeRef: ok = true; break;
      case ValueKind::Cast: ok = x.operands.size() == 1; break;
      case ValueKind::BuiltinRef:
        ok = x.builtin == Builtin::world || (grid && (x.builtin == Builtin::sms || x.builtin == Builtin::resident));
        break;
      case ValueKind::Binary:
        ok = x.operands.size() == 2 &&
             (x.binop == BinOp::add || x.binop == BinOp::sub || x.binop == BinOp::mul || x.binop == BinOp::div ||
              x.binop == BinOp::rem || (grid && (x.binop == BinOp::min || x.binop == BinOp::max)));
        break;
      default: break;
    }
    if (!ok || !integer) bad = &x;
    return bad != nullptr;
  });
  return bad;
}

bool same_value(const Value& a, const Value& b) {
  auto same_view = [](const View& x, const View& y) {
    return x.param == y.param && x.size == y.size && x.rows == y.rows && x.slice_dim == y.slice_dim &&
           x.gathered == y.gathered;
  };
  if (a.kind != b.kind || !(a.type == b.type) || a.int_value != b.int_value || a.float_value != b.float_value ||
      a.param != b.param || a.var != b.var || a.size != b.size || a.builtin != b.builtin || a.unop != b.unop ||
      a.binop != b.binop || a.reduce_op != b.reduce_op || a.axis != b.axis || a.atomic_op != b.atomic_op || a.order != b.order ||
      a.scope != b.scope || !same_view(a.view, b.view) || !same_view(a.view_b, b.view_b)) {
    return false;
  }
  std::vector<const Value*> ca, cb;
  for_each_slot(a, [&](const ValuePtr& c) { ca.push_back(c.get()); });
  for_each_slot(b, [&](const ValuePtr& c) { cb.push_back(c.get()); });
  if (ca.size() != cb.size()) return false;
  for (std::size_t i = 0; i < ca.size(); ++i) {
    if (!ca[i] != !cb[i] || (ca[i] && !same_value(*ca[i], *cb[i]))) return false;
  }
  return true;
}

ValuePtr int_value(ValueKind kind, std::int64_t v, SourceRange r) {
  auto out = std::make_shared<Value>();
  out->kind = kind;
  out->type = Type::scalar(ScalarType::int_);
  out->int_value = v;
  out->range = r;
  return out;
}

ValuePtr int_binary(BinOp op, ValuePtr a, ValuePtr b, SourceRange r) {
  auto out = std::make_shared<Value>();
  out->kind = ValueKind::Binary;
  out->type = Type::scalar(ScalarType::int_);
  out->binop = op;
  out->operands = {std::move(a), std::move(b)};
  out->range = r;
  return out;
}

}  // namespace irisc::tir
