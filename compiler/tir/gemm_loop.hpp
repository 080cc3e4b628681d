// The kernels the sm90 warp-specialized GEMM template runs (templates/include/iris/
// device/gemm/sm90/gemm.hpp): select_gemm_mainloop decides by it, the verifier holds a
// kernel's GEMM decision to it, codegen and the launch contract read the loop from it.
//
// The template owns the tile loop (persistent, in grouped order), the loads (TMA from
// tensor maps of A and B) and the product (wgmma into registers). It hands each tile's
// accumulators to an epilogue that runs on its consumer warpgroups only: the producer
// warpgroup has left by then, so nothing in the epilogue may wait for every thread of
// the program. A kernel fits when it is
//
//   (let x = scalar;)*
//   for [t,] (m, n) in tiles([M, N], [BM, BN]) [persistent] {
//       prologue
//       let c = matmul(A[m, :], B[:, n], acc: f32) [as T];    // or Bt[n, :]: B is [N, K]
//       epilogue
//   }
//
// The prologue (often empty) runs on the producer's one thread before it loads the
// tile's first slices: waits (for flags saying the tile's rows have arrived), scalar
// lets, and ranks, range loops and ifs of those. Its lets are its own (the epilogue
// cannot read them), and it does not touch the tile variable `t`.
// with A and B tensor parameters of one type, bf16 or f16, indexed by the loop's own
// ranges, and an epilogue that
//   - holds tiles of the accumulator's shape only (BM x BN: casts, elementwise math,
//     2-D loads and stores, to peers too), since only that shape has a layout over the
//     consumer threads;
//   - has no reduction, matmul, blocks or tiles loop, and atomics only as statements
//     (their results unused): those need the whole program, or a broadcast. Scalar
//     stores, signals, waits and atomic statements are fine: they synchronize the
//     consumer threads alone (see GpuKernelPrinter). A wait holds this program's
//     consumers (and, in a cluster, its partner's, which shares B's slices), so it may
//     wait only for what other programs or ranks produce without waiting for this
//     program's later tiles.
//
// A kernel of roles fits when one role's body has that shape (the first such role runs
// the template, over its own programs) and the kernel's statements outside the roles are
// scalar lets. The other roles run on the first threads of each of their programs, with
// layouts of their own: they may not have a matmul, nor a tile of the GEMM's tile shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/tir/tir.hpp"

namespace irisc::tir {

struct GemmLoop {
  const Stmt* loop = nullptr;     // the top-level tiles loop
  const Stmt* let = nullptr;      // `let c = matmul(...) [as T]`, after the prologue
  std::size_t prologue = 0;       // the loop body's statements before `let`
  const Value* matmul = nullptr;  // that product
  int a = -1, b = -1;             // the operands' tensor parameters
  bool b_nk = false;              // B is [N, K] (Bt[n, :], k contiguous), else [K, N]
  bool a_gathered = false;        // A is gathered(A)[m, :]: every rank's A, read where it lies
  ScalarType elem = ScalarType::bf16;  // the operands' type
  std::int64_t bm = 0, bn = 0;    // the tile
  int role = -1;                  // the role running the GEMM (Stmt::role), -1: no roles
};

// Whether kernel `k` has the shape above: "" with *out filled (when not null), or why
// not (for messages and tests). Target features and tile sizes are the caller's to check.
std::string match_gemm_loop(const Kernel& k, GemmLoop* out);

// The tensors the epilogue of a GEMM kernel (k.gemm decided with tma_stores, g its loop)
// stores its tiles into by TMA, from its consumers' staging buffers (the template's
// store_tile_async), each a tensor map argument of the launch: 2-D 16-bit tensors that
// the epilogue stores 2-D tiles into, with `every_rank` where a store names a rank (then
// the tensor is symmetric and the map argument holds one map a rank). None in a kernel
// of roles (another role may read what the GEMM stored), nor where the epilogue signals,
// waits, fences or has atomics: TMA's writes are not ordered before those (they complete
// when the program waits for its bulk groups, at its end), and the tiles loop is the
// kernel's last statement, so nothing else in the kernel reads them.
struct TmaStore {
  int param = -1;
  bool every_rank = false;
};
std::vector<TmaStore> epilogue_tma_stores(const Kernel& k, const GemmLoop& g);

// Drops a GEMM decision (Kernel::gemm, the wgmma_ws lowering, the accumulator layout),
// leaving the rest of the launch to choose_launch. Passes that run before the decision
// passes call it when they reshape a kernel a TIR listing had decided already.
void forget_gemm(Kernel& k);
// forget_gemm where the kernel no longer has the shape; returns whether it did.
bool forget_stale_gemm(Kernel& k);

}  // namespace irisc::tir
