// TIR, the tile IR: a typed, name-resolved tree that sema builds and codegen prints.
// A kernel runs as a grid of programs (thread blocks); values are scalars (uniform in
// a program) or 1-D tiles (B elements spread over the program's threads). Tensors are
// kernel parameters, local or symmetric. Every RMA op names its peer rank explicitly.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ast/ast.hpp"
#include "compiler/source/source_buffer.hpp"
#include "compiler/target/target.hpp"

namespace irisc::tir {

struct Value;
using ValuePtr = std::shared_ptr<Value>;

using ast::ScalarType;

enum class TypeKind : std::uint8_t {
  Void,
  Scalar,  // one value per program
  Tile,    // `size` values per program
  Range,   // a block of indices: start, extent (<= size) -- from blocks(N, B)
  Rank,    // a rank number (scalar int) -- from ranks/peers
};

struct Type {
  TypeKind kind = TypeKind::Void;
  ScalarType elem = ScalarType::int_;
  std::int64_t size = 0;  // Tile (columns of a 2-D tile) and Range
  std::int64_t rows = 0;  // 2-D tiles: rows (0 for 1-D tiles)
  static Type scalar(ScalarType t) { return {TypeKind::Scalar, t, 0, 0}; }
  static Type tile(ScalarType t, std::int64_t n) { return {TypeKind::Tile, t, n, 0}; }
  static Type tile2d(ScalarType t, std::int64_t r, std::int64_t c) { return {TypeKind::Tile, t, c, r}; }
  static Type range(std::int64_t n) { return {TypeKind::Range, ScalarType::int_, n, 0}; }
  std::int64_t elements() const { return rows ? rows * size : size; }
  bool is_scalar() const { return kind == TypeKind::Scalar; }
  bool is_tile() const { return kind == TypeKind::Tile; }
  bool operator==(const Type&) const = default;
};
std::string to_string(const Type& t);
bool is_float(ScalarType t);
bool is_integer(ScalarType t);  // includes int_
bool is_signed(ScalarType t);
int byte_size(ScalarType t);

enum class Order : std::uint8_t { relaxed, acquire, release, acq_rel };
enum class Scope : std::uint8_t { block, device, system };
enum class Cmp : std::uint8_t { eq, ne, gt, ge, lt, le };
enum class AtomicOp : std::uint8_t { add, sub, and_, or_, xor_, min, max, xchg, cas };
enum class SignalOp : std::uint8_t { set, add };
enum class ReduceOp : std::uint8_t { sum, max, min };
const char* name(Order o);
const char* name(Scope s);
const char* name(Cmp c);
const char* name(AtomicOp o);
const char* name(ReduceOp o);

// `resident` (programs of this kernel one multiprocessor holds at once) exists only in
// grids that choose-launch builds for persistent loops; the language has no name for it.
enum class Builtin : std::uint8_t { rank, world, sms, program, programs, resident };
const char* name(Builtin b);

enum class BinOp : std::uint8_t { add, sub, mul, div, rem, eq, ne, lt, le, gt, ge, land, lor, band, bor, bxor, min, max, shl, shr };
enum class UnOp : std::uint8_t { neg, lnot, abs, sqrt, exp, log };
const char* name(BinOp o);
const char* name(UnOp o);

// ---- tensors and views ---------------------------------------------------------------
struct Param {
  std::string name;
  SourceRange range;
  bool is_tensor = false;
  bool symmetric = false;
  ScalarType elem = ScalarType::f32;
  // Tensor extents: scalar integer values over constants, size symbols (SizeRef: hidden
  // i64 kernel arguments bound from the tensors' shapes at launch), world and + - * / %.
  std::vector<ValuePtr> dims;
};

// A view of a tensor: element `offset` (i64 scalar) and, for tiles, `size` elements of
// which the first `extent` are valid (the rest are masked).
struct View {
  int param = -1;          // index into Kernel::params
  ValuePtr offset;         // scalar int
  std::int64_t size = 0;   // 0: a single element; else columns (1-D: elements)
  ValuePtr extent;         // scalar int, valid elements (columns)
  // 2-D views of 2-D tensors: `rows` rows of `size` columns, rows `ld` elements apart.
  std::int64_t rows = 0;
  ValuePtr row_extent;     // valid rows
  ValuePtr ld;             // row stride (elements)
  // Matmul panels: A[m, :] (slice_dim 1) or B[:, n] (slice_dim 0); `full` is the
  // sliced dimension's extent (K). A matmul's second operand may also be a row panel
  // Bt[n, :] of an [N, K] tensor: B transposed, k contiguous.
  int slice_dim = -1;
  ValuePtr full;
  // A matmul's first operand `gathered(A)[m, :]`: a row panel of the [world * M, K]
  // tensor of every rank's A [M, K] stacked by rank (rank 0's rows first), read where
  // it lies. offset, rows and row_extent are in that stacked tensor's rows; gathered
  // row g is row g % M of rank g / M's A (M: the parameter's first extent).
  bool gathered = false;
  // Tensors of 2 or more dimensions: each dimension's first index (0 for a ':' slice),
  // for checks of each index against its own extent (the host backend's), which the
  // flat offset cannot make: x[0, 128] of a [4, 128] x is x[1, 0]'s offset.
  std::vector<ValuePtr> index;
};

// How a Matmul value is computed (chosen by select_gemm_mainloop and select_matmul).
// simt: tile::matmul on the FMA units, any target. mma_sync: tile::matmul_mma, NVIDIA's
// warp-level tensor-core instructions. mfma: tile::matmul_mfma, AMD's matrix cores.
// wgmma_ws: the product of the sm90 warp-specialized GEMM template that the whole
// kernel runs as (Kernel::gemm).
enum class MatmulLowering : std::uint8_t { unchosen, simt, mma_sync, wgmma_ws, mfma };
const char* name(MatmulLowering m);

// ---- values (expressions) ------------------------------------------------------------
enum class ValueKind : std::uint8_t {
#define IRIS_TIR_VALUE(Kind, MinOperands, MaxOperands) Kind,
#include "compiler/tir/value_kinds.def"
};
const char* name(ValueKind k);

struct Value {
  ValueKind kind;
  Type type;
  SourceRange range;
  bool error = false;  // stands in for an expression that already had a diagnostic
  std::int64_t int_value = 0;
  double float_value = 0;
  int param = -1;
  int var = -1;
  int size = -1;  // SizeRef: index into Kernel::size_symbols
  Builtin builtin = Builtin::rank;
  UnOp unop = UnOp::neg;
  BinOp binop = BinOp::add;
  ReduceOp reduce_op = ReduceOp::sum;
  int axis = -1;  // Reduce: the axis of a 2-D tile reduced (-1: all, to a scalar); Broadcast: the axis added
  AtomicOp atomic_op = AtomicOp::add;
  Order order = Order::relaxed;
  Scope scope = Scope::system;
  View view;
  View view_b;    // Matmul: the B panel
  MatmulLowering matmul = MatmulLowering::unchosen;
  ValuePtr rank;  // Load from / Atomic to; null = this rank
  std::vector<ValuePtr> operands;
};

// ---- statements -------------------------------------------------------------------------
enum class StmtKind : std::uint8_t {
#define IRIS_TIR_STMT(Kind, DefinesVar, HasBody) Kind,
#include "compiler/tir/stmt_kinds.def"
};
const char* name(StmtKind k);

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Stmt {
  StmtKind kind;
  SourceRange range;
  int var = -1;
  ValuePtr value;   // Let/Assign/Store/Signal/Wait operand, Eval, If condition, Role programs
  View view;
  ValuePtr rank;
  ValuePtr flag;    // StoreFlagged: the flag in each word's high 32 bits
  SignalOp signal_op = SignalOp::set;
  Cmp cmp = Cmp::eq;
  Order order = Order::relaxed;
  Scope scope = Scope::system;
  ValuePtr lo, hi;      // ForRange, ForChunks; ForBlocks: hi = bound; ForTiles: lo = from_row (or null)
  ValuePtr stride;      // ForRange's step (null: 1)
  std::int64_t step = 1;  // ForBlocks, ForChunks block size; ForTiles rows per tile
  int var2 = -1, var_t = -1;  // ForTiles
  ValuePtr hi2;               // ForTiles column bound
  std::int64_t step2 = 1;     // ForTiles columns per tile
  bool peers_only = false;
  bool persistent = false;
  int role = -1;        // Role: index into Kernel::roles
  std::vector<StmtPtr> body, else_body;
};

struct Var {
  std::string name;
  Type type;
  bool mutable_ = true;
  bool error = false;  // bound to an expression that had a diagnostic: its uses are error values
};

struct Role {
  std::string name;
  ValuePtr programs;  // scalar integer over sms, world and constants
};

// How a tile shape is spread over a program's threads (tile::Layout / Layout2D).
struct Layout {
  std::int64_t rows = 0;  // 0: a 1-D tile
  std::int64_t cols = 0;  // columns (1-D: elements)
  int vec = 1;            // 1-D: consecutive elements per thread access
  // 2-D: the accumulator registers of the sm90 GEMM template (its Gemm::Acc), held by
  // the consumer threads only, instead of an even spread over all threads.
  bool accumulator = false;
  bool operator==(const Layout&) const = default;
};

// The sm90 warp-specialized GEMM a kernel runs as (select_gemm_mainloop; the kernel's
// shape is tir/gemm_loop.hpp's): its tiles loop becomes the template's persistent tile
// loop, the loop's matmul the TMA + wgmma mainloop, the rest of the loop body the
// epilogue. stages == 0: the kernel does not.
struct GemmMainloop {
  int stages = 0;   // depth of the shared-memory ring of A and B slices
  int group_m = 0;  // tile rows walked together (grouped order, for L2 reuse)
  int cluster = 1;  // programs per cluster along M, sharing B's slices by TMA multicast
  // With roles (gemm_loop.hpp): the role that runs the template, and the threads the
  // other roles run on, the first of each program (their layouts are over these).
  int role = -1;
  int others_threads = 0;
  // The epilogue stores its 16-bit tiles by TMA where it may (gemm_loop.hpp's
  // epilogue_tma_stores): CompileOptions::tma_stores.
  bool tma_stores = false;
  bool operator==(const GemmMainloop&) const = default;
};

struct Kernel {
  std::string name;
  SourceRange range;
  std::vector<Param> params;
  std::vector<std::string> size_symbols;  // hidden i64 arguments, in order
  std::vector<std::pair<std::string, std::int64_t>> constants;  // compile-time parameters as bound
  std::vector<Var> vars;
  std::vector<StmtPtr> body;
  std::vector<Role> roles;       // empty: one implicit role over the whole grid
  ValuePtr grid;                 // programs when there are no roles (over sms, world)

  // ---- decisions, made by passes and only printed by codegen -------------------------
  bool layouts_chosen = false;   // choose_launch ran: the fields below are set
  int block_threads = 256;       // threads per program
  int min_blocks_per_sm = 0;     // second __launch_bounds__ argument (0: none)
  std::vector<Layout> layouts;   // one per tile shape in the kernel
  std::int64_t dynamic_shared_bytes = 0;  // asked for at launch
  bool uses_mma = false;         // some Matmul is mma_sync or mfma, in dynamic shared memory (select_matmul)
  GemmMainloop gemm;             // select_gemm_mainloop

  bool has_layout(const Type& t) const;
  const Layout* layout_of(const Type& t) const;
};

struct Module {
  const Target* target = nullptr;  // what the decision passes decide for (null: default)
  bool tma_stores = false;         // select_gemm_mainloop: GEMM epilogues store by TMA
  std::vector<Kernel> kernels;
};

// A readable listing (for --emit=tir, --dump-ir-after and golden tests).
std::string print(const Module& module);
// With `positions`, each kernel, statement and value also gives its source range (byte
// offsets into the source it was compiled from, `@BEGIN:END`), and each view its
// per-dimension indices (`at (...)`), which tir::read restores: the host code object's
// listing, whose checks name file:line and each index against its own dimension.
std::string print(const Module& module, bool positions);
// One value of `kernel`, as in the listing.
std::string print(const Kernel& kernel, const Value& value);
// Whether two values are the same expression (same kinds, fields and children).
bool same_value(const Value& a, const Value& b);

// Launch values: what a launcher can evaluate (the contract's expressions). Tensor
// extents are integer constants, size symbols, world, casts and + - * / %; grids and
// role program counts may also use sms, resident, min and max.
enum class LaunchUse : std::uint8_t { extent, grid };
// The first node of `v` (pre-order) that is not a launch value for `use`; null if none.
const Value* not_at_launch(const Value& v, LaunchUse use);

// Integer scalars the decision passes build launch values from: a Const or BuiltinRef
// (set `builtin` after) holding `v`, and `a op b`.
ValuePtr int_value(ValueKind kind, std::int64_t v, SourceRange r);
ValuePtr int_binary(BinOp op, ValuePtr a, ValuePtr b, SourceRange r);

}  // namespace irisc::tir
