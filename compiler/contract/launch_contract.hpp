// The launch contract: everything a launcher needs to run the kernels of one irisc code
// object, and nothing it would have to parse as code. irisc writes it (codegen, from the
// TIR decisions) and embeds it in the code object as `iris_metadata`; libiris reads it
// back with the same code (read(), which validates everything once, at load) and packs
// each launch from `args`. One writer, one reader, one type.
//
// Integer expressions (tensor extents, the grid, role program counts) are postfix
// programs over constants, size symbols, world and sms with checked arithmetic: a
// corrupt contract is an error at load, never a crash or an overflow at launch.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace irisc::contract {

inline constexpr int kVersion = 3;
inline constexpr std::size_t kMaxExprOps = 256;
inline constexpr int kMaxNesting = 64;  // of the JSON text

// What read() accepts; anything outside is a corrupt contract. Each bound is what the
// launcher or the driver can do, so a contract within them never fails a launch for
// its shape alone. (The dynamic shared memory bound is the largest of the targets in
// compiler/target/targets.def.)
inline constexpr int kMaxThreads = 1024;       // per program (block)
inline constexpr int kMaxMinBlocksPerSm = 32;
inline constexpr int kMaxCluster = 8;          // the portable cluster size (larger needs an opt-in)
inline constexpr std::size_t kMaxKernels = 1024;
inline constexpr std::size_t kMaxArgs = 160;   // per kernel, context and hidden ones included
inline constexpr std::size_t kMaxSizes = 64;   // size symbols per kernel
inline constexpr std::size_t kMaxRoles = 64;
inline constexpr int kMaxArgBytes = 4096;      // all of a kernel's arguments, as the driver lays them out

// Everything wrong with a contract text is reported as this (with what and where).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// resident: programs of this kernel one multiprocessor holds at once (the grid of a
// persistent loop is sms * resident: every program runs at the same time).
enum class Op : std::uint8_t { constant, size, world, sms, add, sub, mul, div, rem, min, max, resident };

struct ExprOp {
  Op op = Op::constant;
  std::int64_t value = 0;  // constant: the value; size: the size symbol's index
  bool operator==(const ExprOp&) const = default;
};

// A postfix program leaving one value.
struct Expr {
  std::vector<ExprOp> ops;
  bool operator==(const Expr&) const = default;
};

// The values an expression may read.
struct Bindings {
  std::span<const std::int64_t> sizes;
  std::int64_t world = 1;
  std::int64_t sms = 1;
  std::int64_t resident = 1;
};

enum class EvalError : std::uint8_t { ok, overflow, division_by_zero, bad_program };
const char* describe(EvalError e);
// Evaluates `e` with overflow-checked 64-bit arithmetic.
EvalError eval(const Expr& e, const Bindings& b, std::int64_t* out);
// The expression in infix, over the kernel's size names ("N * world"), for messages.
std::string to_string(const Expr& e, std::span<const std::string> size_names);

// Element types of parameters, by the names the language uses.
enum class DType : std::uint8_t { f32, f16, bf16, i32, i64, u32, u64, boolean };
const char* name(DType t);
int byte_size(DType t);

struct Param {
  std::string name;
  bool tensor = false;
  DType dtype = DType::f32;  // a tensor's element type, or the scalar's type
  bool symmetric = false;    // tensors: must live on the symmetric heap
  std::vector<Expr> dims;    // tensors: one extent per dimension (no sms)
};

// One kernel argument, in order. Hidden kinds (everything but `param`) are what the
// launcher makes itself: the context, the size symbols, the SM count, tensor maps.
//
// tensor_map: a TMA descriptor (the driver's CUtensorMap: 128 bytes, 64-byte aligned,
// passed by value) of tensor parameter `index`, a row-major 2-D tensor of 16-bit
// floats, read (or written) in boxes of box_rows x box_cols elements. The launcher
// encodes it from the tensor bound at launch (its address and shape). `role` says which
// operand of the kernel's GEMM the tensor is (for messages; the encoding is the same).
// Roles a_gathered (gathered(A)) and c_every_rank are kMaxRanks maps in one argument
// (kTensorMapBytes each), map r of the tensor's address on rank r, slots from the job's
// world on left zero. Roles c and c_every_rank are what the GEMM's epilogue stores its
// tiles into by TMA: the launcher may leave them zero (IRIS_TMA_STORES=0, or a tensor a
// map cannot describe), and the epilogue then stores from its threads.
enum class ArgKind : std::uint8_t { context, param, size, sms, tensor_map };
// A [M, K]; B as [K, N] or [N, K]; A on every rank; C stored in the epilogue (this
// rank's, or every rank's)
enum class MapRole : std::uint8_t { a, b_kn, b_nk, a_gathered, c, c_every_rank };
const char* name(MapRole r);
inline constexpr int kTensorMapBytes = 128;
inline constexpr int kTensorMapAlign = 64;
inline constexpr int kMaxRanks = 8;  // the device library's (iris/device/context.hpp)
// Whether maps of `role` are stored through (the epilogue's C), else read.
inline constexpr bool stored_through(MapRole role) { return role == MapRole::c || role == MapRole::c_every_rank; }
// The bytes of a tensor map argument of `role`.
inline constexpr int tensor_map_bytes(MapRole role) {
  return role == MapRole::a_gathered || role == MapRole::c_every_rank ? kTensorMapBytes * kMaxRanks : kTensorMapBytes;
}
struct Arg {
  ArgKind kind = ArgKind::param;
  int index = -1;  // param and tensor_map: into params; size: into sizes
  int bytes = 8;   // the size passed (context: its struct size, checked by the launcher)
  MapRole role = MapRole::a;        // tensor_map
  int box_rows = 0, box_cols = 0;   // tensor_map
};

struct Role {
  std::string name;
  Expr programs;  // over sms, world and constants; >= 1
};

struct Kernel {
  std::string name;
  std::string symbol;  // the function in the code object
  int threads = 256;
  int min_blocks_per_sm = 0;
  int cluster = 1;  // programs per cluster (along x); the grid is a multiple of it
  std::int64_t dynamic_shared_bytes = 0;
  Expr grid;                 // programs when roles is empty
  std::vector<Role> roles;   // else the grid is the sum of their program counts
  std::vector<std::pair<std::string, std::int64_t>> constants;  // as bound at compile time
  std::vector<std::string> sizes;  // size symbols, bound from tensor extents at launch
  std::vector<Param> params;
  std::vector<Arg> args;
};

struct Module {
  std::vector<Kernel> kernels;
};

// JSON text (what --emit=metadata prints and the code object embeds).
// indent >= 0 pretty-prints with that many spaces per level.
std::string write(const Module& module, int indent = -1);
// Parses and validates a contract; throws Error saying what is wrong: JSON nested
// deeper than kMaxNesting, integers outside 64 bits or outside the bounds above, indices
// outside their tables, names given twice, and expressions whose constant parts can
// only overflow or divide by zero (what remains can fail only for the launch's values).
Module read(std::string_view json);

}  // namespace irisc::contract
