// CppPrinter: the C++ every target's printer shares (Halide's CodeGen_C): literals with
// the exact value of their constant, operators, casts through float for the 16-bit
// float types, and the output buffer with indentation and fresh names. A target says
// how it spells types and a float given by its bits; everything else is plain C++.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/tir/tir.hpp"

namespace irisc {

class CppPrinter {
 public:
  explicit CppPrinter(std::string& out) : out_(out) {}
  virtual ~CppPrinter() = default;
  CppPrinter(const CppPrinter&) = delete;
  CppPrinter& operator=(const CppPrinter&) = delete;

 protected:
  using ScalarType = tir::ScalarType;

  // ---- target spellings ---------------------------------------------------------------
  // One token per type (`T(0)` must parse for every T).
  virtual const char* type_name(ScalarType t) const = 0;
  // An f32 given by its IEEE bits (inf, NaN, subnormals).
  virtual std::string float_from_bits(std::uint32_t bits) const = 0;
  // Whether a bool becomes a float (of any width) as a select of 1 and 0 rather than
  // through (float): LLVM folds the latter, directly or through a later conversion to
  // bf16, into an i1 -> bf16 conversion that its AMDGPU backend cannot select (LLVM 19).
  virtual bool bool_to_half_as_select() const { return false; }

  void line(int depth, const std::string& s);
  std::string fresh(const char* prefix);

  // The constant as the target type it has (f32 constants as the f32 they round to).
  std::string literal(const tir::Value& v) const;
  // 64-bit integer division is a long software routine on GPUs; index arithmetic
  // (ranks, tile starts) almost always fits in 32 bits, so take the fast path then.
  std::string typed_binop(tir::BinOp op, ScalarType t, const std::string& a, const std::string& b) const;
  std::string binop(tir::BinOp op, const std::string& a, const std::string& b) const;
  std::string unop(tir::UnOp op, const std::string& a, ScalarType t) const;
  std::string cast(ScalarType to, ScalarType from, const std::string& a) const;

  std::string& out_;
  int counter_ = 0;
};

}  // namespace irisc
