// GpuKernelPrinter: one TIR kernel as a GPU kernel in C++ against the device library
// (templates/: iris/device.hpp), for every GPU target (Halide's CodeGen_GPU_C). Scalars
// become C++ expressions evaluated redundantly by every thread of a program (they are
// uniform); tiles become register arrays in their chosen layout, filled by unrolled
// slot loops; side effects on a single element (signals, scalar stores and atomics) run
// on thread 0 between barriers. The signature follows the launch contract's argument
// list. It prints only what the passes decided (threads, layouts, matmul lowering, the
// grid); a target printer supplies the spellings of its dialect. A kernel that runs as
// the sm90 GEMM template (Kernel::gemm) becomes a call of the template with its tiles
// loop's body as the epilogue, and the accumulators as the matmul's tile.
#pragma once

#include <functional>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "compiler/codegen/cpp_printer.hpp"
#include "compiler/contract/launch_contract.hpp"
#include "compiler/source/source_buffer.hpp"
#include "compiler/tir/gemm_loop.hpp"

namespace irisc {

// The CUDA name of tensor or scalar parameter `n` (p_<n>).
std::string param_symbol(const std::string& n);
// The device library's names of a memory order and scope ("iris::device::Order::relaxed").
std::string order_name(tir::Order o);
std::string scope_name(tir::Scope s);

class GpuKernelPrinter : public CppPrinter {
 public:
  // `contract` is the kernel's launch contract (its signature follows contract.args).
  GpuKernelPrinter(const tir::Kernel& k, const contract::Kernel& contract, std::string& out)
      : CppPrinter(out), k_(k), contract_(contract) {}
  // The source the kernel came from: waits name their file:line when they give up,
  // and trace events carry lines. Without it (or with an empty one) they carry none.
  void set_source(const SourceBuffer* source) { source_ = source && !source->text().empty() ? source : nullptr; }
  // Prints trace events (iris/device/trace.hpp) at programs' start and end, puts,
  // signals and waits. Off (the default): no trace code.
  void set_trace_events(bool on) { trace_events_ = on; }
  void print();

 protected:
  // ---- target spellings ---------------------------------------------------------------
  // What precedes the kernel's name: linkage, kernel qualifier, launch bounds.
  virtual std::string kernel_qualifiers() const = 0;
  // The device context parameter, passed by value (`ctx`).
  virtual std::string context_parameter() const = 0;
  virtual std::string restrict_qualifier() const = 0;
  virtual std::string shared_qualifier() const = 0;
  // The program's dynamic shared memory as an `align`-byte aligned `unsigned char name[]`.
  virtual std::string dynamic_shared_declaration(const std::string& name, int align) const = 0;
  // A by-value TMA descriptor parameter (iris::device::TensorMap), or one per rank
  // (iris::device::TensorMaps) where `every_rank`.
  virtual std::string tensor_map_parameter(const std::string& name, bool every_rank) const = 0;
  virtual std::string barrier() const = 0;       // every thread of the program
  // Barrier number `id` (1..15) over the first `threads` threads that reach it.
  virtual std::string group_barrier(int id, int threads) const = 0;
  virtual std::string thread_index() const = 0;  // in the program
  virtual std::string block_index() const = 0;   // the program's number in the grid
  virtual std::string grid_blocks() const = 0;   // programs in the grid

  const tir::Kernel& k_;
  const contract::Kernel& contract_;
  const SourceBuffer* source_ = nullptr;
  bool trace_events_ = false;
  int threads_ = 256;

 private:
  using Value = tir::Value;
  using ValuePtr = tir::ValuePtr;
  using View = tir::View;
  using Type = tir::Type;
  using Stmt = tir::Stmt;
  using StmtPtr = tir::StmtPtr;
  using BinOp = tir::BinOp;
  using UnOp = tir::UnOp;

  // The named barrier the GEMM epilogue's consumer threads synchronize on: the last
  // one, since the sm90 template numbers its own (per consumer warpgroup) from 1.
  static constexpr int kEpilogueBarrier = 15;

  // "kernel 'k' at file.iris:12:5: <statement>", as a C++ string literal.
  std::string site_literal(const Stmt& s) const;
  std::string site_literal(SourceRange r) const;
  int line_of(SourceRange r) const;
  // A trace event (iris/device/trace.hpp) recorded by the thread that runs it.
  std::string trace(const std::string& kind, int line, const std::string& peer, const std::string& value) const;
  // Prints `if (cond) <trace event>;` when trace events are on.
  void trace_line(int depth, const std::string& cond, const std::string& kind, int line, const std::string& peer,
                  const std::string& value);

  std::string var_name(int v) const;
  // The kernel parameter of tensor map argument `a`.
  std::string map_name(const contract::Arg& a) const;
  // Every thread that runs this code (the program, or in the GEMM epilogue its consumer
  // threads) waits here; leader() is the one thread that does single-element work.
  std::string sync() const;
  std::string leader() const;
  std::string from_row_shift(const Stmt& s, const std::string& rows, int depth);
  void gemm_loop(const Stmt& s, int depth);
  void gathered_matmul(const Value& v, const std::string& r, const std::string& fn, const std::string& b_args, int depth);
  void epilogue_store(const Stmt& s, int depth);
  void store2d(const Stmt& s, int depth);
  bool epilogue_add(const Value& v, int depth);
  bool slotwise(const Value& v) const;
  void epilogue_pairs(const View& view, const ValuePtr& rank, const Value& value, bool negate, bool skip_cols, int depth,
                      const std::function<void(const std::string&, const std::string&, int)>& at_pair);
  std::string rank_loop_unroll() const;
  // What variable reference `v` stands for, when it names no registers of its own.
  const Value* alias(const Value& v) const;
  static bool assigned(const std::vector<StmtPtr>& body, int var);
  bool holds_accumulators(const Value& v) const;
  std::string layout(std::int64_t size) const;
  std::string layout2d(std::int64_t rows, std::int64_t cols) const;
  [[noreturn]] static void internal_error(const std::string& what);
  std::string layout_of(const Type& t) const;
  // Pointer to the view's first element on `rank` (null: this rank).
  std::string view_ptr(const View& v, const ValuePtr& rank, int depth);
  std::string words_ptr(const tir::View& v, const tir::ValuePtr& rank, tir::ScalarType elem, int depth);
  std::string rank_or_self(const ValuePtr& rank, int depth);
  // A uniform scalar expression; may emit statements (reductions, thread-0 atomics).
  std::string scalar(const Value& v, int depth);
  std::vector<std::string> scalar_operands(const Value& v, int depth);
  // Local pointer of a view (atomics translate through ctx themselves).
  std::string view_ptr_local(const View& v, int depth);
  // `to`: the target rank's expression, evaluated beforehand (rank_or_self).
  std::string atomic_call(const Value& v, const std::string& ptr, const std::vector<std::string>& ops,
                          const std::string& to);
  std::string range_part(const Value& r, bool start, int depth);
  std::int64_t axis_scratch_slots();
  std::string broadcast_slot(const tir::Value& v, int depth);
  void reduce_axis(const tir::Value& v, const std::string& r, int depth);
  // How a reduction folds (gpu_kernel_printer_reduce.cpp).
  struct Fold {
    std::string acc_t, op, ident;
  };
  Fold fold_of(tir::ReduceOp r, tir::ScalarType elem) const;
  std::string reduce(const Value& v, int depth);
  // ---- tiles ----------------------------------------------------------------------------
  // Returns an array name holding the tile's slots (or a scalar broadcast expression
  // is indexed by the caller through slot()).
  std::string tile(const Value& v, int depth);
  // Operands of a tile atomic, as expressions of slot `s`.
  std::vector<std::string> slot_operands(const Value& v, int depth);
  // An expression for slot `s` of a tile-or-scalar value (materializing loads first).
  std::string slot(const Value& v, int depth);
  std::string slot_expr(const Value& v, int depth);
  // ---- statements ---------------------------------------------------------------------------
  void stmts(const std::vector<StmtPtr>& body, int depth);
  void assign_to(int var, const Value& v, int depth, bool declare);
  void stmt(const Stmt& s, int depth);
  // A loop over ranks whose body is one wait or one signal: each thread takes some of
  // the ranks, so the flags are polled (or stored) at once, not one after another.
  // False where it prints nothing (the GEMM's prologue and epilogue, traced kernels).
  bool flag_loop_in_parallel(const Stmt& loop, int depth);
  std::string wait_call(const Stmt& s, const std::string& p, const std::string& x) const;
  std::string signal_call(const Stmt& s, const std::string& p, const std::string& x, const std::string& to) const;
  // An integer add/sub whose old values nobody reads, with an order `red` can take:
  // it becomes a one-way reduction (no round trip per element).
  static bool discarded_add(const Value& v);
  void red_add(const Value& v, int depth);
  void tile_red_add(const Value& v, int depth);
  // The register array a tile store writes from: the tile itself, or a scalar
  // broadcast over layout L.
  std::string store_source(const Value& v, const std::string& L, int depth);

  std::optional<tir::GemmLoop> gemm_;  // the kernel runs as the sm90 GEMM template
  std::vector<tir::TmaStore> tma_stores_;  // what its epilogue may store by TMA
  bool in_epilogue_ = false;           // printing that GEMM's epilogue
  bool in_prologue_ = false;           // its prologue (the producer's thread alone)
  std::vector<const Value*> aliases_;  // per variable: the value it stands for, or null
  std::map<const tir::Value*, std::int64_t> broadcast_offsets_;  // each broadcast's region of iris_axis_scratch
  int acc_var_ = -1;                   // the variable bound to the accumulator registers
};

}  // namespace irisc
