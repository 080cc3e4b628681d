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

struct TypeRef {
  ScalarType type = ScalarType::f32;
  SourceRange range;
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

struct ConstParam {
  std::string name;
  SourceRange range;
  TypeRef type;
  ExprPtr default_value;  // may be null
};

struct Param {
  std::string name;
  SourceRange range;
  bool is_tensor = false;
  bool symmetric = false;
  TypeRef type;               // element type (tensor) or scalar type
  std::vector<ExprPtr> dims;  // tensor extents
};

struct Kernel {
  std::string name;
  SourceRange range;
  SourceRange name_range;
  std::vector<ConstParam> consts;
  std::vector<Param> params;
  std::vector<StmtPtr> body;
};

struct Module {
  std::vector<Kernel> kernels;
};

// An indented tree, one node per line (for --emit=ast and golden tests).
std::string dump(const Module& module, const SourceBuffer& source);

}  // namespace irisc::ast
