// Check entry: kernels, compile-time parameters, tensor parameters and their size
// symbols, roles and the grid policy (see sema.hpp).
#include "compiler/sema/sema.hpp"

#include <cstdint>
#include <set>

#include "compiler/contract/launch_contract.hpp"
#include "compiler/sema/sema_state.hpp"
#include "compiler/tir/visit.hpp"

namespace irisc {
namespace sema {

using namespace tir;

namespace {

// The arguments every launch carries besides the parameters and size arguments: the
// context and the multiprocessor count.
constexpr std::size_t kHiddenArgs = 2;

// Evaluates an expression over sms, world and compile-time constants (role program
// counts), also building it as a TIR value for the launch contract.
struct LaunchEval {
  KernelChecker& kc;
  std::int64_t sms, world;
  std::string bad_name;

  std::optional<std::int64_t> eval(const ast::Expr& e, ValuePtr* out) {
    switch (e.kind) {
      case ast::ExprKind::IntLit:
        *out = kc.int_const(static_cast<std::int64_t>(e.int_value), e.range);
        return static_cast<std::int64_t>(e.int_value);
      case ast::ExprKind::Name: {
        if (e.name == "sms" || e.name == "world") {
          *out = kc.make(ValueKind::BuiltinRef, Type::scalar(ScalarType::int_), e.range);
          (*out)->builtin = e.name == "sms" ? Builtin::sms : Builtin::world;
          return e.name == "sms" ? sms : world;
        }
        const Entity* ent = kc.lookup(e.name);
        if (ent && ent->kind == EntityKind::Const) {
          *out = kc.int_const(ent->value, e.range);
          return ent->value;
        }
        bad_name = e.name;
        return std::nullopt;
      }
      case ast::ExprKind::Binary: {
        ValuePtr va, vb;
        auto a = eval(*e.args[0], &va);
        auto b = eval(*e.args[1], &vb);
        if (!a || !b) return std::nullopt;
        std::int64_t r = 0;
        bool ok = true;
        BinOp op = BinOp::add;
        switch (e.op) {
          case TokenKind::Plus: ok = !__builtin_add_overflow(*a, *b, &r); break;
          case TokenKind::Minus: ok = !__builtin_sub_overflow(*a, *b, &r), op = BinOp::sub; break;
          case TokenKind::Star: ok = !__builtin_mul_overflow(*a, *b, &r), op = BinOp::mul; break;
          case TokenKind::Slash:
          case TokenKind::Percent:
            ok = *b != 0 && !(*a == INT64_MIN && *b == -1);
            op = e.op == TokenKind::Slash ? BinOp::div : BinOp::rem;
            if (ok) r = e.op == TokenKind::Slash ? *a / *b : *a % *b;
            break;
          default: {
            const std::string sp = token_kind_spelling(e.op);
            bad_name = "'" + sp.substr(1, sp.size() - 2) + "'";
            return std::nullopt;
          }
        }
        if (!ok) {
          bad_name = "an expression that overflows or divides by zero";
          return std::nullopt;
        }
        *out = binary(op, va, vb, e.range);
        return r;
      }
      case ast::ExprKind::Call:
        if ((e.name == "min" || e.name == "max") && e.args.size() == 2) {
          ValuePtr va, vb;
          auto a = eval(*e.args[0], &va);
          auto b = eval(*e.args[1], &vb);
          if (!a || !b) return std::nullopt;
          *out = binary(e.name == "min" ? BinOp::min : BinOp::max, va, vb, e.range);
          return e.name == "min" ? std::min(*a, *b) : std::max(*a, *b);
        }
        bad_name = e.name + "(...)";
        return std::nullopt;
      default: bad_name = "this expression"; return std::nullopt;
    }
  }

  ValuePtr binary(BinOp op, ValuePtr a, ValuePtr b, SourceRange r) {
    auto v = kc.make(ValueKind::Binary, Type::scalar(ScalarType::int_), r);
    v->binop = op;
    v->operands = {std::move(a), std::move(b)};
    return v;
  }
};

void collect_names(const ast::Expr& e, std::vector<const ast::Expr*>& out) {
  if (e.kind == ast::ExprKind::Name) out.push_back(&e);
  for (const auto& a : e.args) collect_names(*a, out);
}

}  // namespace

std::string KernelChecker::extent_text(const Value& v) const {
  switch (v.kind) {
    case ValueKind::Const: return std::to_string(v.int_value);
    case ValueKind::SizeRef: return out_.size_symbols[static_cast<std::size_t>(v.size)];
    case ValueKind::BuiltinRef: return name(v.builtin);
    case ValueKind::Cast: return extent_text(*v.operands[0]);
    case ValueKind::Binary: {
      const std::string a = extent_text(*v.operands[0]), b = extent_text(*v.operands[1]);
      switch (v.binop) {
        case BinOp::add: return "(" + a + " + " + b + ")";
        case BinOp::sub: return "(" + a + " - " + b + ")";
        case BinOp::mul: return "(" + a + " * " + b + ")";
        case BinOp::div: return "(" + a + " / " + b + ")";
        case BinOp::rem: return "(" + a + " % " + b + ")";
        default: return std::string(name(v.binop)) + "(" + a + ", " + b + ")";
      }
    }
    default: return print(out_, v);
  }
}

void KernelChecker::run() {
  out_.name = k_.name;
  out_.range = k_.range;
  push();
  for (auto [n, b] : {std::pair{"rank", Builtin::rank}, {"world", Builtin::world}, {"sms", Builtin::sms},
                      {"program", Builtin::program}, {"programs", Builtin::programs}}) {
    scopes_.back().emplace(n, Entity{EntityKind::Builtin, -1, 0, b, {}});
  }
  push();
  define_consts();
  define_params();

  // What a launch can carry (the launch contract's limits): beyond them irisc would
  // write a code object no launcher loads.
  if (out_.size_symbols.size() > contract::kMaxSizes) {
    diags_.emit(DiagnosticKind::TooManyParameters, k_.name_range,
                {k_.name, std::to_string(out_.size_symbols.size()) + " size symbols",
                 std::to_string(contract::kMaxSizes)});
  } else if (const std::size_t args = out_.params.size() + out_.size_symbols.size() + kHiddenArgs;
             args > contract::kMaxArgs) {
    diags_.emit(DiagnosticKind::TooManyParameters, k_.name_range,
                {k_.name, std::to_string(args) + " arguments (its parameters, a size argument per size symbol and " +
                              std::to_string(kHiddenArgs) + " of its own)",
                 std::to_string(contract::kMaxArgs)});
  }

  // Body: either plain statements, or roles plus 'let's.
  bool has_roles = false;
  for (const ast::StmtPtr& s : k_.body) has_roles |= s->kind == ast::StmtKind::Role;
  push();
  std::set<std::string> role_names;
  std::vector<const ast::Stmt*> role_counts;  // roles whose program count evaluates
  for (const ast::StmtPtr& s : k_.body) {
    if (diags_.too_many_errors()) break;
    if (!has_roles || s->kind != ast::StmtKind::Role) {
      if (has_roles && s->kind != ast::StmtKind::Let) {
        diags_.emit(DiagnosticKind::MixedRolesAndCode, s->range);
        continue;
      }
      stmt(*s, out_.body, true);
      continue;
    }
    if (!role_names.insert(s->name).second) {
      diags_.emit(DiagnosticKind::DuplicateRole, s->name_range, {s->name});
      continue;
    }
    // Program count: over sms, world and constants; must be >= 1 on every target GPU.
    LaunchEval ev{*this, opts_.min_sms, 1, {}};
    ValuePtr programs;
    auto at_min = ev.eval(*s->value, &programs);
    Role role{s->name, programs ? programs : int_const(1, s->value->range)};
    if (!at_min) {
      diags_.emit(DiagnosticKind::NotConstant, s->value->range,
                  {"the program count of role '" + s->name + "' (it may use sms, world and compile-time parameters, not '" + ev.bad_name + "')"});
    } else {
      const bool constant = !any_value(*programs, [](const Value& x) { return x.kind == ValueKind::BuiltinRef; });
      if (constant && *at_min < 1) {
        diags_.emit(DiagnosticKind::RoleProgramsNotPositive, s->value->range, {s->name, std::to_string(*at_min)});
      } else if (!constant) {
        for (std::int64_t sm = opts_.min_sms; sm <= opts_.max_sms; ++sm) {
          bool reported = false;
          for (std::int64_t w = 1; w <= opts_.max_world && !reported; ++w) {
            LaunchEval e2{*this, sm, w, {}};
            ValuePtr v2;
            auto v = e2.eval(*s->value, &v2);
            if (!v || *v < 1) {
              diags_.emit(DiagnosticKind::RoleProgramsMayBeZero, s->value->range,
                          {s->name, std::string(diags_.source()->slice(s->value->range)),
                           "sms = " + std::to_string(sm) + ", world = " + std::to_string(w)});
              reported = true;
            }
          }
          if (reported) break;
        }
      }
    }
    auto st = std::make_unique<Stmt>();
    st->kind = tir::StmtKind::Role;
    st->range = s->range;
    st->role = static_cast<int>(out_.roles.size());
    push();
    in_role_ = true;
    block(s->body, st->body, false);
    in_role_ = false;
    pop();
    if (st->body.empty()) diags_.emit(DiagnosticKind::UnusedRole, s->name_range, {s->name});
    out_.roles.push_back(std::move(role));
    out_.body.push_back(std::move(st));
    if (at_min) role_counts.push_back(s.get());
  }
  roles_fit(role_counts);
  pop();
  pop();
  pop();
}

// Compile-time parameters: -D overrides, else the default.
void KernelChecker::define_consts() {
  for (const ast::ConstParam& c : k_.consts) {
    const auto d = opts_.defines.find(c.name);
    if (c.is_type) {
      Entity e{EntityKind::Type, -1, 0, Builtin::rank, c.range};
      if (d != opts_.defines.end()) {
        auto t = defined_type(d->second);
        if (!t) {
          diags_.emit(DiagnosticKind::DefineKindMismatch, c.range, {c.name, "a type parameter", "a type name, as in -D" + c.name + "=bf16"});
          poisoned_.insert(c.name);
          continue;
        }
        e.type = *t;
      } else if (!c.default_type) {
        diags_.emit(DiagnosticKind::NotConstant, c.range, {"'" + c.name + "' has no default, so it must be given with -D" + c.name + "=<type>; it"});
        poisoned_.insert(c.name);
        continue;
      } else {
        e.type = resolve(*c.default_type);
      }
      declare(c.name, e);
      continue;
    }
    if (!is_integer(resolve(c.type))) {
      diags_.emit(DiagnosticKind::TypeMismatch, c.type.range, {c.type.spelling(), "int", " (compile-time parameters are integers or types)"});
      poisoned_.insert(c.name);
      continue;
    }
    std::int64_t value = 0;
    if (d != opts_.defines.end()) {
      if (defined_type(d->second)) {
        diags_.emit(DiagnosticKind::DefineKindMismatch, c.range, {c.name, "an integer parameter", "an integer"});
        poisoned_.insert(c.name);
        continue;
      }
      value = d->second;
      if (c.default_value) const_int(*c.default_value, "the default of '" + c.name + "'");
    } else if (!c.default_value) {
      diags_.emit(DiagnosticKind::NotConstant, c.range, {"'" + c.name + "' has no default, so it must be given with -D" + c.name + "=...; it"});
      poisoned_.insert(c.name);
      continue;
    } else if (auto v = const_int(*c.default_value, "the default of '" + c.name + "'")) {
      value = *v;
    } else {
      poisoned_.insert(c.name);
      continue;
    }
    if (declare(c.name, Entity{EntityKind::Const, -1, value, Builtin::rank, c.range})) {
      out_.constants.emplace_back(c.name, value);
    }
  }
}

// Parameters. Bare names in tensor extents introduce size symbols first, so that
// `dst: tensor<f32>[N * world]` may use an N bound by another tensor.
void KernelChecker::define_params() {
  for (const ast::Param& p : k_.params) {
    if (!p.is_tensor) continue;
    for (const ast::ExprPtr& d : p.dims) {
      if (d->kind == ast::ExprKind::Name && !lookup(d->name)) {
        declare(d->name, Entity{EntityKind::Size, static_cast<int>(out_.size_symbols.size()), 0, Builtin::rank, d->range});
        out_.size_symbols.push_back(d->name);
      }
    }
  }
  for (const ast::Param& p : k_.params) {
    Param tp;
    tp.name = p.name;
    tp.range = p.range;
    tp.is_tensor = p.is_tensor;
    tp.symmetric = p.symmetric;
    if (p.is_tile || p.is_range) {
      diags_.emit(DiagnosticKind::ParamKindNotForKernel, p.range, {p.name, p.is_tile ? "a tile" : "a range"});
      continue;
    }
    tp.elem = resolve(p.type);
    if (p.is_tensor) {
      for (const ast::ExprPtr& d : p.dims) {
        std::vector<const ast::Expr*> names;
        collect_names(*d, names);
        bool unbound = false;
        for (const ast::Expr* n : names) {
          if (!lookup(n->name)) {
            diags_.emit(DiagnosticKind::UnboundSize, n->range, {n->name});
            unbound = true;
          }
        }
        if (unbound) {
          tp.dims.push_back(int_const(0, d->range));
          continue;
        }
        ValuePtr v = expr(*d);
        if (v->error || not_at_launch(*v, LaunchUse::extent)) {
          if (!v->error) {
            diags_.emit(DiagnosticKind::NotConstant, d->range,
                        {"a tensor extent (built from sizes, compile-time parameters and world)"});
          }
          tp.dims.push_back(int_const(0, d->range));
        } else {
          tp.dims.push_back(v);
        }
      }
    } else if (tp.elem == ScalarType::int_) {
      tp.elem = ScalarType::i64;
    }
    const int index = static_cast<int>(out_.params.size());
    out_.params.push_back(std::move(tp));
    declare(p.name, Entity{EntityKind::Param, index, 0, Builtin::rank, p.range});
  }
}

// Programs one SM of any target holds at most (sm_80 and sm_90: 32 resident blocks).
constexpr std::int64_t kMaxProgramsPerSm = 32;

void KernelChecker::roles_fit(const std::vector<const ast::Stmt*>& roles) {
  if (roles.size() < 2) return;
  for (std::int64_t sm : {opts_.min_sms, opts_.max_sms}) {
    for (std::int64_t w = 1; w <= opts_.max_world; ++w) {
      std::int64_t total = 0;
      std::string counts;
      for (const ast::Stmt* r : roles) {
        LaunchEval ev{*this, sm, w, {}};
        ValuePtr unused;
        const auto n = ev.eval(*r->value, &unused);
        if (!n) return;
        if (__builtin_add_overflow(total, *n, &total)) total = INT64_MAX;
        counts += (counts.empty() ? "" : " + ") + std::to_string(*n) + " (" + r->name + ")";
      }
      if (total > kMaxProgramsPerSm * sm) {
        diags_.emit(DiagnosticKind::RolesCannotBeResident, roles.front()->value->range,
                    {counts + " = " + std::to_string(total), "sms = " + std::to_string(sm) + ", world = " + std::to_string(w),
                     std::to_string(kMaxProgramsPerSm * sm)});
        return;
      }
    }
  }
}

}  // namespace sema

std::optional<tir::ScalarType> defined_type(std::int64_t define_value) {
  const std::int64_t code = define_value - kTypeDefineBase;
  if (code < 0 || code > static_cast<std::int64_t>(tir::ScalarType::int_)) return std::nullopt;
  return static_cast<tir::ScalarType>(code);
}

tir::Module check(const ast::Module& module, const SemaOptions& options, Diagnostics& diags) {
  tir::Module out;
  sema::FunctionTable functions;
  for (const ast::Kernel& f : module.functions) {
    if (sema::is_builtin_name(f.name)) {
      diags.emit(DiagnosticKind::ReservedName, f.name_range, {f.name});
      continue;
    }
    auto [it, fresh] = functions.emplace(f.name, &f);
    if (!fresh) {
      Diagnostic& d = diags.emit(DiagnosticKind::DuplicateFunction, f.name_range, {f.name});
      diags.note(d, it->second->name_range, "first defined here");
    }
  }
  std::map<std::string, SourceRange> seen;
  for (const ast::Kernel& k : module.kernels) {
    if (auto prev = seen.find(k.name); prev != seen.end()) {
      Diagnostic& d = diags.emit(DiagnosticKind::DuplicateKernel, k.name_range, {k.name});
      diags.note(d, prev->second, "first defined here");
      continue;
    }
    seen.emplace(k.name, k.name_range);
    out.kernels.emplace_back();
    sema::KernelChecker(k, options, functions, diags, out.kernels.back()).run();
  }
  return out;
}

}  // namespace irisc
