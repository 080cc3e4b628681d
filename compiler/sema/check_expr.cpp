// Expression checking: names, operators with literal adaptation and tile broadcasting,
// casts, views, built-in functions (load, fill, atomics, reductions, math).
#include <cmath>
#include <limits>

#include "compiler/sema/sema_state.hpp"

namespace irisc::sema {

using namespace tir;

std::string type_name(const Type& t) { return to_string(t); }

bool same_shape(const Type& a, const Type& b) { return a.size == b.size && a.rows == b.rows; }

std::string shape_text(const Type& t) {
  return t.rows ? std::to_string(t.rows) + ", " + std::to_string(t.size) : std::to_string(t.size);
}

Type view_type(const View& v, ScalarType elem) {
  if (v.rows) return Type::tile2d(elem, v.rows, v.size);
  if (v.size) return Type::tile(elem, v.size);
  return Type::scalar(elem);
}

bool KernelChecker::plain_view(const View& v, SourceRange where) {
  if (v.slice_dim < 0) return true;
  diags_.emit(DiagnosticKind::BadIndex, where, {"a ':' slice outside a matmul operand"});
  return false;
}

bool is_literal(const ValuePtr& v) { return v->kind == ValueKind::Const; }

namespace {

std::optional<BinOp> binop_of(TokenKind k) {
  switch (k) {
    case TokenKind::Plus: return BinOp::add;
    case TokenKind::Minus: return BinOp::sub;
    case TokenKind::Star: return BinOp::mul;
    case TokenKind::Slash: return BinOp::div;
    case TokenKind::Percent: return BinOp::rem;
    case TokenKind::EqEq: return BinOp::eq;
    case TokenKind::NotEq: return BinOp::ne;
    case TokenKind::Less: return BinOp::lt;
    case TokenKind::LessEq: return BinOp::le;
    case TokenKind::Greater: return BinOp::gt;
    case TokenKind::GreaterEq: return BinOp::ge;
    case TokenKind::AndAnd: return BinOp::land;
    case TokenKind::OrOr: return BinOp::lor;
    case TokenKind::Amp: return BinOp::band;
    case TokenKind::Pipe: return BinOp::bor;
    case TokenKind::Caret: return BinOp::bxor;
    case TokenKind::Shl: return BinOp::shl;
    case TokenKind::Shr: return BinOp::shr;
    default: return std::nullopt;
  }
}

bool is_compare(BinOp o) {
  return o == BinOp::eq || o == BinOp::ne || o == BinOp::lt || o == BinOp::le || o == BinOp::gt || o == BinOp::ge;
}
bool is_int_only(BinOp o) {
  return o == BinOp::rem || o == BinOp::band || o == BinOp::bor || o == BinOp::bxor || o == BinOp::shl || o == BinOp::shr;
}

// Folds a binary op on two int constants; false on overflow or division by zero.
bool fold(BinOp op, std::int64_t a, std::int64_t b, std::int64_t* out, bool* div0) {
  *div0 = false;
  switch (op) {
    case BinOp::add: return !__builtin_add_overflow(a, b, out);
    case BinOp::sub: return !__builtin_sub_overflow(a, b, out);
    case BinOp::mul: return !__builtin_mul_overflow(a, b, out);
    case BinOp::div:
    case BinOp::rem:
      if (b == 0) {
        *div0 = true;
        return false;
      }
      if (a == std::numeric_limits<std::int64_t>::min() && b == -1) return false;
      *out = op == BinOp::div ? a / b : a % b;
      return true;
    case BinOp::eq: *out = a == b; return true;
    case BinOp::ne: *out = a != b; return true;
    case BinOp::lt: *out = a < b; return true;
    case BinOp::le: *out = a <= b; return true;
    case BinOp::gt: *out = a > b; return true;
    case BinOp::ge: *out = a >= b; return true;
    case BinOp::band: *out = a & b; return true;
    case BinOp::bor: *out = a | b; return true;
    case BinOp::bxor: *out = a ^ b; return true;
    case BinOp::shl:  // folded only where nothing is shifted out: 1 << 62, not 1 << 64
      if (b < 0 || b > 63) return false;
      *out = static_cast<std::int64_t>(static_cast<std::uint64_t>(a) << b);
      return (*out >> b) == a;
    case BinOp::shr:
      if (b < 0) return false;
      *out = b > 63 ? (a < 0 ? -1 : 0) : a >> b;
      return true;
    case BinOp::min: *out = a < b ? a : b; return true;
    case BinOp::max: *out = a > b ? a : b; return true;
    default: return false;
  }
}

}  // namespace

ScalarType KernelChecker::resolve(const ast::TypeRef& t) {
  if (t.name.empty()) return t.type;
  const Entity* e = lookup(t.name);
  if (e && e->kind == EntityKind::Type) return e->type;
  if (poisoned_.count(t.name)) diags_.count_followup();
  else diags_.emit(DiagnosticKind::UnknownType, t.range, {t.name});
  return ScalarType::f32;
}

const Entity* KernelChecker::lookup(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->find(name);
    if (f != it->end()) return &f->second;
  }
  return nullptr;
}

bool KernelChecker::declare(const std::string& name, Entity e) {
  if (const Entity* prev = lookup(name); prev && prev->kind == EntityKind::Builtin) {
    diags_.emit(DiagnosticKind::ReservedName, e.range, {name});
    return false;
  }
  auto& scope = scopes_.back();
  if (auto prev = scope.find(name); prev != scope.end()) {
    Diagnostic& d = diags_.emit(DiagnosticKind::Redefinition, e.range, {name});
    diags_.note(d, prev->second.range, "previous definition is here");
    return false;
  }
  scope.emplace(name, e);
  return true;
}

int KernelChecker::new_var(const std::string& name, Type type, bool mutable_) {
  out_.vars.push_back({name, type, mutable_});
  return static_cast<int>(out_.vars.size() - 1);
}

ValuePtr KernelChecker::coerce(ValuePtr v, ScalarType to, SourceRange where) {
  const ScalarType from = v->type.elem;
  if (from == to || v->error) return v;
  // Literals and the index type adapt to the other operand; everything else needs `as`.
  const bool adapts = (is_literal(v) && (from != ScalarType::boolean) && (to != ScalarType::boolean) &&
                       !(is_float(from) && is_integer(to))) ||
                      (from == ScalarType::int_ && is_integer(to)) || (is_integer(from) && to == ScalarType::int_);
  if (!adapts) {
    diags_.emit(DiagnosticKind::TypeMismatch, where,
                {ast::scalar_type_name(from), ast::scalar_type_name(to), std::string(" (convert with 'as ") + ast::scalar_type_name(to) + "')"});
    return error_value(where);
  }
  auto c = make(ValueKind::Cast, v->type, v->range);
  c->type.elem = to;
  c->operands.push_back(std::move(v));
  return c;
}

ValuePtr KernelChecker::expr(const ast::Expr& e) {
  using ast::ExprKind;
  switch (e.kind) {
    case ExprKind::IntLit: {
      if (e.int_value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        // Allowed only as an unsigned 64-bit literal.
        auto c = make(ValueKind::Const, Type::scalar(ScalarType::u64), e.range);
        c->int_value = static_cast<std::int64_t>(e.int_value);
        return c;
      }
      return int_const(static_cast<std::int64_t>(e.int_value), e.range);
    }
    case ExprKind::FloatLit: {
      auto c = make(ValueKind::Const, Type::scalar(ScalarType::f32), e.range);
      c->float_value = e.float_value;
      return c;
    }
    case ExprKind::BoolLit: {
      auto c = make(ValueKind::Const, Type::scalar(ScalarType::boolean), e.range);
      c->int_value = e.bool_value;
      return c;
    }
    case ExprKind::Name: return expr_name(e);
    case ExprKind::Unary: return expr_unary(e);
    case ExprKind::Binary: return expr_binary(e);
    case ExprKind::Cast: {
      ValuePtr a = expr(*e.args[0]);
      if (a->error) return a;
      const ScalarType to = resolve(*e.type_arg);
      if (a->type.kind != TypeKind::Scalar && a->type.kind != TypeKind::Tile) {
        diags_.emit(DiagnosticKind::BadCast, e.range, {type_name(a->type), ast::scalar_type_name(to)});
        return error_value(e.range);
      }
      // bool converts to any number (0 or 1); numbers do not convert to bool (compare them).
      if (to == ScalarType::boolean && a->type.elem != ScalarType::boolean) {
        diags_.emit(DiagnosticKind::BadCast, e.range, {type_name(a->type), ast::scalar_type_name(to)});
        return error_value(e.range);
      }
      if (a->type.elem == to) return a;
      auto v = make(ValueKind::Cast, a->type, e.range);
      v->type.elem = to;
      v->operands.push_back(a);
      return v;
    }
    case ExprKind::Index: {
      // A view used as a value reads it locally: x[i] is load(x[i]).
      auto v = view(e, "indexing");
      if (!v || !plain_view(*v, e.range)) return error_value(e.range);
      const Param& p = out_.params[static_cast<std::size_t>(v->param)];
      auto l = make(ValueKind::Load, view_type(*v, p.elem), e.range);
      l->view = *v;
      return l;
    }
    case ExprKind::Call: return call(e, false, nullptr);
    case ExprKind::List:
      diags_.emit(DiagnosticKind::NotIterable, e.range, {"a list"});
      return error_value(e.range);
    case ExprKind::Comprehension:
      diags_.emit(DiagnosticKind::MisplacedComprehension, e.range, {"'" + std::string(diags_.source()->slice(e.range)) + "'"});
      return error_value(e.range);
    case ExprKind::Slice:
      diags_.emit(DiagnosticKind::BadIndex, e.range, {"':' outside an index"});
      return error_value(e.range);
  }
  return error_value(e.range);
}

// A name: a variable, a constant, a parameter, a built-in value.
ValuePtr KernelChecker::expr_name(const ast::Expr& e) {
  const Entity* ent = lookup(e.name);
  if (!ent) {
    if (poisoned_.count(e.name)) diags_.count_followup();
    else diags_.emit(DiagnosticKind::UnknownName, e.range, {e.name});
    return error_value(e.range);
  }
  switch (ent->kind) {
    case EntityKind::Const: return int_const(ent->value, e.range);
    case EntityKind::Size: {
      auto v = make(ValueKind::SizeRef, Type::scalar(ScalarType::int_), e.range);
      v->size = ent->index;
      return v;
    }
    case EntityKind::Builtin: {
      auto v = make(ValueKind::BuiltinRef, Type::scalar(ScalarType::int_), e.range);
      v->builtin = ent->builtin;
      return v;
    }
    case EntityKind::Param: {
      const Param& p = out_.params[static_cast<std::size_t>(ent->index)];
      if (p.is_tensor) {
        diags_.emit(DiagnosticKind::TensorUsedAsValue, e.range, {e.name});
        return error_value(e.range);
      }
      auto v = make(ValueKind::ParamRef, Type::scalar(p.elem), e.range);
      v->param = ent->index;
      return v;
    }
    case EntityKind::Type:
      diags_.emit(DiagnosticKind::TypeMismatch, e.range, {"type '" + e.name + "'", "a value", ""});
      return error_value(e.range);
    case EntityKind::Value: {
      // A copy of the top node: checking may rewrite a literal it is handed.
      auto v = std::make_shared<Value>(*ent->bound);
      v->range = e.range;
      return v;
    }
    case EntityKind::Var: {
      const tir::Var& var = out_.vars[static_cast<std::size_t>(ent->index)];
      auto v = make(ValueKind::VarRef, var.type, e.range);
      v->var = ent->index;
      v->error = var.error;  // no second diagnostic for a use of a variable whose value had one
      return v;
    }
  }
  return error_value(e.range);
}

// -x, !x.
ValuePtr KernelChecker::expr_unary(const ast::Expr& e) {
  ValuePtr a = expr(*e.args[0]);
  if (a->error) return a;
  if (a->type.kind == TypeKind::Range) {
    diags_.emit(DiagnosticKind::TypeMismatch, e.range, {"a range", "an operator", ""});
    return error_value(e.range);
  }
  if (e.op == TokenKind::Bang) {
    if (a->type.elem != ScalarType::boolean) {
      diags_.emit(DiagnosticKind::TypeMismatch, e.range, {type_name(a->type), "bool", " ('!' needs a bool)"});
      return a;
    }
    if (is_literal(a)) return (a->int_value = !a->int_value, a);
    auto v = make(ValueKind::Unary, a->type, e.range);
    v->unop = UnOp::lnot;
    v->operands.push_back(a);
    return v;
  }
  if (a->type.elem == ScalarType::boolean) {
    diags_.emit(DiagnosticKind::TypeMismatch, e.range, {"bool", "'-'", ""});
    return a;
  }
  if (is_literal(a)) {
    if (is_float(a->type.elem)) {
      a->float_value = -a->float_value;
    } else {
      if (a->int_value == std::numeric_limits<std::int64_t>::min()) {
        diags_.emit(DiagnosticKind::ConstantOverflow, e.range, {"negation"});
        return error_value(e.range);
      }
      a->int_value = -a->int_value;
    }
    a->range = e.range;
    return a;
  }
  auto v = make(ValueKind::Unary, a->type, e.range);
  v->unop = UnOp::neg;
  v->operands.push_back(a);
  return v;
}

// a op b: arithmetic, comparisons, logic, shifts.
ValuePtr KernelChecker::expr_binary(const ast::Expr& e) {
  ValuePtr a = expr(*e.args[0]);
  ValuePtr b = expr(*e.args[1]);
  if (a->error) return a;
  if (b->error) return b;
  const BinOp op = *binop_of(e.op);
  // Range arithmetic: i + k / i - k shift a range.
  if (a->type.kind == TypeKind::Range || b->type.kind == TypeKind::Range) {
    if (a->type.kind == TypeKind::Range && b->type.kind == TypeKind::Scalar && is_integer(b->type.elem) &&
        (op == BinOp::add || op == BinOp::sub)) {
      auto v = make(ValueKind::Binary, a->type, e.range);
      v->binop = op;
      v->operands = {a, coerce(b, ScalarType::int_, e.args[1]->range)};
      return v;
    }
    diags_.emit(DiagnosticKind::TypeMismatch, e.range,
                {type_name(a->type), type_name(b->type), " (a range can only be shifted by an integer: i + k)"});
    return error_value(e.range);
  }
  // A zero literal divisor is an error whatever it is converted to below.
  if ((op == BinOp::div || op == BinOp::rem) && is_literal(b) && !is_float(b->type.elem) && b->int_value == 0) {
    diags_.emit(DiagnosticKind::DivisionByZero, e.range);
    return error_value(e.range);
  }
  // Element types: literals and the index type adapt; otherwise they must agree.
  ScalarType elem = a->type.elem;
  if (a->type.elem == b->type.elem) {
    elem = a->type.elem;
  } else if (is_literal(b) || (b->type.elem == ScalarType::int_ && is_integer(a->type.elem))) {
    elem = a->type.elem;
    b = coerce(b, elem, e.args[1]->range);
  } else if (is_literal(a) || (a->type.elem == ScalarType::int_ && is_integer(b->type.elem))) {
    elem = b->type.elem;
    a = coerce(a, elem, e.args[0]->range);
  } else {
    diags_.emit(DiagnosticKind::TypeMismatch, e.range,
                {type_name(a->type), type_name(b->type), " (convert one side with 'as')"});
    return error_value(e.range);
  }
  if (a->error) return a;  // the coercion above reported why
  if (b->error) return b;
  if ((op == BinOp::land || op == BinOp::lor) != (elem == ScalarType::boolean)) {
    diags_.emit(DiagnosticKind::TypeMismatch, e.range,
                {type_name(a->type), type_name(b->type),
                 op == BinOp::land || op == BinOp::lor ? " ('&&' and '||' need bools)" : " (arithmetic needs numbers)"});
    return error_value(e.range);
  }
  if (is_int_only(op) && is_float(elem)) {
    diags_.emit(DiagnosticKind::IntegerOpOnFloat, e.range, {token_kind_spelling(e.op), ast::scalar_type_name(elem)});
    return error_value(e.range);
  }
  if (a->type.is_tile() && b->type.is_tile() && !same_shape(a->type, b->type)) {
    diags_.emit(DiagnosticKind::TileShapeMismatch, e.range, {shape_text(a->type), shape_text(b->type)});
    return error_value(e.range);
  }
  Type t = a->type.is_tile() ? a->type : b->type;
  t.elem = is_compare(op) ? ScalarType::boolean : elem;
  if ((op == BinOp::div || op == BinOp::rem) && is_literal(b) && is_integer(elem) && b->int_value == 0) {
    diags_.emit(DiagnosticKind::DivisionByZero, e.range);
    return error_value(e.range);
  }
  if (is_literal(a) && is_literal(b) && is_integer(elem) && elem != ScalarType::u64) {
    std::int64_t r = 0;
    bool div0 = false;
    if (!fold(op, a->int_value, b->int_value, &r, &div0)) {
      diags_.emit(div0 ? DiagnosticKind::DivisionByZero : DiagnosticKind::ConstantOverflow, e.range,
                  {std::to_string(a->int_value) + " " + token_kind_spelling(e.op).substr(1, token_kind_spelling(e.op).size() - 2) + " " + std::to_string(b->int_value)});
      return error_value(e.range);
    }
    auto c = make(ValueKind::Const, t, e.range);
    c->int_value = r;
    return c;
  }
  auto v = make(ValueKind::Binary, t, e.range);
  v->binop = op;
  v->operands = {a, b};
  return v;
}

std::optional<std::int64_t> KernelChecker::const_int(const ast::Expr& e, const std::string& what) {
  const int before = diags_.error_count();
  ValuePtr v = expr(e);
  if (diags_.error_count() != before) return std::nullopt;
  if (v->kind != ValueKind::Const || !is_integer(v->type.elem)) {
    diags_.emit(DiagnosticKind::NotConstant, e.range, {what});
    return std::nullopt;
  }
  return v->int_value;
}

void KernelChecker::check_range_in_extent(const ValuePtr& idx, const ValuePtr& extent, const std::string& tensor,
                                          std::size_t dim, SourceRange where) {
  if (!idx || !extent || idx->kind != ValueKind::VarRef) return;
  const auto it = range_bounds_.find(idx->var);
  if (it == range_bounds_.end() || !it->second.first) return;
  const Value* bound = it->second.first.get();
  while (bound->kind == ValueKind::Cast && !bound->operands.empty()) bound = bound->operands[0].get();
  bool past = false;
  if (bound->kind == ValueKind::Const && extent->kind == ValueKind::Const) {
    past = bound->int_value > extent->int_value;
  } else if (bound->kind == ValueKind::Binary && bound->binop == BinOp::add && bound->operands.size() == 2) {
    const Value& a = *bound->operands[0];
    const Value& b = *bound->operands[1];
    past = (b.kind == ValueKind::Const && b.int_value > 0 && same_value(a, *extent)) ||
           (a.kind == ValueKind::Const && a.int_value > 0 && same_value(b, *extent));
  }
  if (!past) return;
  diags_.emit(DiagnosticKind::RangePastExtent, where,
              {out_.vars[static_cast<std::size_t>(idx->var)].name, std::string(diags_.source()->slice(it->second.second)),
               std::to_string(dim), tensor, std::string(diags_.source()->slice(extent->range))});
}

std::optional<View> KernelChecker::view(const ast::Expr& e, const std::string& what, bool gathered_ok,
                                        std::int64_t values_per_word) {
  if (e.kind != ast::ExprKind::Index) {
    diags_.emit(DiagnosticKind::ExpectedView, e.range, {what});
    return std::nullopt;
  }
  // gathered(A)[m, :]: every rank's A stacked by rank, read where it lies.
  const ast::Expr* outer = e.args[0].get();
  const bool gathered = outer->kind == ast::ExprKind::Call && outer->name == "gathered";  // no fn takes the name
  if (gathered) {
    if (outer->args.size() != 1 || !outer->named.empty() || outer->args[0]->kind != ast::ExprKind::Name) {
      diags_.emit(DiagnosticKind::GatheredNeedsSymmetric2D, outer->range, {"give it one tensor name: gathered(A)"});
      return std::nullopt;
    }
    if (!gathered_ok) {
      diags_.emit(DiagnosticKind::GatheredNotAPanel, e.range, {outer->args[0]->name});
      return std::nullopt;
    }
  }
  const ast::Expr& base = gathered ? *outer->args[0] : *outer;
  const Entity* ent = base.kind == ast::ExprKind::Name ? lookup(base.name) : nullptr;
  if (base.kind == ast::ExprKind::Name && !ent) {
    if (poisoned_.count(base.name)) diags_.count_followup();
    else diags_.emit(DiagnosticKind::UnknownName, base.range, {base.name});
    return std::nullopt;
  }
  if (!ent || ent->kind != EntityKind::Param || !out_.params[static_cast<std::size_t>(ent->index)].is_tensor) {
    diags_.emit(DiagnosticKind::NotIndexable, base.range,
                {base.kind == ast::ExprKind::Name ? "'" + base.name + "'" : std::string("this expression")});
    return std::nullopt;
  }
  const Param& p = out_.params[static_cast<std::size_t>(ent->index)];
  const std::size_t dims = p.dims.size();
  if (gathered && (!p.symmetric || dims != 2)) {
    diags_.emit(DiagnosticKind::GatheredNeedsSymmetric2D, base.range,
                {"'" + base.name + "' is " + (p.symmetric ? "symmetric with " + std::to_string(dims) + " dimension(s)"
                                                          : std::string("local (declare it 'symmetric tensor')"))});
    return std::nullopt;
  }
  if (e.args.size() - 1 != dims) {
    diags_.emit(DiagnosticKind::WrongIndexCount, e.range,
                {base.name, std::to_string(dims), std::to_string(e.args.size() - 1)});
    return std::nullopt;
  }
  View v;
  v.param = ent->index;
  v.gathered = gathered;
  // Each index: a range, a ':' slice, or an integer.
  std::vector<ValuePtr> idxs(dims);
  std::vector<bool> slice(dims, false);
  int ranges = 0, slices = 0;
  for (std::size_t d = 0; d < dims; ++d) {
    if (e.args[d + 1]->kind == ast::ExprKind::Slice) {
      slice[d] = true;
      ++slices;
      continue;
    }
    idxs[d] = expr(*e.args[d + 1]);
    if (idxs[d]->error) return std::nullopt;
    if (idxs[d]->type.kind == TypeKind::Range) ++ranges;
  }
  auto extent_of = [&](std::size_t d) -> ValuePtr {
    if (d + 1 != dims || values_per_word == 1) return p.dims[d];
    if (p.dims[d]->kind == ValueKind::Const) return int_const(p.dims[d]->int_value * values_per_word, p.dims[d]->range);
    return mul_add(p.dims[d], int_const(values_per_word, p.dims[d]->range), nullptr, p.dims[d]->range);
  };
  // 2-D tensors: x[m, n] (a 2-D tile), A[m, :] and B[:, n] (matmul panels).
  if (dims == 2 && (slices > 0 || ranges == 2)) return view_2d(e, v, p, base.name, idxs, slice);
  if (gathered) {
    diags_.emit(DiagnosticKind::GatheredNotAPanel, e.range, {base.name});
    return std::nullopt;
  }
  if (slices) {
    diags_.emit(DiagnosticKind::BadIndex, e.range, {"a ':' slice outside a 2-D matmul operand (A[m, :] or B[:, n])"});
    return std::nullopt;
  }
  if (ranges == 2) {
    for (std::size_t d = 0, seen = 0; d < dims; ++d) {
      if (idxs[d]->type.kind == TypeKind::Range && ++seen == 2) {
        diags_.emit(DiagnosticKind::TwoRangeIndexes, e.args[d + 1]->range);
      }
    }
    return std::nullopt;
  }
  if (ranges > 2) {
    diags_.emit(DiagnosticKind::TwoRangeIndexes, e.range);
    return std::nullopt;
  }
  ValuePtr offset;
  for (std::size_t d = 0; d < dims; ++d) {
    ValuePtr idx = idxs[d];
    ValuePtr start;
    if (idx->type.kind == TypeKind::Range) {
      if (d + 1 != dims) {
        diags_.emit(DiagnosticKind::RangeNotLastIndex, e.args[d + 1]->range);
        return std::nullopt;
      }
      v.size = idx->type.size;
      start = range_start(idx);
      v.extent = range_extent(idx);
    } else if (idx->type.is_scalar() && is_integer(idx->type.elem)) {
      start = coerce(idx, ScalarType::int_, idx->range);
    } else {
      diags_.emit(DiagnosticKind::BadIndex, e.args[d + 1]->range, {type_name(idx->type)});
      return std::nullopt;
    }
    if (dims > 1) v.index.push_back(start);
    check_range_in_extent(idx, extent_of(d), base.name, d, e.args[d + 1]->range);
    offset = offset ? mul_add(offset, extent_of(d), start, e.range) : start;
  }
  v.offset = offset;
  return v;
}

// The view of a 2-D tensor: x[m, n] (a 2-D tile), A[m, :] and B[:, n] (matmul panels);
// `v` has its tensor, `idxs` and `slice` say what each index is.
std::optional<View> KernelChecker::view_2d(const ast::Expr& e, View v, const Param& p, const std::string& tensor,
                                           const std::vector<ValuePtr>& idxs, const std::vector<bool>& slice) {
  auto extent_of = [&](std::size_t d) { return p.dims[d]; };
  const bool r0 = !slice[0] && idxs[0]->type.kind == TypeKind::Range;
  const bool r1 = !slice[1] && idxs[1]->type.kind == TypeKind::Range;
  if (!((r0 && r1) || (r0 && slice[1]) || (slice[0] && r1))) {
    diags_.emit(DiagnosticKind::BadIndex, e.range,
                {"this combination (a ':' slice goes with a range in the other dimension: A[m, :], B[:, n])"});
    return std::nullopt;
  }
  v.ld = extent_of(1);
  if (r0) check_range_in_extent(idxs[0], extent_of(0), tensor, 0, e.args[1]->range);
  if (r1) check_range_in_extent(idxs[1], extent_of(1), tensor, 1, e.args[2]->range);
  if (r0) {
    v.rows = idxs[0]->type.size;
    v.row_extent = range_extent(idxs[0]);
  }
  if (r1) {
    v.size = idxs[1]->type.size;
    v.extent = range_extent(idxs[1]);
  }
  if (v.gathered && !(r0 && slice[1])) {
    diags_.emit(DiagnosticKind::GatheredNotAPanel, e.range, {tensor});
    return std::nullopt;
  }
  const auto zero = [&] { return int_const(0, e.range); };
  v.index = {slice[0] ? zero() : range_start(idxs[0]), slice[1] ? zero() : range_start(idxs[1])};
  if (slice[1]) {
    v.slice_dim = 1;
    v.full = extent_of(1);
    v.offset = mul_add(range_start(idxs[0]), v.ld, nullptr, e.range);
  } else if (slice[0]) {
    v.slice_dim = 0;
    v.full = extent_of(0);
    v.offset = range_start(idxs[1]);
  } else {
    v.offset = mul_add(range_start(idxs[0]), v.ld, range_start(idxs[1]), e.range);
  }
  return v;
}

// The first index and the valid count of a range, and a * m + b, as index arithmetic.
ValuePtr KernelChecker::range_start(const ValuePtr& r) {
  auto st = make(ValueKind::RangeStart, Type::scalar(ScalarType::int_), r->range);
  st->operands.push_back(r);
  return st;
}

ValuePtr KernelChecker::range_extent(const ValuePtr& r) {
  auto ex = make(ValueKind::RangeExtent, Type::scalar(ScalarType::int_), r->range);
  ex->operands.push_back(r);
  return ex;
}

ValuePtr KernelChecker::mul_add(ValuePtr a, ValuePtr m, ValuePtr b, SourceRange where) {
  auto mul = make(ValueKind::Binary, Type::scalar(ScalarType::int_), where);
  mul->binop = BinOp::mul;
  mul->operands = {std::move(a), std::move(m)};
  if (!b) return mul;
  auto add = make(ValueKind::Binary, Type::scalar(ScalarType::int_), where);
  add->binop = BinOp::add;
  add->operands = {mul, std::move(b)};
  return add;
}

const ast::Expr* KernelChecker::named(const ast::Expr& call, const char* name) const {
  for (const ast::NamedArg& n : call.named) {
    if (n.name == name) return n.value.get();
  }
  return nullptr;
}

bool KernelChecker::check_named(const ast::Expr& call, std::initializer_list<const char*> allowed) {
  bool ok = true;
  for (std::size_t i = 0; i < call.named.size(); ++i) {
    const ast::NamedArg& n = call.named[i];
    bool known = false;
    for (const char* a : allowed) known |= n.name == a;
    if (!known) {
      diags_.emit(DiagnosticKind::UnknownNamedArgument, n.name_range, {call.name, n.name});
      ok = false;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (call.named[j].name == n.name) {
        diags_.emit(DiagnosticKind::DuplicateNamedArgument, n.name_range, {n.name});
        ok = false;
      }
    }
  }
  return ok;
}

ValuePtr KernelChecker::rank_arg(const ast::Expr& call, const char* which, const View& v) {
  const ast::Expr* r = named(call, which);
  if (!r) return nullptr;
  const Param& p = out_.params[static_cast<std::size_t>(v.param)];
  if (!p.symmetric) {
    diags_.emit(DiagnosticKind::RemoteOnLocalTensor, r->range, {which, p.name});
    return nullptr;
  }
  ValuePtr rank = expr(*r);
  if (!rank->type.is_scalar() || !is_integer(rank->type.elem)) {
    diags_.emit(DiagnosticKind::TypeMismatch, r->range, {type_name(rank->type), "int", " (a rank is an integer)"});
    return nullptr;
  }
  return coerce(rank, ScalarType::int_, r->range);
}

Order KernelChecker::order_arg(const ast::Expr& call, Order dflt) {
  const ast::Expr* o = named(call, "order");
  if (!o) return dflt;
  const char* names[] = {"relaxed", "acquire", "release", "acq_rel"};
  for (int i = 0; i < 4; ++i) {
    if (o->kind == ast::ExprKind::Name && o->name == names[i]) return static_cast<Order>(i);
  }
  diags_.emit(DiagnosticKind::BadNamedValue, o->range,
              {std::string(diags_.source()->slice(o->range)), "memory order", "relaxed, acquire, release or acq_rel"});
  return dflt;
}

Scope KernelChecker::scope_arg(const ast::Expr& call, Scope dflt) {
  const ast::Expr* s = named(call, "scope");
  if (!s) return dflt;
  const char* names[] = {"block", "device", "system"};
  for (int i = 0; i < 3; ++i) {
    if (s->kind == ast::ExprKind::Name && s->name == names[i]) return static_cast<Scope>(i);
  }
  diags_.emit(DiagnosticKind::BadNamedValue, s->range,
              {std::string(diags_.source()->slice(s->range)), "scope", "block, device or system"});
  return dflt;
}

}  // namespace irisc::sema
