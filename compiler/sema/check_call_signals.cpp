// Built-in calls that order and synchronize: signal, fence, wait.
#include "compiler/sema/sema_state.hpp"

namespace irisc::sema {

using namespace tir;

// signal(flag[i], v, to: r, op:, order:, scope:).
KernelChecker::Called KernelChecker::builtin_signal(const CallSite& site) {
  const ast::Expr& e = site.e;
  const std::string& fn = e.name;
  const bool as_statement = site.as_statement;
  std::vector<StmtPtr>* stmts = site.stmts;
  if (!check_named(e, {"to", "op", "order", "scope"}) || !want_args(site, 2)) return {no_value(site), true};
  auto ops = flag_operands(fn, *e.args[0], *e.args[1]);
  if (!ops) return {no_value(site), true};
  const View* flag = &ops->flag;
  const ValuePtr value = ops->value;
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::Signal;
  s->range = e.range;
  s->view = *flag;
  s->value = value;
  s->rank = rank_arg(e, "to", *flag);
  s->order = order_arg(e, Order::release);
  s->scope = scope_arg(e, Scope::system);
  if (s->order == Order::acquire || s->order == Order::acq_rel) {
    diags_.emit(DiagnosticKind::SignalWithAcquire, named(e, "order")->range, {name(s->order)});
  }
  // To another rank (anything but `to: rank`), only system scope orders anything.
  if (const ast::Expr* to = named(e, "to"); to && s->scope != Scope::system &&
                                              !(to->kind == ast::ExprKind::Name && to->name == "rank")) {
    diags_.emit(DiagnosticKind::NarrowScopeToPeer, named(e, "scope")->range, {name(s->scope)});
  }
  if (const ast::Expr* op = named(e, "op")) {
    if (op->kind == ast::ExprKind::Name && (op->name == "set" || op->name == "add")) {
      s->signal_op = op->name == "add" ? SignalOp::add : SignalOp::set;
    } else {
      diags_.emit(DiagnosticKind::BadNamedValue, op->range,
                  {std::string(diags_.source()->slice(op->range)), "signal op", "set or add"});
    }
  }
  if (!as_statement) return {no_value(site), true};
  stmts->push_back(std::move(s));
  return {nullptr, true};
}

// fence(scope:).
KernelChecker::Called KernelChecker::builtin_fence(const CallSite& site) {
  const ast::Expr& e = site.e;
  const bool as_statement = site.as_statement;
  std::vector<StmtPtr>* stmts = site.stmts;
  if (!check_named(e, {"scope"}) || !want_args(site, 0)) return {no_value(site), true};
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::Fence;
  s->range = e.range;
  s->order = Order::acq_rel;
  s->scope = scope_arg(e, Scope::system);
  if (!as_statement) return {no_value(site), true};
  stmts->push_back(std::move(s));
  return {nullptr, true};
}

// wait(flag[i] <cmp> v, order:, scope:).
KernelChecker::Called KernelChecker::builtin_wait(const CallSite& site) {
  const ast::Expr& e = site.e;
  const std::string& fn = e.name;
  const bool as_statement = site.as_statement;
  std::vector<StmtPtr>* stmts = site.stmts;
  if (!check_named(e, {"order", "scope", "from"}) || !want_args(site, 1)) return {no_value(site), true};
  if (const ast::Expr* f = named(e, "from")) {
    diags_.emit(DiagnosticKind::WaitOnRemote, f->range);
    return {no_value(site), true};
  }
  if (e.args[0]->kind == ast::ExprKind::Call && e.args[0]->name == "all") return {wait_all(site), true};
  const ast::Expr& c = *e.args[0];
  static const std::pair<TokenKind, Cmp> cmps[] = {{TokenKind::EqEq, Cmp::eq}, {TokenKind::NotEq, Cmp::ne},
                                                   {TokenKind::Greater, Cmp::gt}, {TokenKind::GreaterEq, Cmp::ge},
                                                   {TokenKind::Less, Cmp::lt}, {TokenKind::LessEq, Cmp::le}};
  std::optional<Cmp> cmp;
  if (c.kind == ast::ExprKind::Binary) {
    for (auto [tk, cm] : cmps) {
      if (c.op == tk) cmp = cm;
    }
  }
  if (!cmp || c.args[0]->kind != ast::ExprKind::Index) {
    diags_.emit(DiagnosticKind::WaitNeedsComparison, c.range);
    return {no_value(site), true};
  }
  auto ops = flag_operands(fn, *c.args[0], *c.args[1]);
  if (!ops) return {no_value(site), true};
  const View* flag = &ops->flag;
  const ValuePtr value = ops->value;
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::Wait;
  s->range = e.range;
  s->view = *flag;
  s->cmp = *cmp;
  s->value = value;
  s->order = order_arg(e, Order::acquire);
  s->scope = scope_arg(e, Scope::system);
  if (s->order == Order::release || s->order == Order::acq_rel) {
    diags_.emit(DiagnosticKind::WaitWithRelease, named(e, "order")->range, {name(s->order)});
  }
  if (!as_statement) return {no_value(site), true};
  stmts->push_back(std::move(s));
  return {nullptr, true};
}

namespace {

ast::ExprPtr clone(const ast::Expr& e) {
  auto c = std::make_unique<ast::Expr>();
  c->kind = e.kind;
  c->range = e.range;
  c->int_value = e.int_value;
  c->float_value = e.float_value;
  c->bool_value = e.bool_value;
  c->name = e.name;
  c->name_range = e.name_range;
  c->op = e.op;
  c->type_arg = e.type_arg;
  for (const ast::ExprPtr& a : e.args) c->args.push_back(clone(*a));
  for (const ast::NamedArg& n : e.named) c->named.push_back(ast::NamedArg{n.name, n.name_range, clone(*n.value)});
  return c;
}

}  // namespace

// wait(all(flag[r] <cmp> v for r in ranks), order:, scope:): until every flag holds, as
// the loop `for r in ranks { wait(flag[r] <cmp> v, order:, scope:); }` written out,
// which the generated code polls at once (a thread per iteration).
ValuePtr KernelChecker::wait_all(const CallSite& site) {
  const ast::Expr& e = site.e;
  const ast::Expr& all = *e.args[0];
  if (all.args.size() != 1 || !all.named.empty() || all.args[0]->kind != ast::ExprKind::Comprehension) {
    diags_.emit(DiagnosticKind::WaitNeedsComparison, all.range);
    return no_value(site);
  }
  if (!site.as_statement) return no_value(site);
  const ast::Expr& comp = *all.args[0];
  auto wait = std::make_unique<ast::Expr>();
  wait->kind = ast::ExprKind::Call;
  wait->range = e.range;
  wait->name = e.name;
  wait->name_range = e.name_range;
  wait->args.push_back(clone(*comp.args[0]));
  for (const ast::NamedArg& n : e.named) wait->named.push_back(ast::NamedArg{n.name, n.name_range, clone(*n.value)});
  auto body = std::make_unique<ast::Stmt>();
  body->kind = ast::StmtKind::Expr;
  body->range = e.range;
  body->value = std::move(wait);
  ast::Stmt loop;
  loop.kind = ast::StmtKind::For;
  loop.range = e.range;
  loop.iter = clone(*comp.args[1]);
  loop.loop_vars.push_back(ast::LoopVar{comp.name, comp.name_range});
  loop.body.push_back(std::move(body));
  stmt(loop, *site.stmts, false);
  return nullptr;
}

}  // namespace irisc::sema
