// Shared state of one kernel's check: scopes, the kernel being built, helpers used by
// both expression and statement checking. Internal to sema/.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/sema/sema.hpp"

namespace irisc::sema {

// What a name stands for. Type: a type parameter (`type`). Value: a function's
// parameter or extent bound to the caller's value (`value`), read where it is named.
enum class EntityKind { Const, Param, Size, Var, Builtin, Type, Value };

struct Entity {
  EntityKind kind;
  int index = -1;  // Param: param index; Var: var index
  std::int64_t value = 0;  // Const
  tir::Builtin builtin = tir::Builtin::rank;
  SourceRange range;
  tir::ScalarType type = tir::ScalarType::f32;  // Type
  tir::ValuePtr bound;                          // Value
};

// The functions a module can call, by name (its own and its imports').
using FunctionTable = std::map<std::string, const ast::Kernel*>;

// The flag of a signal or wait: one element of a 4- or 8-byte integer tensor, and the
// scalar compared with or written to it, converted to the flag's type.
struct FlagOperands {
  tir::View flag;
  tir::ValuePtr value;
};

// Whether `name` is one of the language's built-in names (calls, loops): check_call.cpp.
bool is_builtin_name(std::string_view name);

class KernelChecker {
 public:
  KernelChecker(const ast::Kernel& k, const SemaOptions& opts, const FunctionTable& functions, Diagnostics& diags,
                tir::Kernel& out)
      : k_(k), opts_(opts), functions_(functions), diags_(diags), out_(out) {}

  void run();
  void define_consts();  // the kernel's compile-time parameters (sema.cpp)
  void define_params();  // its parameters and size symbols
  // Roles wait on each other, so all their programs must be resident at once: reports
  // counts that exceed what any GPU holds (kMaxProgramsPerSm per SM) at some SM count.
  void roles_fit(const std::vector<const ast::Stmt*>& roles);

  // ---- expressions (check_expr.cpp) -------------------------------------------------
  tir::ValuePtr expr(const ast::Expr& e);
  tir::ValuePtr expr_name(const ast::Expr& e);
  tir::ValuePtr expr_unary(const ast::Expr& e);
  tir::ValuePtr expr_binary(const ast::Expr& e);
  // A compile-time integer, or nullopt after a diagnostic naming `what`.
  std::optional<std::int64_t> const_int(const ast::Expr& e, const std::string& what);
  // A tensor view x[...]; nullopt after a diagnostic. `what` names the operation.
  // `gathered`: a matmul's first operand, which may be gathered(A)[m, :].
  // `values_per_word` > 1: the last index counts values that many to an element (16-bit
  // values in data-and-flag words: 2), so the offset and the bounds are in values.
  std::optional<tir::View> view(const ast::Expr& e, const std::string& what, bool gathered = false,
                                std::int64_t values_per_word = 1);
  // False (after a diagnostic) for a matmul panel used anywhere else.
  bool plain_view(const tir::View& v, SourceRange where);
  std::optional<tir::View> view_2d(const ast::Expr& e, tir::View v, const tir::Param& p, const std::string& tensor,
                                   const std::vector<tir::ValuePtr>& idxs, const std::vector<bool>& slice);
  tir::ValuePtr range_start(const tir::ValuePtr& r);
  tir::ValuePtr range_extent(const tir::ValuePtr& r);
  tir::ValuePtr mul_add(tir::ValuePtr a, tir::ValuePtr m, tir::ValuePtr b, SourceRange where);
  // `to:`/`from:` rank of an RMA op on view's tensor; null when absent.
  tir::ValuePtr rank_arg(const ast::Expr& call, const char* which, const tir::View& v);
  tir::Order order_arg(const ast::Expr& call, tir::Order dflt);
  tir::Scope scope_arg(const ast::Expr& call, tir::Scope dflt);
  // Named-argument validation: every name must be in `allowed`, none twice.
  bool check_named(const ast::Expr& call, std::initializer_list<const char*> allowed);
  const ast::Expr* named(const ast::Expr& call, const char* name) const;
  // Converts v to `to` element type if v is a literal constant (or int_), else reports.
  tir::ValuePtr coerce(tir::ValuePtr v, tir::ScalarType to, SourceRange where);
  // A value written into (or combined with) a tensor of `elem`: literals and the index
  // type convert; anything else is a StoreTypeMismatch (and an error value).
  tir::ValuePtr to_element(tir::ValuePtr v, tir::ScalarType elem, SourceRange where);
  tir::ValuePtr call(const ast::Expr& e, bool as_statement, std::vector<tir::StmtPtr>* stmts);

  // ---- built-in calls (check_call.cpp's table; a handler per builtin, check_call_*.cpp) --
  struct CallSite {
    const ast::Expr& e;
    bool as_statement;                   // the call is a statement of its own
    std::vector<tir::StmtPtr>* stmts;    // where a statement call's statement goes
    int variant;                         // the table's: the atomics' AtomicOp
  };
  // A handler's value, and whether call() returns it as it is (a statement call's, an
  // error's) or, for a value made as a statement, keeps it as one.
  struct Called {
    tir::ValuePtr value;
    bool final;
  };
  using Handler = Called (KernelChecker::*)(const CallSite&);
  bool want_args(const CallSite& c, std::size_t n);  // else WrongArgumentCount
  tir::ValuePtr no_value(const CallSite& c);           // a statement call used as a value
  Called unknown_function(const CallSite& c);
  Called builtin_store(const CallSite& c);    // store, put, get (check_call_memory.cpp)
  Called builtin_load(const CallSite& c);
  Called builtin_atomic(const CallSite& c);
  Called builtin_send(const CallSite& c);     // slots (check_slots.cpp)
  Called builtin_receive(const CallSite& c);
  std::optional<tir::View> slots_view(const ast::Expr& arg, const std::string& fn);
  Called builtin_signal(const CallSite& c);   // check_call_signals.cpp
  Called builtin_fence(const CallSite& c);
  Called builtin_wait(const CallSite& c);
  tir::ValuePtr wait_all(const CallSite& c);  // wait(all(... for r in ...))
  Called builtin_fill(const CallSite& c);     // fill, zeros, ones (check_call_tiles.cpp)
  Called builtin_index(const CallSite& c);
  Called builtin_range_bound(const CallSite& c);  // start, extent
  Called builtin_broadcast(const CallSite& c);
  Called builtin_select(const CallSite& c);
  Called builtin_gathered(const CallSite& c);
  Called builtin_reduce(const CallSite& c);   // sum (check_call_math.cpp)
  Called builtin_max_min(const CallSite& c);
  Called builtin_unary(const CallSite& c);    // abs, sqrt, exp, log
  Called builtin_matmul(const CallSite& c);   // check_call_matmul.cpp
  // Data-and-flag words (check_flagged.cpp): store(..., flag: f) and load<T>(..., flag: f).
  tir::ValuePtr store_flagged(const ast::Expr& e, bool as_statement, std::vector<tir::StmtPtr>* stmts);
  tir::ValuePtr load_flagged(const ast::Expr& e);
  std::optional<tir::View> flagged_words(const ast::Expr& arg, const std::string& fn, tir::ScalarType t, const char* access);
  tir::ValuePtr flagged_flag(const ast::Expr& call);
  // The value of `axis:` (0 or 1), or -1 after a diagnostic.
  int axis_arg(const ast::Expr& a);
  std::optional<FlagOperands> flag_operands(const std::string& fn, const ast::Expr& flag_expr,
                                                   const ast::Expr& value_expr);

  // A type as written: a keyword, or a type parameter in scope (else UnknownType, f32).
  tir::ScalarType resolve(const ast::TypeRef& t);

  // ---- functions (check_fn.cpp) ---------------------------------------------------------
  // Inlines a call of `fn`: binds its parameters to the arguments, checks its body into
  // the statement list being built, and returns the value of its final `return` (null
  // when it has none).
  tir::ValuePtr inline_call(const ast::Kernel& fn, const ast::Expr& call, bool as_statement);
  bool can_inline(const ast::Kernel& fn, const ast::Expr& call);
  struct InlineArg {
    tir::ValuePtr value;  // scalars, tiles, ranges
    int tensor = -1;      // tensors: the kernel parameter
  };
  bool call_arguments(const ast::Kernel& fn, const ast::Expr& call, std::vector<InlineArg>& args,
                      std::vector<std::pair<std::string, std::int64_t>>& named_consts);
  bool bind_defaults(const ast::Kernel& fn, const ast::Expr& call,
                     const std::map<std::string, const ast::ConstParam*>& pending);
  tir::ValuePtr inline_body(const ast::Kernel& fn, const ast::Expr& call, bool as_statement);

  // ---- statements (check_stmt.cpp) ----------------------------------------------------
  void block(const std::vector<ast::StmtPtr>& body, std::vector<tir::StmtPtr>& out, bool top_level);
  void stmt(const ast::Stmt& s, std::vector<tir::StmtPtr>& out, bool top_level);
  void stmt_let(const ast::Stmt& s, std::vector<tir::StmtPtr>& out);
  void stmt_assign(const ast::Stmt& s, std::vector<tir::StmtPtr>& out);
  void stmt_if(const ast::Stmt& s, std::vector<tir::StmtPtr>& out);
  void for_loop(const ast::Stmt& s, std::vector<tir::StmtPtr>& out);
  void for_tiles(const ast::Stmt& s, std::vector<tir::StmtPtr>& out);

  // ---- scopes ----------------------------------------------------------------------------
  void push() { scopes_.emplace_back(); }
  void pop() { scopes_.pop_back(); }
  const Entity* lookup(const std::string& name) const;
  bool declare(const std::string& name, Entity e);
  int new_var(const std::string& name, tir::Type type, bool mutable_);

  tir::ValuePtr make(tir::ValueKind k, tir::Type t, SourceRange r) {
    auto v = std::make_shared<tir::Value>();
    v->kind = k;
    v->type = t;
    v->range = r;
    return v;
  }
  tir::ValuePtr int_const(std::int64_t v, SourceRange r) {
    auto c = make(tir::ValueKind::Const, tir::Type::scalar(tir::ScalarType::int_), r);
    c->int_value = v;
    return c;
  }
  // A placeholder after a diagnostic; operations on it stay silent (no cascades).
  tir::ValuePtr error_value(SourceRange r) {
    auto v = int_const(0, r);
    v->error = true;
    return v;
  }

  const ast::Kernel& k_;
  const SemaOptions& opts_;
  const FunctionTable& functions_;
  Diagnostics& diags_;
  // The statement list being built: where a function called inside an expression puts
  // its statements (null where no statement can run, as in a tensor's extent).
  std::vector<tir::StmtPtr>* stmts_ = nullptr;
  // The functions being inlined, outermost first (a call of one of them is recursion).
  std::vector<const ast::Kernel*> inlining_;
  tir::Kernel& out_;
  // Compile-time parameters whose -D or default was already reported: their uses stay
  // silent (no "unknown name 'BLOCK'" after "'BLOCK' has no default").
  std::set<std::string> poisoned_;
  // Each blocks(N, B) loop variable's bound N: an index by that variable into a
  // dimension it runs past is a warning ([RangePastExtent]).
  std::map<int, std::pair<tir::ValuePtr, SourceRange>> range_bounds_;
  void check_range_in_extent(const tir::ValuePtr& idx, const tir::ValuePtr& extent, const std::string& tensor,
                             std::size_t dim, SourceRange where);
  std::vector<std::map<std::string, Entity>> scopes_;
  int loop_depth_ = 0;
  bool in_role_ = false;
  // A tensor extent spelled as in the source ("N", "(N * world)"), for diagnostics.
  std::string extent_text(const tir::Value& v) const;
};

std::string type_name(const tir::Type& t);
bool same_shape(const tir::Type& a, const tir::Type& b);
std::string shape_text(const tir::Type& t);  // "128" or "128, 256"
tir::Type view_type(const tir::View& v, tir::ScalarType elem);
bool is_literal(const tir::ValuePtr& v);  // a constant, which adapts to the type it meets
bool power_of_two(std::int64_t v);

}  // namespace irisc::sema
