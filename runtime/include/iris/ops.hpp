// GEMMs fused with their communication, written in .iris (dsl/ops/) and compiled
// through the JIT on first use, like the collectives (iris/ccl.hpp). C = A x B with A
// [M, K] and B [K, N] row-major, bf16, f16 or f32, f32 accumulation; on H100/H200 the GEMM is
// the warp-specialized TMA + wgmma kernel. Every rank calls the same ops in the same
// order with tensors of the same shapes, on the symmetric heap.
//
//   iris::ops::matmul_all_reduce(ctx, A, B, C);          // C = sum over ranks of A_r B_r
//   iris::ops::matmul_all_reduce(ctx, A, B, C, {.schedule = iris::ops::Schedule::producer_consumer});
#pragma once

#include <cstdint>
#include <functional>

#include "iris/ccl.hpp"
#include "iris/context.hpp"
#include "iris/tensor.hpp"

namespace iris::ops {

// How the GEMM and the communication meet.
//  unfused: the GEMM, then the collective of iris/ccl.hpp (any of its algorithms);
//    matmul_all_scatter's: the GEMM into this rank's columns of C, then a copy of them
//    into every peer's C.
//  bulk_synchronous: the GEMM announces each finished tile to every rank; then, on the
//    same stream, a kernel reduces or moves each tile once every rank has it.
//  producer_consumer: the same two kernels on two streams, so the communication of
//    finished tiles overlaps the GEMM of the rest (the consumer runs on at most a
//    quarter of the SMs, which leaves the GEMM room to finish).
//  fused: the GEMM's epilogue does the communication: matmul_all_scatter stores each
//    tile into every rank's C; matmul_all_reduce into an f32 C adds each tile into every
//    rank's C with atomics (Iris's atomic matmul_all_reduce; A and B bf16, f16 or f32);
//    matmul_reduce_scatter, and matmul_all_reduce into a C of A's type, store each tile
//    into a scratch slab of the rank owning its rows (M / world rows a rank, a multiple
//    of the tile's rows: 64 when the tile is chosen by shape), which sums its slabs from
//    its own memory (and matmul_all_reduce's stores the sums into every rank's C);
//    all_gather_matmul pushes every rank's rows to every rank, and the GEMM waits, tile
//    by tile, for the rows it covers (Iris's push all_gather_matmul).
//  fused_pull: all_gather_matmul's GEMM reads every rank's rows of A where they lie,
//    with no gathered copy (Iris's pull all_gather_matmul; A on the symmetric heap).
//  copy_engines: the data moved by the GPU's copy engines (no SM moves it) while the
//    GEMM runs. all_gather_matmul: the rows gathered into every rank's G, the GEMM
//    starting on this rank's own rows and waiting, tile by tile, for the peers' rows it
//    covers. matmul_all_scatter: the GEMM counts each finished tile row, and each row
//    band's copy into every peer's C waits for its count (measured slower than fused so
//    far: docs/performance.md).
//  specialized: one kernel of two roles (workgroup specialization): GEMM programs store
//    and flag each tile, and communication programs on 1/8 of the SMs move each flagged
//    tile to the peers while the GEMM goes on (matmul_all_scatter; Iris's example 10).
//  automatic: one of the above by op (see docs/library.md); in a job of one rank, the
//    GEMM into C alone.
enum class Schedule { automatic, unfused, bulk_synchronous, producer_consumer, fused, fused_pull, specialized, copy_engines };

struct Options {
  Schedule schedule = Schedule::automatic;
  // unfused: the collective's algorithm; bulk_synchronous and producer_consumer: one_shot
  // (every rank reads every rank's tiles) or two_shot (each rank reduces 1/world of them
  // and writes them to every rank); automatic picks by size.
  ccl::Algorithm algorithm = ccl::Algorithm::automatic;
  // The GEMM's tile: 64 or 128 rows by 64, 128 or 256 columns; 0 x 0 chooses by
  // shape (128 x 256 unless that leaves more than half the SMs idle, then 128 x 128, then
  // 64 x 128).
  int block_m = 0;
  int block_n = 0;
  Stream stream = nullptr;  // default: the rank's stream
};

const char* name(Schedule s);

struct DecodeOptions;  // flash_decode's, below

namespace detail {
struct Gemm {
  DType dtype;  // A's and B's
  const void* a;
  const void* b;
  void* c;
  std::int64_t m, n, k;
  DType c_dtype;  // dtype, or f32 for matmul_all_reduce's fused (atomic) form
};
void matmul_all_scatter(Context& ctx, const Gemm& g, const Options& o);
void matmul_all_reduce(Context& ctx, const Gemm& g, const Options& o);
void matmul_reduce_scatter(Context& ctx, const Gemm& g, const Options& o);
void all_gather_matmul(Context& ctx, const Gemm& g, const Options& o);
// Checks A [M, K], B [K, N] and C [M * rows_num / rows_den, N * cols_mul] of type
// c_dt (dt, or f32 where `f32_c`) (throws naming `what` otherwise).
Gemm check(const char* what, DType dt, DType c_dt, bool f32_c, const Shape& a, const Shape& b, const Shape& c,
           const void* pa, const void* pb, void* pc, std::int64_t rows_num, std::int64_t rows_den, std::int64_t cols_mul);
struct Decode {
  DType dtype;
  const void* q;
  const void* k;
  const void* v;
  void* out;
  std::int64_t rows, d, tokens, kv_cols;  // q [rows, d]; k and v [tokens, kv_cols]
};
Decode check_decode(DType dt, const Shape& q, const Shape& k, const Shape& v, const Shape& out, const void* pq,
                    const void* pk, const void* pv, void* pout);
// The unfused flash decode with `gather` moving the parts between its two kernels:
// gather(send, recv, count, stream) is an all-gather of `count` f32 per rank, into
// recv rank by rank. The library's own passes iris/ccl.hpp's; a benchmark may pass
// another collective's.
using Gather = std::function<void(const void* send, void* recv, std::size_t count, Stream stream)>;
void flash_decode(Context& ctx, const Decode& a, const DecodeOptions& o, const Gather& gather = nullptr);
}  // namespace detail

// C [M, world * N] = [A B_0, A B_1, ...]: rank r's B [K, N] gives columns r * N.. on
// every rank (a column-parallel linear layer whose output every rank needs).
template <class T>
void matmul_all_scatter(Context& ctx, const Tensor<T>& A, const Tensor<T>& B, Tensor<T>& C, const Options& o = {}) {
  detail::matmul_all_scatter(ctx, detail::check("matmul_all_scatter", dtype_of_v<T>, dtype_of_v<T>, false, A.shape(), B.shape(), C.shape(),
                                                A.data(), B.data(), C.data(), 1, 1, ctx.world()), o);
}
// C [M, N] = sum over ranks of A_r B_r (K split over the ranks: a row-parallel layer).
// C of A's type, or f32: then the fused schedule alone, every tile added into every
// rank's C with atomics. The fused schedule into a C of A's type needs M / world to be a
// multiple of the GEMM tile's rows (64 when the tile is chosen by shape).
template <class T, class U>
void matmul_all_reduce(Context& ctx, const Tensor<T>& A, const Tensor<T>& B, Tensor<U>& C, const Options& o = {}) {
  detail::matmul_all_reduce(ctx, detail::check("matmul_all_reduce", dtype_of_v<T>, dtype_of_v<U>, true, A.shape(),
                                               B.shape(), C.shape(), A.data(), B.data(), C.data(), 1, 1, 1), o);
}
// C [M / world, N] = rows rank * M / world.. of the sum over ranks of A_r B_r.
template <class T>
void matmul_reduce_scatter(Context& ctx, const Tensor<T>& A, const Tensor<T>& B, Tensor<T>& C, const Options& o = {}) {
  detail::matmul_reduce_scatter(ctx, detail::check("matmul_reduce_scatter", dtype_of_v<T>, dtype_of_v<T>, false, A.shape(), B.shape(),
                                                   C.shape(), A.data(), B.data(), C.data(), 1, ctx.world(), 1), o);
}
// C [world * M, N] = [A_0; A_1; ...] B: every rank's rows of A [M, K] gathered, times B
// (sequence-parallel input into a column-parallel layer).
template <class T>
void all_gather_matmul(Context& ctx, const Tensor<T>& A, const Tensor<T>& B, Tensor<T>& C, const Options& o = {}) {
  detail::all_gather_matmul(ctx, detail::check("all_gather_matmul", dtype_of_v<T>, dtype_of_v<T>, false, A.shape(), B.shape(), C.shape(),
                                               A.data(), B.data(), C.data(), ctx.world(), 1, 1), o);
}

// flash_decode: attention of one new token per sequence over a KV cache whose tokens are
// split over the ranks (sequence parallelism; Iris's example 13). Every rank passes the
// same queries q [B * H, D] (row b * H + h) and its own L tokens of each sequence, k and
// v [B * L, HKV * D] (row b * L + t; query head h reads key/value head h / (H / HKV)),
// all of one type, bf16, f16 or f32, D a power of two from 32 to 256. Every rank gets
// out [B * H, D] = softmax(scale q k^T) v over the tokens of every rank.
//   fused (automatic): each rank's attention kernel stores its parts (output and
//     log-sum-exp of each split of each row) into every rank and flags them; a second
//     kernel waits for them and combines.
//   unfused: the same parts kept here, gathered with iris/ccl.hpp's all_gather, then
//     combined.
struct DecodeOptions {
  int heads = 0;       // H, query heads per sequence (0: q's rows, one sequence)
  float scale = 0.0f;  // 0: 1 / sqrt(D)
  int splits = 0;      // parts of each rank's tokens per row (0: enough rows x splits for the SMs)
  Schedule schedule = Schedule::automatic;
  Stream stream = nullptr;  // default: the rank's stream
};

template <class T>
void flash_decode(Context& ctx, const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, Tensor<T>& out,
                  const DecodeOptions& o = {}) {
  detail::flash_decode(ctx, detail::check_decode(dtype_of_v<T>, q.shape(), k.shape(), v.shape(), out.shape(), q.data(),
                                                 k.data(), v.data(), out.data()),
                       o);
}

}  // namespace iris::ops
