// Statement checking: let/assign, loops (blocks, ranks, peers, range), if, roles, and
// call statements.
#include "compiler/sema/sema_state.hpp"

namespace irisc::sema {

using namespace tir;

namespace {

StmtPtr new_stmt(StmtKind k, SourceRange r) {
  auto s = std::make_unique<Stmt>();
  s->kind = k;
  s->range = r;
  return s;
}

}  // namespace

bool power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

void KernelChecker::block(const std::vector<ast::StmtPtr>& body, std::vector<StmtPtr>& out, bool top_level) {
  for (const ast::StmtPtr& s : body) {
    if (diags_.too_many_errors()) return;
    stmt(*s, out, top_level);
  }
}

void KernelChecker::stmt(const ast::Stmt& s, std::vector<StmtPtr>& out, bool top_level) {
  using ast::StmtKind;
  // Functions called inside this statement's expressions put their statements before it.
  struct Into {
    std::vector<StmtPtr>*& slot;
    std::vector<StmtPtr>* saved;
    ~Into() { slot = saved; }
  } into{stmts_, stmts_};
  stmts_ = &out;
  switch (s.kind) {
    case StmtKind::Let: return stmt_let(s, out);
    case StmtKind::Assign: return stmt_assign(s, out);
    case StmtKind::Expr: {
      if (s.value->kind == ast::ExprKind::Call) {
        call(*s.value, true, &out);
      } else {
        expr(*s.value);  // diagnostics only; a bare expression does nothing
      }
      return;
    }
    case StmtKind::If: return stmt_if(s, out);
    case StmtKind::Role: {
      diags_.emit(DiagnosticKind::RoleOutsideKernelBody, s.range);
      return;
    }
    case StmtKind::Return: {
      // A function's final return is taken by inline_call; any other is misplaced.
      diags_.emit(inlining_.empty() ? DiagnosticKind::ReturnOutsideFunction : DiagnosticKind::ReturnNotLast, s.range);
      return;
    }
    case StmtKind::For: return for_loop(s, out);
  }
  (void)top_level;
}

// let name = value.
void KernelChecker::stmt_let(const ast::Stmt& s, std::vector<StmtPtr>& out) {
  ValuePtr v = expr(*s.value);
  if (v->type.kind == TypeKind::Void) return;
  const int var = new_var(s.name, v->type, true);
  out_.vars[static_cast<std::size_t>(var)].error = v->error;
  declare(s.name, Entity{EntityKind::Var, var, 0, Builtin::rank, s.name_range});
  auto st = new_stmt(tir::StmtKind::Let, s.range);
  st->var = var;
  st->value = v;
  out.push_back(std::move(st));
}

// name = value, name op= value.
void KernelChecker::stmt_assign(const ast::Stmt& s, std::vector<StmtPtr>& out) {
  const Entity* ent = lookup(s.name);
  ValuePtr v = expr(*s.value);
  if (!ent) {
    diags_.emit(DiagnosticKind::UnknownName, s.name_range, {s.name});
    return;
  }
  if (ent->kind != EntityKind::Var || !out_.vars[static_cast<std::size_t>(ent->index)].mutable_) {
    diags_.emit(DiagnosticKind::AssignToImmutable, s.name_range, {s.name});
    return;
  }
  const Type target = out_.vars[static_cast<std::size_t>(ent->index)].type;
  if (s.assign_op != TokenKind::Eq) {
    auto cur = make(ValueKind::VarRef, target, s.name_range);
    cur->var = ent->index;
    if (v->type.elem != target.elem) v = coerce(v, target.elem, s.value->range);
    auto bin = make(ValueKind::Binary, target, s.range);
    bin->binop = s.assign_op == TokenKind::PlusEq    ? BinOp::add
                 : s.assign_op == TokenKind::MinusEq ? BinOp::sub
                 : s.assign_op == TokenKind::StarEq  ? BinOp::mul
                                                     : BinOp::div;
    bin->operands = {cur, v};
    v = bin;
  } else if (v->type.elem != target.elem) {
    v = coerce(v, target.elem, s.value->range);
  }
  if (v->type.kind != target.kind || (target.is_tile() && v->type.is_tile() && v->type.size != target.size)) {
    if (target.is_tile() && v->type.is_tile()) {
      diags_.emit(DiagnosticKind::TileShapeMismatch, s.range, {std::to_string(target.size), std::to_string(v->type.size)});
    } else if (!(target.is_tile() && v->type.is_scalar())) {
      diags_.emit(DiagnosticKind::TypeMismatch, s.range, {type_name(target), type_name(v->type), ""});
    }
    if (!(target.is_tile() && v->type.is_scalar())) return;
  }
  auto st = new_stmt(tir::StmtKind::Assign, s.range);
  st->var = ent->index;
  st->value = v;
  out.push_back(std::move(st));
  return;
}

// if cond { ... } else { ... }.
void KernelChecker::stmt_if(const ast::Stmt& s, std::vector<StmtPtr>& out) {
  ValuePtr c = expr(*s.cond);
  if (!c->type.is_scalar() || c->type.elem != ScalarType::boolean) {
    diags_.emit(DiagnosticKind::ConditionNotBool, s.cond->range, {type_name(c->type)});
  }
  auto st = new_stmt(tir::StmtKind::If, s.range);
  st->value = c;
  push();
  block(s.body, st->body, false);
  pop();
  push();
  block(s.else_body, st->else_body, false);
  pop();
  out.push_back(std::move(st));
}

// for ... in blocks(N, B), ranks, peers, range(...), chunks(...), tiles(...).
void KernelChecker::for_loop(const ast::Stmt& s, std::vector<StmtPtr>& out) {
  const ast::Expr& it = *s.iter;
  const std::size_t nvars = s.loop_vars.size() + (s.index_var ? 1 : 0);
  auto want_vars = [&](const char* what, std::size_t n) {
    if (nvars == n) return true;
    diags_.emit(DiagnosticKind::LoopVariableCount, s.range, {what, std::to_string(n), std::to_string(nvars)});
    return false;
  };
  StmtPtr st;
  Type var_type = Type::scalar(ScalarType::int_);
  if (it.kind == ast::ExprKind::Call && it.name == "blocks") {
    if (!want_vars("blocks(N, B)", 1)) return;
    if (it.args.size() != 2 || !it.named.empty()) {
      diags_.emit(DiagnosticKind::WrongArgumentCount, it.range, {"blocks", "2", std::to_string(it.args.size())});
      return;
    }
    ValuePtr bound = expr(*it.args[0]);
    if (!bound->type.is_scalar() || !is_integer(bound->type.elem)) {
      diags_.emit(DiagnosticKind::TypeMismatch, it.args[0]->range, {type_name(bound->type), "int", " (blocks needs an integer extent)"});
      return;
    }
    const int before = diags_.error_count();
    ValuePtr size = expr(*it.args[1]);
    if (diags_.error_count() != before) return;
    if (size->kind != ValueKind::Const) {
      diags_.emit(DiagnosticKind::TileSizeNotConstant, it.args[1]->range, {"'" + std::string(diags_.source()->slice(it.args[1]->range)) + "'"});
      return;
    }
    const std::int64_t b = size->int_value;
    if (!power_of_two(b) || b < 32 || b > 16384) {
      diags_.emit(DiagnosticKind::TileSizeInvalid, it.args[1]->range,
                  {std::to_string(b), "1-D tiles must be a power of two from 32 to 16384 elements"});
      return;
    }
    st = new_stmt(tir::StmtKind::ForBlocks, s.range);
    st->hi = coerce(bound, ScalarType::int_, it.args[0]->range);
    st->step = b;
    st->persistent = s.persistent;
    var_type = Type::range(b);
  } else if (it.kind == ast::ExprKind::Name && (it.name == "ranks" || it.name == "peers") && !lookup(it.name)) {
    if (!want_vars(it.name.c_str(), 1)) return;
    st = new_stmt(tir::StmtKind::ForRanks, s.range);
    st->peers_only = it.name == "peers";
  } else if (it.kind == ast::ExprKind::Call && it.name == "range") {
    if (!want_vars("range(...)", 1)) return;
    if (it.args.empty() || it.args.size() > 3 || !it.named.empty()) {
      diags_.emit(DiagnosticKind::WrongArgumentCount, it.range, {"range", "1 to 3", std::to_string(it.args.size())});
      return;
    }
    st = new_stmt(tir::StmtKind::ForRange, s.range);
    ValuePtr lo = it.args.size() >= 2 ? expr(*it.args[0]) : int_const(0, it.range);
    ValuePtr hi = expr(*it.args[it.args.size() >= 2 ? 1 : 0]);
    ValuePtr step = it.args.size() == 3 ? expr(*it.args[2]) : nullptr;
    for (ValuePtr* v : {&lo, &hi, &step}) {
      if (!*v) continue;
      if ((*v)->error) return;
      if (!(*v)->type.is_scalar() || !is_integer((*v)->type.elem)) {
        diags_.emit(DiagnosticKind::TypeMismatch, it.range, {type_name((*v)->type), "int", " (range bounds and steps are integers)"});
        return;
      }
      *v = coerce(*v, ScalarType::int_, it.range);
    }
    if (step && step->kind == ValueKind::Const && step->int_value <= 0) {
      diags_.emit(DiagnosticKind::BadNamedValue, it.args[2]->range,
                  {std::to_string(step->int_value), "range step", "a positive integer"});
      return;
    }
    st->lo = lo;
    st->hi = hi;
    st->stride = step;
  } else if (it.kind == ast::ExprKind::Call && it.name == "chunks") {
    // for j in chunks(lo, hi, B): the B-element ranges of [lo, hi), in order, each one
    // walked by every program (blocks(N, B) spreads them over the programs instead).
    if (!want_vars("chunks(lo, hi, B)", 1)) return;
    if (it.args.size() != 3 || !it.named.empty()) {
      diags_.emit(DiagnosticKind::WrongArgumentCount, it.range, {"chunks", "3", std::to_string(it.args.size())});
      return;
    }
    ValuePtr bounds[2];
    for (int d = 0; d < 2; ++d) {
      bounds[d] = expr(*it.args[static_cast<std::size_t>(d)]);
      if (bounds[d]->error) return;
      if (!bounds[d]->type.is_scalar() || !is_integer(bounds[d]->type.elem)) {
        diags_.emit(DiagnosticKind::TypeMismatch, it.args[static_cast<std::size_t>(d)]->range,
                    {type_name(bounds[d]->type), "int", " (chunks needs integer bounds)"});
        return;
      }
      bounds[d] = coerce(bounds[d], ScalarType::int_, it.args[static_cast<std::size_t>(d)]->range);
    }
    const int before = diags_.error_count();
    ValuePtr size = expr(*it.args[2]);
    if (diags_.error_count() != before) return;
    if (size->kind != ValueKind::Const) {
      diags_.emit(DiagnosticKind::TileSizeNotConstant, it.args[2]->range, {"'" + std::string(diags_.source()->slice(it.args[2]->range)) + "'"});
      return;
    }
    const std::int64_t b = size->int_value;
    if (!power_of_two(b) || b < 16 || b > 16384) {
      diags_.emit(DiagnosticKind::TileSizeInvalid, it.args[2]->range,
                  {std::to_string(b), "a chunk is a power of two from 16 (a 2-D tile side) to 16384 elements"});
      return;
    }
    st = new_stmt(tir::StmtKind::ForChunks, s.range);
    st->lo = bounds[0];
    st->hi = bounds[1];
    st->step = b;
    var_type = Type::range(b);
  } else if (it.kind == ast::ExprKind::Call && it.name == "tiles") {
    for_tiles(s, out);
    return;
  } else {
    const int before = diags_.error_count();
    ValuePtr v = expr(it);
    if (diags_.error_count() == before) {  // else the expression's own error says enough
      diags_.emit(DiagnosticKind::NotIterable, it.range,
                  {it.kind == ast::ExprKind::Call ? it.name + "(...)" : type_name(v->type)});
    }
    return;
  }
  push();
  const ast::LoopVar& lv = s.loop_vars.empty() ? *s.index_var : s.loop_vars[0];
  st->var = new_var(lv.name, var_type, false);
  if (st->kind == tir::StmtKind::ForBlocks) range_bounds_[st->var] = {st->hi, it.args[0]->range};
  declare(lv.name, Entity{EntityKind::Var, st->var, 0, Builtin::rank, lv.range});
  ++loop_depth_;
  block(s.body, st->body, false);
  --loop_depth_;
  pop();
  out.push_back(std::move(st));
}

// for [t,] (m, n) in tiles([M, N], [BM, BN] [, from_row: R]): row-major tiles over the
// programs, the walk rotated to start at the tile row holding row R.
void KernelChecker::for_tiles(const ast::Stmt& s, std::vector<StmtPtr>& out) {
  const ast::Expr& it = *s.iter;
  if (s.loop_vars.size() != 2) {
    diags_.emit(DiagnosticKind::LoopVariableCount, s.range, {"tiles([M, N], [BM, BN])", "2", std::to_string(s.loop_vars.size())});
    return;
  }
  if (it.args.size() != 2 || it.args[0]->kind != ast::ExprKind::List || it.args[1]->kind != ast::ExprKind::List ||
      it.args[0]->args.size() != 2 || it.args[1]->args.size() != 2) {
    diags_.emit(DiagnosticKind::WrongArgumentCount, it.range, {"tiles([M, N], [BM, BN])", "2 lists of 2", std::to_string(it.args.size())});
    return;
  }
  if (!check_named(it, {"from_row"})) return;
  // from_row: R, the walk's first tile row (the one holding row R modulo M).
  ValuePtr from_row;
  if (const ast::Expr* r = named(it, "from_row")) {
    from_row = expr(*r);
    if (from_row->error) return;
    if (!from_row->type.is_scalar() || !is_integer(from_row->type.elem)) {
      diags_.emit(DiagnosticKind::TypeMismatch, r->range, {type_name(from_row->type), "int", " (from_row is a row)"});
      return;
    }
    from_row = coerce(from_row, ScalarType::int_, r->range);
  }
  ValuePtr bounds[2];
  std::int64_t steps[2];
  for (int d = 0; d < 2; ++d) {
    bounds[d] = expr(*it.args[0]->args[static_cast<std::size_t>(d)]);
    if (bounds[d]->error) return;
    if (!bounds[d]->type.is_scalar() || !is_integer(bounds[d]->type.elem)) {
      diags_.emit(DiagnosticKind::TypeMismatch, it.args[0]->args[static_cast<std::size_t>(d)]->range,
                  {type_name(bounds[d]->type), "int", " (tiles needs integer extents)"});
      return;
    }
    bounds[d] = coerce(bounds[d], ScalarType::int_, it.range);
    const ast::Expr& se = *it.args[1]->args[static_cast<std::size_t>(d)];
    const int before = diags_.error_count();
    ValuePtr step = expr(se);
    if (diags_.error_count() != before) return;
    if (step->kind != ValueKind::Const) {
      diags_.emit(DiagnosticKind::TileSizeNotConstant, se.range, {"'" + std::string(diags_.source()->slice(se.range)) + "'"});
      return;
    }
    steps[d] = step->int_value;
    if (!power_of_two(steps[d]) || steps[d] < 16 || steps[d] > 256) {
      diags_.emit(DiagnosticKind::TileSizeInvalid, se.range,
                  {std::to_string(steps[d]), "2-D tile sides must be powers of two from 16 to 256"});
      return;
    }
  }
  if (steps[0] * steps[1] > 32768) {
    diags_.emit(DiagnosticKind::TileSizeInvalid, it.args[1]->range,
                {std::to_string(steps[0]) + " x " + std::to_string(steps[1]), "a 2-D tile holds at most 32768 elements"});
    return;
  }
  StmtPtr st = new_stmt(tir::StmtKind::ForTiles, s.range);
  st->hi = bounds[0];
  st->hi2 = bounds[1];
  st->step = steps[0];
  st->step2 = steps[1];
  st->lo = from_row;
  st->persistent = s.persistent;
  push();
  if (s.index_var) {
    st->var_t = new_var(s.index_var->name, Type::scalar(ScalarType::int_), false);
    declare(s.index_var->name, Entity{EntityKind::Var, st->var_t, 0, Builtin::rank, s.index_var->range});
  }
  st->var = new_var(s.loop_vars[0].name, Type::range(steps[0]), false);
  declare(s.loop_vars[0].name, Entity{EntityKind::Var, st->var, 0, Builtin::rank, s.loop_vars[0].range});
  st->var2 = new_var(s.loop_vars[1].name, Type::range(steps[1]), false);
  declare(s.loop_vars[1].name, Entity{EntityKind::Var, st->var2, 0, Builtin::rank, s.loop_vars[1].range});
  ++loop_depth_;
  block(s.body, st->body, false);
  --loop_depth_;
  pop();
  out.push_back(std::move(st));
}

}  // namespace irisc::sema
