// Functions (`fn`): a call is inlined where it stands. The arguments are evaluated in
// the caller's scope, the parameters bound to them (tensors alias the caller's tensor,
// ranges and simple scalars are read where named, other values get an immutable
// variable), type and size parameters are inferred from the arguments, and the body is
// checked in a scope that sees only the built-ins and the function's own names. Its
// statements go into the statement list being built; a final `return v;` gives the
// call's value.
#include "compiler/sema/sema_state.hpp"

namespace irisc::sema {

using namespace tir;

namespace {

StmtPtr let_stmt(int var, ValuePtr value, SourceRange r) {
  auto s = std::make_unique<Stmt>();
  s->kind = tir::StmtKind::Let;
  s->range = r;
  s->var = var;
  s->value = std::move(value);
  return s;
}

// Values that cost nothing to read again where a parameter is named.
bool trivial(const Value& v) {
  switch (v.kind) {
    case ValueKind::Const:
    case ValueKind::ParamRef:
    case ValueKind::SizeRef:
    case ValueKind::VarRef:
    case ValueKind::BuiltinRef: return true;
    default: return false;
  }
}

// A `return` anywhere but as the last statement of the body.
const ast::Stmt* misplaced_return(const std::vector<ast::StmtPtr>& body, bool allow_last) {
  for (std::size_t i = 0; i < body.size(); ++i) {
    const ast::Stmt& s = *body[i];
    if (s.kind == ast::StmtKind::Return && !(allow_last && i + 1 == body.size())) return &s;
    if (const ast::Stmt* r = misplaced_return(s.body, false)) return r;
    if (const ast::Stmt* r = misplaced_return(s.else_body, false)) return r;
  }
  return nullptr;
}

}  // namespace

// Whether `call` of `fn` can be inlined here (after a diagnostic when not): not too
// deep, not recursive, in a statement, with the arguments `fn` takes.
bool KernelChecker::can_inline(const ast::Kernel& fn, const ast::Expr& call) {
  // Each inlined call is a few frames of the checker's recursion: a chain of thousands
  // of functions calling the next would exhaust the stack (of a rank's thread, through
  // the JIT) instead of being reported.
  constexpr std::size_t kMostNested = 128;
  if (inlining_.size() >= kMostNested) {
    diags_.emit(DiagnosticKind::NestingTooDeep, call.name_range,
                {"function calls", std::to_string(kMostNested),
                 " (" + inlining_.front()->name + " -> ... -> " + inlining_.back()->name + " -> " + fn.name + ")"});
    return false;
  }
  for (std::size_t i = 0; i < inlining_.size(); ++i) {
    if (inlining_[i] == &fn) {
      // Through others: name the way round (ping calls itself through pong).
      std::string through;
      for (std::size_t j = i + 1; j < inlining_.size(); ++j) through += (through.empty() ? "" : ", ") + inlining_[j]->name;
      Diagnostic& d = diags_.emit(DiagnosticKind::RecursiveCall, call.name_range,
                                  {fn.name, through.empty() ? "" : " through " + through});
      diags_.note(d, fn.name_range, "'" + fn.name + "' is defined here");
      return false;
    }
  }
  if (!stmts_) {
    diags_.emit(DiagnosticKind::CallNotAllowedHere, call.name_range, {fn.name});
    return false;
  }
  if (call.args.size() != fn.params.size()) {
    diags_.emit(DiagnosticKind::WrongArgumentCount, call.range,
                {fn.name, std::to_string(fn.params.size()), std::to_string(call.args.size())});
    return false;
  }
  // Named arguments give compile-time parameters: f(x, B: 64).
  for (std::size_t i = 0; i < call.named.size(); ++i) {
    const ast::NamedArg& n = call.named[i];
    bool known = false;
    for (const ast::ConstParam& c : fn.consts) known |= c.name == n.name && !c.is_type;
    if (!known) {
      diags_.emit(DiagnosticKind::UnknownNamedArgument, n.name_range, {fn.name, n.name});
      return false;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (call.named[j].name == n.name) {
        diags_.emit(DiagnosticKind::DuplicateNamedArgument, n.name_range, {n.name});
        return false;
      }
    }
  }
  return true;
}

// The arguments of `call`, evaluated in the caller's scope: tensors by their kernel
// parameter, the others as values; named arguments as constants (false after a
// diagnostic).
bool KernelChecker::call_arguments(const ast::Kernel& fn, const ast::Expr& call, std::vector<InlineArg>& args,
                                   std::vector<std::pair<std::string, std::int64_t>>& named_consts) {
  for (std::size_t i = 0; i < fn.params.size(); ++i) {
    const ast::Param& p = fn.params[i];
    const ast::Expr& a = *call.args[i];
    if (p.is_tensor) {
      const Entity* ent = a.kind == ast::ExprKind::Name ? lookup(a.name) : nullptr;
      if (!ent || ent->kind != EntityKind::Param || !out_.params[static_cast<std::size_t>(ent->index)].is_tensor) {
        diags_.emit(DiagnosticKind::BadFunctionArgument, a.range, {p.name, fn.name, "expected a tensor, as in f(x)"});
        return false;
      }
      args[i].tensor = ent->index;
      continue;
    }
    const int before = diags_.error_count();
    args[i].value = expr(a);
    if (diags_.error_count() != before || args[i].value->error) return false;
  }
  for (const ast::NamedArg& n : call.named) {
    auto v = const_int(*n.value, "compile-time argument '" + n.name + "'");
    if (!v) return false;
    named_consts.emplace_back(n.name, *v);
  }
  return true;
}

ValuePtr KernelChecker::inline_call(const ast::Kernel& fn, const ast::Expr& call, bool as_statement) {
  if (!can_inline(fn, call)) return error_value(call.range);
  auto arg_error = [&](SourceRange where, const std::string& param, const std::string& why) {
    diags_.emit(DiagnosticKind::BadFunctionArgument, where, {param, fn.name, why});
    return error_value(call.range);
  };

  std::vector<InlineArg> args(fn.params.size());
  std::vector<std::pair<std::string, std::int64_t>> named_consts;
  if (!call_arguments(fn, call, args, named_consts)) return error_value(call.range);

  // ---- the function's scope: built-ins, then its own names ------------------------------
  std::vector<std::map<std::string, Entity>> caller_scopes = std::move(scopes_);
  scopes_.clear();
  scopes_.push_back(caller_scopes.front());  // the built-ins
  push();
  inlining_.push_back(&fn);
  struct Restore {
    KernelChecker& kc;
    std::vector<std::map<std::string, Entity>>& saved;
    ~Restore() {
      kc.scopes_ = std::move(saved);
      kc.inlining_.pop_back();
    }
  } restore{*this, caller_scopes};

  // Compile-time parameters: named arguments, then defaults; types and sizes not given
  // are inferred from the arguments below.
  std::map<std::string, const ast::ConstParam*> pending;
  for (const ast::ConstParam& c : fn.consts) {
    if (c.is_type) {
      pending.emplace(c.name, &c);
      continue;
    }
    bool given = false;
    for (const auto& [name, value] : named_consts) {
      if (name == c.name) {
        declare(c.name, Entity{EntityKind::Const, -1, value, Builtin::rank, c.range});
        given = true;
      }
    }
    if (!given) pending.emplace(c.name, &c);
  }
  auto is_pending = [&](const std::string& name) { return pending.count(name) > 0; };
  auto bind_type = [&](const ast::TypeRef& t, ScalarType actual, SourceRange where, const std::string& param) {
    if (!t.name.empty() && is_pending(t.name) && pending[t.name]->is_type) {
      Entity e{EntityKind::Type, -1, 0, Builtin::rank, pending[t.name]->range};
      e.type = actual;
      declare(t.name, e);
      pending.erase(t.name);
      return true;
    }
    const ScalarType want = resolve(t);
    if (want == actual) return true;
    arg_error(where, param, std::string("expected ") + ast::scalar_type_name(want) + " elements, not " +
                                ast::scalar_type_name(actual));
    return false;
  };
  // An extent or a tile side: a bare pending name binds to the actual value; anything
  // else is checked where it is constant.
  auto bind_extent = [&](const ast::Expr& d, ValuePtr actual, SourceRange where, const std::string& param) {
    if (d.kind == ast::ExprKind::Name && is_pending(d.name) && !pending[d.name]->is_type) {
      if (actual->kind != ValueKind::Const) {
        arg_error(where, param, "'" + d.name + "' is a compile-time parameter, but this extent is only known at launch");
        return false;
      }
      declare(d.name, Entity{EntityKind::Const, -1, actual->int_value, Builtin::rank, d.range});
      pending.erase(d.name);
      return true;
    }
    if (d.kind == ast::ExprKind::Name && !lookup(d.name)) {
      Entity e{EntityKind::Value, -1, 0, Builtin::rank, d.range};
      e.bound = actual;
      declare(d.name, e);
      return true;
    }
    ValuePtr want = expr(d);
    if (want->error) return false;
    if (want->kind == ValueKind::Const && actual->kind == ValueKind::Const && want->int_value != actual->int_value) {
      arg_error(where, param, "expected extent " + std::to_string(want->int_value) + ", not " + std::to_string(actual->int_value));
      return false;
    }
    return true;
  };

  for (std::size_t i = 0; i < fn.params.size(); ++i) {
    const ast::Param& p = fn.params[i];
    const SourceRange where = call.args[i]->range;
    if (p.is_tensor) {
      const Param& kp = out_.params[static_cast<std::size_t>(args[i].tensor)];
      if (p.symmetric && !kp.symmetric) {
        return arg_error(where, p.name, "expected a symmetric tensor, but '" + kp.name + "' is local");
      }
      if (!bind_type(p.type, kp.elem, where, p.name)) return error_value(call.range);
      if (p.dims.size() != kp.dims.size()) {
        return arg_error(where, p.name, "expected " + std::to_string(p.dims.size()) + " dimension(s), but '" + kp.name +
                                            "' has " + std::to_string(kp.dims.size()));
      }
      for (std::size_t d = 0; d < p.dims.size(); ++d) {
        if (!bind_extent(*p.dims[d], kp.dims[d], where, p.name)) return error_value(call.range);
      }
      declare(p.name, Entity{EntityKind::Param, args[i].tensor, 0, Builtin::rank, p.range});
      continue;
    }
    ValuePtr v = args[i].value;
    if (p.is_range) {
      if (v->type.kind != TypeKind::Range) return arg_error(where, p.name, "expected a range, not " + type_name(v->type));
      Entity e{EntityKind::Value, -1, 0, Builtin::rank, p.range};
      e.bound = v;
      declare(p.name, e);
      continue;
    }
    if (p.is_tile) {
      if (!v->type.is_tile()) return arg_error(where, p.name, "expected a tile, not " + type_name(v->type));
      if (!bind_type(p.type, v->type.elem, where, p.name)) return error_value(call.range);
      if (!p.dims.empty()) {
        const std::size_t dims = v->type.rows ? 2 : 1;
        if (p.dims.size() != dims) {
          return arg_error(where, p.name, "expected a " + std::to_string(p.dims.size()) + "-D tile, not " + type_name(v->type));
        }
        if (dims == 2 && !bind_extent(*p.dims[0], int_const(v->type.rows, where), where, p.name)) return error_value(call.range);
        if (!bind_extent(*p.dims.back(), int_const(v->type.size, where), where, p.name)) return error_value(call.range);
      }
    } else {
      if (!v->type.is_scalar()) return arg_error(where, p.name, "expected a scalar, not " + type_name(v->type));
      if (!p.type.name.empty() && is_pending(p.type.name)) {
        if (!bind_type(p.type, v->type.elem, where, p.name)) return error_value(call.range);
      } else {
        v = coerce(v, resolve(p.type), where);
        if (v->error) return error_value(call.range);
      }
    }
    Entity e{EntityKind::Value, -1, 0, Builtin::rank, p.range};
    if (trivial(*v)) {
      e.bound = v;
    } else {
      const int var = new_var(p.name, v->type, false);
      stmts_->push_back(let_stmt(var, v, where));
      e = Entity{EntityKind::Var, var, 0, Builtin::rank, p.range};
    }
    declare(p.name, e);
  }
  if (!bind_defaults(fn, call, pending)) return error_value(call.range);
  return inline_body(fn, call, as_statement);
}

// What is still unbound takes its default, or cannot be inferred (false after a
// diagnostic).
bool KernelChecker::bind_defaults(const ast::Kernel& fn, const ast::Expr& call,
                                  const std::map<std::string, const ast::ConstParam*>& pending) {
  auto is_pending = [&](const std::string& name) { return pending.count(name) > 0; };
  for (const ast::ConstParam& c : fn.consts) {
    if (!is_pending(c.name)) continue;
    if (c.is_type && c.default_type) {
      Entity e{EntityKind::Type, -1, 0, Builtin::rank, c.range};
      e.type = resolve(*c.default_type);
      declare(c.name, e);
    } else if (!c.is_type && c.default_value) {
      auto v = const_int(*c.default_value, "the default of '" + c.name + "'");
      if (!v) return false;
      declare(c.name, Entity{EntityKind::Const, -1, *v, Builtin::rank, c.range});
    } else {
      diags_.emit(DiagnosticKind::CannotInferParameter, call.name_range, {c.name, fn.name});
      return false;
    }
  }
  return true;
}

// The body of `fn`, checked into the statements being built, in the scope the call set
// up; the value of its final `return`.
ValuePtr KernelChecker::inline_body(const ast::Kernel& fn, const ast::Expr& call, bool as_statement) {
  if (const ast::Stmt* r = misplaced_return(fn.body, true)) {
    diags_.emit(DiagnosticKind::ReturnNotLast, r->range);
    return error_value(call.range);
  }
  const bool returns = !fn.body.empty() && fn.body.back()->kind == ast::StmtKind::Return;
  // What goes wrong in the body is reported there, with a note at this call.
  diags_.push_context(call.range, "in function '" + fn.name + "', called here");
  struct PopContext {
    Diagnostics& d;
    ~PopContext() { d.pop_context(); }
  } pop_context{diags_};
  push();
  const std::size_t plain = fn.body.size() - (returns ? 1 : 0);
  for (std::size_t i = 0; i < plain && !diags_.too_many_errors(); ++i) stmt(*fn.body[i], *stmts_, false);
  ValuePtr result;
  if (returns && fn.body.back()->value) {
    result = expr(*fn.body.back()->value);
    // Pinned where the function ends, so what the caller evaluates later cannot change it.
    if (!result->error && !trivial(*result) && result->type.kind != TypeKind::Range) {
      const int var = new_var(fn.name + "_result", result->type, false);
      stmts_->push_back(let_stmt(var, result, fn.body.back()->range));
      auto ref = make(ValueKind::VarRef, result->type, call.range);
      ref->var = var;
      result = ref;
    }
  }
  pop();
  if (!result && !as_statement) {
    diags_.emit(DiagnosticKind::NoValue, call.range, {fn.name});
    return error_value(call.range);
  }
  return result ? result : error_value(call.range);
}

}  // namespace irisc::sema
