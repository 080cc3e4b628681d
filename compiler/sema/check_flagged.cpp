// Data-and-flag words (NCCL's LL protocol, as a language feature): 4 bytes of data (a
// value of 4 bytes, or two of 2) travel in the low half of a 64-bit word whose high half
// is a flag, written with one store, so a receiver that polls the word until the flag
// is the one it expects has the data too: no fence, no separate flag, one trip over the
// link.
//
//   store(words[j], v, to: r, flag: e);   // words: symmetric tensor<u64>, v: tile<T>
//   let v = load<T>(words[j], flag: e);   // this rank's words; waits for the flag
//
// For 16-bit values the last index counts values, two to a word (values 2w and 2w + 1
// of a row are word w): a row of M words holds 2M of them, and a view of them is a
// tile of even size from an even start.
#include "compiler/sema/sema_state.hpp"

namespace irisc::sema {

using namespace tir;

namespace {

// The flag: a scalar integer, converted to u64 (its low 32 bits are what goes in a word).
bool flag_ok(const Value& v) { return v.type.is_scalar() && is_integer(v.type.elem); }

// Values of T a word holds: two of a 16-bit type, else one.
std::int64_t per_word(ScalarType t) { return byte_size(t) == 2 ? 2 : 1; }

}  // namespace

// The words of a flagged access of values of type t: a plain 1-D view of a tensor<u64>,
// counted in values (two 16-bit ones a word), and for 16-bit values a tile of even size
// (a single one would leave half a word for another store to overwrite). `access` says
// what the access does to the words ("a flagged store writes").
std::optional<View> KernelChecker::flagged_words(const ast::Expr& arg, const std::string& fn, ScalarType t,
                                                 const char* access) {
  auto v = view(arg, fn, false, per_word(t));
  if (!v || !plain_view(*v, arg.range)) return std::nullopt;
  const Param& p = out_.params[static_cast<std::size_t>(v->param)];
  if (p.elem != ScalarType::u64 || v->rows) {
    diags_.emit(DiagnosticKind::BadFlaggedAccess, arg.range,
                {std::string(access) + " 64-bit words: its view must be of a tensor<u64> (one word per element), not " +
                 std::string(ast::scalar_type_name(p.elem)) + (v->rows ? " in 2-D" : "")});
    return std::nullopt;
  }
  if (per_word(t) == 1 || (v->size > 0 && v->size % 2 == 0)) return v;
  diags_.emit(DiagnosticKind::BadFlaggedAccess, arg.range,
              {"two " + std::string(ast::scalar_type_name(t)) + " values share a word, written and read whole: give a "
               "tile of even size, not " + (v->size ? "a tile of " + std::to_string(v->size) : std::string("a single value"))});
  return std::nullopt;
}

// The call's flag: a scalar integer, as u64; null after a diagnostic.
ValuePtr KernelChecker::flagged_flag(const ast::Expr& call) {
  const ast::Expr* f = named(call, "flag");
  ValuePtr flag = expr(*f);
  if (flag->error) return nullptr;
  if (!flag_ok(*flag)) {
    diags_.emit(DiagnosticKind::BadFlaggedAccess, f->range, {"the flag is a scalar integer, not " + type_name(flag->type)});
    return nullptr;
  }
  return coerce(flag, ScalarType::u64, f->range);
}

ValuePtr KernelChecker::store_flagged(const ast::Expr& e, bool as_statement, std::vector<StmtPtr>* stmts) {
  const std::string fn = "store";
  auto no_value = [&]() {
    if (!as_statement) diags_.emit(DiagnosticKind::NoValue, e.range, {fn});
    return error_value(e.range);
  };
  if (!check_named(e, {"to", "flag"})) return no_value();
  if (e.args.size() != 2) {
    diags_.emit(DiagnosticKind::WrongArgumentCount, e.range, {fn, "2", std::to_string(e.args.size())});
    return no_value();
  }
  // The value first: its element size says how the view counts (two 16-bit values a word).
  ValuePtr value = expr(*e.args[1]);
  if (value->error) return no_value();
  if (value->type.kind != TypeKind::Scalar && value->type.kind != TypeKind::Tile) {
    diags_.emit(DiagnosticKind::TypeMismatch, e.args[1]->range, {type_name(value->type), "a value", ""});
    return no_value();
  }
  if (value->type.rows || byte_size(value->type.elem) > 4 || value->type.elem == ScalarType::int_) {
    diags_.emit(DiagnosticKind::BadFlaggedAccess, e.args[1]->range,
                {"a word carries a value of at most 4 bytes (f32, f16, bf16, i32, u32) beside its flag, not " +
                 type_name(value->type)});
    return no_value();
  }
  auto dst = flagged_words(*e.args[0], fn, value->type.elem, "a flagged store writes");
  if (!dst) return no_value();
  if (value->type.is_tile() && value->type.size != dst->size) {
    diags_.emit(DiagnosticKind::TileShapeMismatch, e.range, {shape_text(value->type), dst->size ? shape_text(view_type(*dst, ScalarType::u64)) : "1"});
    return no_value();
  }
  if (value->type.is_scalar() && dst->size) {
    diags_.emit(DiagnosticKind::BadFlaggedAccess, e.args[1]->range,
                {"a flagged store of a tile view takes a tile of the same size, not a scalar"});
    return no_value();
  }
  ValuePtr flag = flagged_flag(e);
  if (!flag) return no_value();
  if (!as_statement) return no_value();
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::StoreFlagged;
  s->range = e.range;
  s->view = *dst;
  s->value = value;
  s->rank = rank_arg(e, "to", *dst);
  s->flag = flag;
  stmts->push_back(std::move(s));
  return nullptr;
}

ValuePtr KernelChecker::load_flagged(const ast::Expr& e) {
  const std::string fn = "load";
  if (!check_named(e, {"flag", "from", "other"})) return error_value(e.range);
  if (const ast::Expr* from = named(e, "from")) {
    diags_.emit(DiagnosticKind::BadFlaggedAccess, from->range,
                {"a flagged load polls this rank's words until their flag arrives; it takes no 'from:'"});
    return error_value(e.range);
  }
  if (const ast::Expr* other = named(e, "other")) {
    diags_.emit(DiagnosticKind::BadFlaggedAccess, other->range, {"a flagged load's masked elements read 0; it takes no 'other:'"});
    return error_value(e.range);
  }
  if (e.args.size() != 1) {
    diags_.emit(DiagnosticKind::WrongArgumentCount, e.range, {fn, "1", std::to_string(e.args.size())});
    return error_value(e.range);
  }
  const ScalarType t = e.type_arg ? resolve(*e.type_arg) : ScalarType::u32;
  if (byte_size(t) > 4 || t == ScalarType::int_) {
    diags_.emit(DiagnosticKind::BadFlaggedAccess, e.range,
                {"a word carries a value of at most 4 bytes (f32, f16, bf16, i32, u32), not " + std::string(ast::scalar_type_name(t))});
    return error_value(e.range);
  }
  auto v = flagged_words(*e.args[0], fn, t, "a flagged load reads");
  if (!v) return error_value(e.range);
  ValuePtr flag = flagged_flag(e);
  if (!flag) return error_value(e.range);
  auto result = make(ValueKind::LoadFlagged, v->size ? Type::tile(t, v->size) : Type::scalar(t), e.range);
  result->view = *v;
  result->operands.push_back(flag);
  return result;
}

}  // namespace irisc::sema
