// The TIR reader: parses what tir::print writes (the model is MLIR's textual IR, which
// lets `triton-opt` run one pass on a file), so `irisc file.tir --run-pass=P` and the
// per-pass file tests can start from hand-written IR. For every module M the compiler
// produces, print(read(print(M))) == print(M) and verify(read(print(M))) is empty.
//
// The format, one kernel after another (whitespace and newlines are free, `//` starts a
// comment that runs to the end of the line):
//
//   kernel NAME(PARAM, ...) [sizes(#S, ...)] [with C=INT ...] [grid VALUE] {
//     [launch [threads N][, blocks/sm N][, dynamic shared N][, gemm stages N group_m N]
//             [, layouts L ...]]
//     STATEMENT ...
//   }
//
//   PARAM      x: f32 | x: [symmetric] tensor<f32>[VALUE, ...]
//   sizes(...) the hidden size arguments in order; written only when that order is not
//              the order of first use in the parameter list
//   L          COLS/VEC (1-D tiles) or ROWSxCOLS[/VEC] (2-D tiles), ROWSxCOLS/acc (the
//              sm90 GEMM's accumulators); `layouts` present means the layouts were chosen
//   STATEMENT  let %v: TYPE = VALUE | %v = VALUE | eval VALUE
//              store VIEW <- VALUE[, to VALUE]
//              signal<ORDER, SCOPE> set|add VIEW <- VALUE[, to VALUE]
//              wait<ORDER, SCOPE> VIEW eq|ne|gt|ge|lt|le VALUE
//              for %i in blocks(VALUE, STEP)[ persistent] { ... }
//              for [%t, ](%m, %n) in tiles([VALUE, VALUE], [STEP, STEP])[ persistent] { ... }
//              for %r in ranks|peers { ... }      for %k in range(VALUE, VALUE[, VALUE]) { ... }
//              for %j in chunks(VALUE, VALUE, STEP) { ... }
//              if VALUE { ... } [else { ... }]    role NAME = VALUE { ... }
//   VIEW       x[OFFSET]  x[OFFSET +: N valid VALUE]  x[OFFSET +: RxC valid VALUExVALUE ld VALUE]
//              A[OFFSET rows R valid VALUE x all VALUE ld VALUE]   (matmul row panel)
//              B[OFFSET all VALUE x cols C valid VALUE ld VALUE]   (matmul column panel)
//              (a matmul's second operand may be a row panel: B transposed)
//              gathered A[OFFSET rows R ...]   (a first operand: every rank's A, stacked)
//   VALUE      INT:TYPE | FLOAT:TYPE | $scalar_param | #size | %var | rank | world | sms |
//              program | programs | OP[<TYPE>](VALUE, ...) | cast<TYPE>(V) | fill<TYPE>(V) |
//              load<TYPE>(VIEW[, from V][, other V]) | matmul<TYPE[, simt|mma_sync|mfma|wgmma_ws]>(VIEW, VIEW) |
//              atomic_OP<ORDER, SCOPE[, TYPE]>(VIEW, V[, V][, to V]) |
//              sum|max|min[<TYPE>](V[, axis 0|1]) | broadcast<TYPE>(V, axis 0|1) | select[<TYPE>](V, V, V)
//
// Types that follow from a value's operands (implied_type below) are not written; a
// value whose type differs from the implied one carries it in <...>. Variables are
// resolved by name in lexical scope (a definition shadows an outer one); `let`
// variables are mutable, loop variables are not, and loop variables take their types
// from the loop. Not kept: value sharing (one node under two parents), source ranges,
// and Var entries that no statement defines (remove-dead-lets leaves those behind;
// read numbers variables in order of definition).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/tir/tir.hpp"

namespace irisc::tir {

struct ReadError {
  std::uint32_t offset = 0;  // byte offset into the text
  std::uint32_t line = 0;    // 1-based
  std::uint32_t column = 0;  // 1-based, in bytes
  std::string message;
};

// Values and statements nested deeper than this are an error (the reader, the passes
// and the emitters recurse once per level).
inline constexpr int kMaxReadNesting = 1000;

// Parses `text` into *out. Never throws; on malformed text returns false, leaves *out
// empty and sets *error to "line:col: what is wrong". The result is not verified: run
// tir::verify on it before any pass.
bool read(std::string_view text, Module* out, std::string* error);
// The same, with the error's position apart from its message (for located diagnostics).
bool read(std::string_view text, Module* out, ReadError* error);

// The type the listing leaves out for `value` of `kernel`: RangeStart and RangeExtent
// are int, Unary has its operand's type, Binary its tile operand's shape (a range for a
// shifted range) with bool elements for comparisons, Reduce its operand's element (the
// 1-D tile of the axis kept, along an axis), Select its choices' element over the
// shape of whichever operand is a tile, Iota int over its range, Atomic its view's shape over the tensor's element. nullopt
// for kinds whose listing always gives the type, or that have a fixed one (constants,
// references, cast, load, fill, broadcast, matmul), and for malformed values.
std::optional<Type> implied_type(const Kernel& kernel, const Value& value);

}  // namespace irisc::tir
