// The syntax tree the parser builds: kernels, their parameters, statements and
// expressions, each with its source range. No types yet (sema adds them in TIR).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/lex/token.hpp"
#include "compiler/source/source_buffer.hpp"

namespace irisc::ast {

// Element and scalar types as written. `int` is the type of sizes and compile-time
// integers (64-bit signed).
enum class ScalarType : std::uint8_t { f32, f16, bf16, i32, i64, u32, u64, boolean, int_ };
const char* scalar_type_name(ScalarType t);
ScalarType scalar_type_of(TokenKind type_keyword);

// A type as written: a type keyword, or the name of a type parameter (`T`), which
// sema resolves.
struct TypeRef {
  ScalarType type = ScalarType::f32;
  SourceRange range;
  std::string name;  // non-empty: a type parameter's name
  // The keyword's name, or the parameter's.
  std::string spelling() const { return name.empty() ? scalar_type_name(type) : name; }
};

enum class ExprKind : std::uint8_t {
  IntLit,    // 42
  FloatLit,  // 1.5
  BoolLit,   // true
  Name,      // x, rank, B
  Unary,     // -x, !c          (op, args[0])
  Binary,    // a + b           (op, args[0], args[1])
  Call,      // f<T>(a, b, to: r)  (name, type_arg, args, named)
  Index,     // x[i, j]         (args[0] = base, args[1..] = indices)
  Cast,      // x as f32        (args[0], type_arg)
  List,      // [M, N]          (args)
  Slice,     // `:` as an index: the whole extent of that dimension
  Comprehension,  // v for r in ranks, as a call's only argument (args[0] = v, args[1] = the
                  // iterable; name = r): wait(all(flag[r] >= e for r in ranks))
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct NamedArg {
  std::string name;
  SourceRange name_range;
  ExprPtr value;
};

struct Expr {
  ExprKind kind;
  SourceRange range;
  std::uint64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  std::string name;
  SourceRange name_range;
  TokenKind op = TokenKind::Error;
  std::optional<TypeRef> type_arg;
  std::vector<ExprPtr> args;
  std::vector<NamedArg> named;
};

enum class StmtKind : std::uint8_t {
  Let,     // let name = value;
  Assign,  // name op= value;    (op: Eq, PlusEq, MinusEq, StarEq, SlashEq)
  Expr,    // call(...);
  For,     // for vars in iter [persistent] { body }
  If,      // if cond { body } else { else_body }
  Role,    // role name(programs: value) { body }
  Return,  // return [value];       (functions only)
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct LoopVar {
  std::string name;
  SourceRange range;
};

struct Stmt {
  StmtKind kind;
  SourceRange range;
  std::string name;  // Let, Assign, Role
  SourceRange name_range;
  TokenKind assign_op = TokenKind::Eq;
  ExprPtr value;  // Let/Assign value, Expr, Role programs
  ExprPtr cond;   // If
  ExprPtr iter;   // For
  // For: `for i in` -> {i}; `for (m, n) in` -> {m, n}; `for t, (m, n) in` -> index_var t.
  std::vector<LoopVar> loop_vars;
  std::optional<LoopVar> index_var;
  bool persistent = false;
  std::vector<StmtPtr> body;
  std::vector<StmtPtr> else_body;
};

// A compile-time parameter: an integer (`B: int = 64`) or a type (`T: type = f32`).
struct ConstParam {
  std::string name;
  SourceRange range;
  TypeRef type;
  bool is_type = false;
  ExprPtr default_value;              // may be null
  std::optional<TypeRef> default_type;  // `T: type = f32`
};

// A parameter. Kernels take tensors and scalars; functions also take tiles
// (`t: tile<T>[B]`, `tile<T>` for any shape) and ranges (`i: range`).
struct Param {
  std::string name;
  SourceRange range;
  bool is_tensor = false;
  bool symmetric = false;
  bool is_tile = false;
  bool is_range = false;
  TypeRef type;               // element type (tensor, tile) or scalar type
  std::vector<ExprPtr> dims;  // tensor extents; a tile's shape (empty: any)
};

// A kernel, or a function (`fn`): the same shape. A function is inlined where it is
// called; its body may end in `return value;`.
struct Kernel {
  std::string name;
  SourceRange range;
  SourceRange name_range;
  std::vector<ConstParam> consts;
  std::vector<Param> params;
  std::vector<StmtPtr> body;
};

// `import "ccl/common.iris";`: the functions of another file (resolved against the
// standard library in dsl/, the -I directories and the importing file's folder).
struct Import {
  std::string path;
  SourceRange range;
};

struct Module {
  std::vector<Kernel> kernels;
  std::vector<Kernel> functions;
  std::vector<Import> imports;
};

// An indented tree, one node per line (for --emit=ast and golden tests).
std::string dump(const Module& module, const SourceBuffer& source);

}  // namespace irisc::ast
