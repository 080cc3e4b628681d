// The sm_90a GEMM mainloop: C[M, N] = A[M, K] x B with bf16 or f16 operands and f32
// accumulators, persistent and warp-specialized.
//
//  - A persistent grid (about one program per SM) walks the tiles of C in grouped order
//    (GROUP_M tile rows at a time, so that concurrent programs share A and B in L2).
//  - Warpgroup 0 is the producer: one thread issues TMA loads of BK-deep slices of A
//    and B into a STAGES-deep ring of shared memory, each slot guarded by a "full"
//    barrier (TMA bytes landed) and an "empty" barrier (consumers done reading), both
//    waited by phase parity. It gives most of its registers away (setmaxnreg).
//  - Warpgroups 1 .. BM / 64 are consumers: each owns 64 rows of the tile and issues
//    wgmma m64nBNk16 from shared memory into register accumulators, one wgmma group in
//    flight behind the slot it releases. After the last slice it hands the accumulators
//    to the epilogue, in registers: no shared-memory or global round trip.
//
// Ragged M, N, K need nothing here: TMA fills out-of-bounds elements with zeros, and
// the epilogue masks rows >= M and columns >= N (AccLayout gives each value's place).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../shapes.hpp"
#include "barrier.hpp"
#include "tma.hpp"
#include "wgmma.hpp"

#if IRIS_CUDA_COMPILER
namespace iris::device::sm90 {

template <class T>
struct DtypeOf;
template <>
struct DtypeOf<__nv_bfloat16> {
  static constexpr Dtype value = Dtype::bf16;
};
template <>
struct DtypeOf<__half> {
  static constexpr Dtype value = Dtype::f16;
};

// Where accumulator slot s of the calling consumer thread sits in the BM x BN tile
// (warpgroup 0 is the producer, so consumer warpgroup c covers rows 64 c .. 64 c + 63).
// Slots 2j and 2j + 1 are neighbouring columns of one row.
template <int BM, int BN>
struct AccLayout {
  static constexpr int kRows = BM, kCols = BN, kPerThread = BN / 2;
  static constexpr int kRowStep = 0;  // slots do not advance by whole rows (tile.hpp)
  IRIS_DEVICE IRIS_FORCEINLINE static int row(int s) {
    const int t = static_cast<int>(threadIdx.x) - gemm::kSm90ProducerThreads;
    return 64 * (t / 128) + 16 * (t % 128 / 32) + t % 32 / 4 + 8 * (s % 4 / 2);
  }
  IRIS_DEVICE IRIS_FORCEINLINE static int col(int s) {
    return 8 * (s / 4) + 2 * (static_cast<int>(threadIdx.x) % 4) + s % 2;
  }
};

// The bits of a 16-bit float.
template <class U>
IRIS_DEVICE IRIS_FORCEINLINE u32 bits16(U v) {
  return *reinterpret_cast<const unsigned short*>(&v);
}

// Tile (tm, tn) of the tile-th step of the grouped order.
IRIS_DEVICE IRIS_FORCEINLINE void grouped_tile(int tile, int tiles_m, int tiles_n, int group_m, int& tm, int& tn) {
  const int per_group = group_m * tiles_n;
  const int first = tile / per_group * group_m;
  const int rows = tiles_m - first < group_m ? tiles_m - first : group_m;
  const int in = tile % per_group;
  tm = first + in % rows;
  tn = in / rows;
}

// Where the producer loads a tile's rows of A from. A plain tensor map: the tile's rows,
// in one pass over K.
struct LocalA {
  const TensorMap& map;
  IRIS_DEVICE IRIS_FORCEINLINE void prefetch() const { tma_prefetch(map); }
  template <int BM>
  IRIS_DEVICE IRIS_FORCEINLINE int passes(int) const { return 1; }
  IRIS_DEVICE IRIS_FORCEINLINE const TensorMap& map_of(int, int) const { return map; }
  IRIS_DEVICE IRIS_FORCEINLINE int row_of(int m0, int) const { return m0; }
};

// gathered(A): the rows of every rank's A [rows, K] stacked by rank, read where they lie.
// A tile whose rows lie on ranks q0 .. q1 takes one pass over K per rank, each loading
// the tile's box from that rank's map at row m0 - q * rows: TMA fills the rows outside
// that rank's A with zeros (before it: negative coordinates; after it: past its rows),
// so each pass adds exactly its own rows to the accumulators. Rows past world x rows
// read as 0. The passes of a tile must match across a cluster's programs (they share B's
// loads): gathered GEMMs run without clusters.
struct GatheredA {
  const TensorMaps& maps;
  int rows;   // A's rows on each rank (> 0 wherever there are tiles)
  int world;
  IRIS_DEVICE IRIS_FORCEINLINE int first(int m0) const { return m0 / rows < world - 1 ? m0 / rows : world - 1; }
  IRIS_DEVICE IRIS_FORCEINLINE void prefetch() const {
    for (int r = 0; r < world; ++r) tma_prefetch(maps.rank[r]);
  }
  template <int BM>
  IRIS_DEVICE IRIS_FORCEINLINE int passes(int m0) const {
    const int last = (m0 + BM - 1) / rows < world - 1 ? (m0 + BM - 1) / rows : world - 1;
    return last > first(m0) ? last - first(m0) + 1 : 1;
  }
  IRIS_DEVICE IRIS_FORCEINLINE const TensorMap& map_of(int m0, int pass) const { return maps.rank[first(m0) + pass]; }
  IRIS_DEVICE IRIS_FORCEINLINE int row_of(int m0, int pass) const { return m0 - (first(m0) + pass) * rows; }
};

template <class A>
inline constexpr bool kGatheredA = false;
template <>
inline constexpr bool kGatheredA<GatheredA> = true;

// The prologue of a GEMM that has none (Gemm::run without one): no call, no fence.
struct NoPrologue {
  IRIS_DEVICE void operator()(int, int) const {}
};
template <class P>
inline constexpr bool kNoPrologue = false;
template <>
inline constexpr bool kNoPrologue<NoPrologue> = true;

// The programs that walk a GEMM's tiles: every program of the grid, or the programs of
// one role of a kernel whose other programs do other work. `program` is this one's
// number among `count`; with clusters both are multiples of the cluster's programs.
struct Programs {
  int program;
  int count;
  // The walk's tile rows rotated by this many (>= 0): it starts at tile row row_shift
  // (with clusters, the cluster's row holding it) and wraps. The same tiles, in another
  // order: ranks that push each tile to the rank owning its rows start at different
  // owners, so their stores spread over the links rather than meeting at one rank.
  int row_shift = 0;
  IRIS_DEVICE IRIS_FORCEINLINE static Programs grid() {
    return {static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x)};
  }
};

template <class T, int BM, int BN, int STAGES, int GROUP_M, gemm::BLayout BL, int CLUSTER = 1>
struct Gemm {
  static constexpr gemm::Sm90Shape kShape{BM, BN, 64, STAGES, GROUP_M, CLUSTER};
  static_assert(gemm::sm90_shape_ok(kShape), "unsupported sm90 GEMM shape");
  static constexpr int BK = 64;
  static constexpr int kConsumers = gemm::sm90_consumers(kShape);
  static constexpr int kThreads = gemm::sm90_threads(kShape);
  static constexpr int kABytes = BM * BK * 2, kBBytes = BN * BK * 2, kStageBytes = kABytes + kBBytes;
  static constexpr long long kSharedBytes = gemm::sm90_shared_bytes(kShape);
  static constexpr int kStageCols = gemm::sm90_stage_cols(kShape);
  static constexpr int kStagingBytes = 64 * kStageCols * 2;  // per consumer
  // Registers after the hand-over: 40 x 128 + 232 x 256 <= 64 K for two consumers.
  static constexpr int kProducerRegs = 40, kConsumerRegs = kConsumers == 2 ? 232 : 240;
  using Acc = AccLayout<BM, BN>;
  using Mma = Wgmma<BN, DtypeOf<T>::value>;
  static constexpr int kTransB = BL == gemm::BLayout::kn ? 1 : 0;
  static constexpr bool kCluster = CLUSTER > 1;

  IRIS_HOST_DEVICE static constexpr int tiles(int M, int N) { return ((M + BM - 1) / BM) * ((N + BN - 1) / BN); }

  // Every thread of the program calls it. `a`: A's tensor map, or GatheredA (every
  // rank's A; M is then the stacked rows, world x a.rows; no clusters). `smem`: the start
  // of the kernel's dynamic shared memory, kSharedBytes long.
  // epilogue(acc, m0, n0) runs on each consumer thread once per tile, with the tile's
  // origin; acc[s] belongs at (m0 + Acc::row(s), n0 + Acc::col(s)); m0 may be >= M (the
  // idle half of a cluster on an odd number of tile rows: mask by rows). With
  // CLUSTER = 2 the kernel is launched in clusters of 2 along x (__cluster_dims__), and
  // the grid is a multiple of 2.
  template <class A, class Epilogue>
  IRIS_DEVICE static void run(const A& a, const TensorMap& b, int M, int N, int K, unsigned char* smem_raw,
                              Epilogue&& epilogue) {
    run(a, b, M, N, K, smem_raw, NoPrologue{}, epilogue);
  }

  // The same, with prologue(m0, n0) run by the producer's thread before it loads any of
  // tile (m0, n0)'s slices: it may wait (for flags saying the tile's rows of A have
  // arrived from other ranks). What it acquired is then ordered before the TMA loads
  // (async proxy) by a proxy fence.
  template <class A, class Prologue, class Epilogue>
  IRIS_DEVICE static void run(const A& a, const TensorMap& b, int M, int N, int K, unsigned char* smem_raw,
                              Prologue&& prologue, Epilogue&& epilogue) {
    run(a, b, M, N, K, smem_raw, Programs::grid(), prologue, epilogue);
  }

  // The same on `programs` (a role's) rather than the whole grid.
  template <class A, class Prologue, class Epilogue>
  IRIS_DEVICE static void run(const A& a, const TensorMap& b, int M, int N, int K, unsigned char* smem_raw,
                              Programs programs, Prologue&& prologue, Epilogue&& epilogue) {
    if constexpr (kGatheredA<A>) {
      static_assert(!kCluster, "a gathered A runs without clusters: a tile's passes differ between programs");
      mainloop(a, b, M, N, K, smem_raw, programs, prologue, epilogue);
    } else {
      mainloop(LocalA{a}, b, M, N, K, smem_raw, programs, prologue, epilogue);
    }
  }

 private:
  template <class ASource, class Prologue, class Epilogue>
  IRIS_DEVICE static void mainloop(const ASource& a, const TensorMap& b, int M, int N, int K, unsigned char* smem_raw,
                                   Programs programs, Prologue& prologue, Epilogue& epilogue) {
    unsigned char* smem = reinterpret_cast<unsigned char*>((reinterpret_cast<u64>(smem_raw) + 1023) & ~1023ull);
    Mbarrier* full = reinterpret_cast<Mbarrier*>(smem + STAGES * kStageBytes + kConsumers * kStagingBytes);
    Mbarrier* empty = full + STAGES;
    const int warpgroup = static_cast<int>(threadIdx.x) / 128;
    const u32 cta = kCluster ? cluster_cta_rank() : 0;
    if (threadIdx.x == 0) {
#pragma unroll
      for (int s = 0; s < STAGES; ++s) {
        mbarrier_init(full[s], 1);
        // Every consumer of the cluster reads every slot (B is shared): all release it.
        mbarrier_init(empty[s], kConsumers * CLUSTER);
      }
      fence_barrier_init();
    }
    if constexpr (kCluster) cluster_sync();
    else __syncthreads();
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    // The cluster walks tiles of CLUSTER x 1 program tiles; program `cta` takes row cta.
    const int ctiles_m = (tiles_m + CLUSTER - 1) / CLUSTER, n_tiles = ctiles_m * tiles_n;
    const int first = programs.program / CLUSTER, step = programs.count / CLUSTER;
    const int kblocks = (K + BK - 1) / BK;
    const int cshift = ctiles_m > 0 ? programs.row_shift / CLUSTER % ctiles_m : 0;
    // The tile (tm, tn) of the cluster's step `tile`: program `cta` takes row cta of it.
    const auto tile_of = [&](int tile, int& tm, int& tn) {
      int ctm;
      grouped_tile(tile, ctiles_m, tiles_n, GROUP_M, ctm, tn);
      ctm += cshift;
      if (ctm >= ctiles_m) ctm -= ctiles_m;
      tm = ctm * CLUSTER + static_cast<int>(cta);
    };

    if (warpgroup == 0) {
      setmaxnreg_dec<kProducerRegs>();
      if (threadIdx.x == 0) {
        a.prefetch();
        tma_prefetch(b);
        int stage = 0;
        u32 phase = 0;
        for (int tile = first; tile < n_tiles; tile += step) {
          int tm, tn;
          tile_of(tile, tm, tn);
          if constexpr (!kNoPrologue<Prologue>) {
            if (tm < tiles_m) {
              prologue(tm * BM, tn * BN);
              fence_proxy_async_global();
            }
          }
          const int passes = a.template passes<BM>(tm * BM);
          for (int it = 0; it < kblocks * passes; ++it) {
            const int kb = it % kblocks, pass = it / kblocks;
            mbarrier_wait(empty[stage], phase ^ 1);
            mbarrier_arrive_expect_tx(full[stage], kStageBytes);
            unsigned char* sa = smem + stage * kStageBytes;
            unsigned char* sb = sa + kABytes;
            tma_load_2d(sa, a.map_of(tm * BM, pass), full[stage], kb * BK, a.row_of(tm * BM, pass));
            if constexpr (BL == gemm::BLayout::kn) {
              // B's 64-column boxes, this program's share of them multicast.
              constexpr int kBoxes = BN / 64 / CLUSTER;
#pragma unroll
              for (int j = static_cast<int>(cta) * kBoxes; j < (static_cast<int>(cta) + 1) * kBoxes; ++j) {
                if constexpr (kCluster) {
                  tma_load_2d_multicast(sb + j * BK * 128, b, full[stage], tn * BN + j * 64, kb * BK,
                                        (1u << CLUSTER) - 1);
                } else {
                  tma_load_2d(sb + j * BK * 128, b, full[stage], tn * BN + j * 64, kb * BK);
                }
              }
            } else {
              constexpr int kRows = BN / CLUSTER;
              if constexpr (kCluster) {
                tma_load_2d_multicast(sb + cta * kRows * 128, b, full[stage], kb * BK,
                                      tn * BN + static_cast<int>(cta) * kRows, (1u << CLUSTER) - 1);
              } else {
                tma_load_2d(sb, b, full[stage], kb * BK, tn * BN);
              }
            }
            if (++stage == STAGES) {
              stage = 0;
              phase ^= 1;
            }
          }
        }
      }
    } else {
      setmaxnreg_inc<kConsumerRegs>();
      const int consumer = warpgroup - 1;
      const bool releaser = threadIdx.x % 128 == 0;
      const auto release = [&](int s) {
        if (!releaser) return;
        if constexpr (kCluster) {
#pragma unroll
          for (int r = 0; r < CLUSTER; ++r) mbarrier_arrive_cluster(empty[s], static_cast<u32>(r));
        } else {
          mbarrier_arrive(empty[s]);
        }
      };
      float acc[BN / 2];
      int stage = 0;
      u32 phase = 0;
      for (int tile = first; tile < n_tiles; tile += step) {
        int tm, tn;
        tile_of(tile, tm, tn);
        int held = -1;  // the slot the wgmma group in flight reads
        const int steps = kblocks * a.template passes<BM>(tm * BM);
        for (int it = 0; it < steps; ++it) {  // every pass's slices of K
          mbarrier_wait(full[stage], phase);
          const unsigned char* sa = smem + stage * kStageBytes + consumer * 64 * 128;
          const unsigned char* sb = smem + stage * kStageBytes + kABytes;
          wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < BK / 16; ++kk) {
            const u64 da = smem_desc(sa + kk * 32, 16, 1024);
            const u64 db = kTransB ? smem_desc(sb + kk * 16 * 128, BK * 128, 1024) : smem_desc(sb + kk * 32, 16, 1024);
            Mma::template mma<kTransB>(acc, da, db, (it | kk) != 0);
          }
          wgmma_commit();
          wgmma_wait<1>();
          if (held >= 0) release(held);
          held = stage;
          if (++stage == STAGES) {
            stage = 0;
            phase ^= 1;
          }
        }
        wgmma_wait<0>();
        fence_operands(acc);
        if (held >= 0) release(held);
        if (kblocks == 0) {
#pragma unroll
          for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
        }
        // A cluster along M over an odd number of tile rows computes a row past M for
        // its last program (it still loads and multicasts its share of B): no epilogue
        // there, whose signals or scalar stores would name a tile that does not exist.
        if (tm < tiles_m) epilogue(acc, tm * BM, tn * BN);
      }
      // The epilogue's TMA stores (store_tile_async) complete before the program ends.
      if (threadIdx.x % 128 == 0) bulk_wait_all();
    }
    // A program may not leave while its cluster peer can still multicast into its
    // shared memory or arrive on its barriers.
    if constexpr (kCluster) cluster_sync();
  }

  // The staging buffer of `consumer` (64 rows x kStageCols 16-bit values, as 64-column
  // boxes of 8 KiB, 128-byte swizzled), after the ring.
  IRIS_DEVICE IRIS_FORCEINLINE static unsigned char* staging(int consumer) {
    extern __shared__ __align__(1024) unsigned char iris_sm90_dynamic_smem[];
    return reinterpret_cast<unsigned char*>((reinterpret_cast<u64>(iris_sm90_dynamic_smem) + 1023) & ~1023ull) +
           STAGES * kStageBytes + consumer * kStagingBytes;
  }

  // The calling consumer thread's part in moving a tile through its staging buffer: its
  // consumer warpgroup, its thread, warp and lane there, the buffer, the tile's first row
  // it covers, and whether rows of `c` (ldc elements apart) take 16-byte accesses.
  struct Staged {
    int consumer, t, warp, lane;
    unsigned char* stage;
    long long row0;
    bool vec;
  };
  IRIS_DEVICE IRIS_FORCEINLINE static Staged staged(const void* c, long long ldc) {
    const int consumer = static_cast<int>(threadIdx.x) / 128 - 1, t = static_cast<int>(threadIdx.x) % 128;
    return {consumer, t, t / 32, t % 32, staging(consumer), 64LL * consumer,
            ldc % 8 == 0 && reinterpret_cast<u64>(c) % 16 == 0};
  }

  // Where 16-byte chunk cj (columns 8 cj ..) of row r of a piece sits in the staging
  // buffer: its 64-column box, then the row's 128 bytes, chunks swizzled by the row.
  IRIS_DEVICE IRIS_FORCEINLINE static int chunk_at(int r, int cj) {
    return (cj / 8) * 8192 + r * 128 + (((cj % 8) ^ (r % 8)) * 16);
  }

  // Where accumulator slots s and s + 1 (neighbouring columns of one row) of the calling
  // thread (`warp`, `lane` of its consumer warpgroup) sit in its piece of the staging
  // buffer: the byte offset of their 4 bytes.
  IRIS_DEVICE IRIS_FORCEINLINE static int staged_at(int s, int warp, int lane) {
    const int r = 16 * warp + lane / 4 + 8 * (s % 4 / 2);
    const int cc = 8 * (s / 4) % kStageCols + 2 * (lane % 4);
    return chunk_at(r, cc / 8) + (cc % 8) * 2;
  }

 public:
  // In the epilogue: the calling consumer's 64 rows of a tile, converted to U (16-bit),
  // to c (the tile's origin, rows ldc elements apart), rows >= rows_valid and columns >=
  // cols_valid left alone. The values pass through this consumer's staging buffer
  // (64 x kStageCols at a time, 128-byte swizzled: conflict-free from the accumulator
  // layout) and leave as coalesced 16-byte stores, a warp writing whole rows: written
  // straight from the accumulators, a warp's stores would touch 8 rows 16 bytes each.
  // `c` may be a peer's memory. Every thread of the consumer warpgroup calls it.
  // `vals` are in the accumulator layout (Acc): the accumulators themselves, or a tile
  // computed from them (a cast, elementwise math); each value is converted to U.
  template <class V, class U>
  IRIS_DEVICE IRIS_FORCEINLINE static void store_tile(const V (&vals)[BN / 2], U* c, long long ldc, long long rows_valid,
                                                      long long cols_valid) {
    static_assert(sizeof(U) == 2, "store_tile stages 16-bit values");
    const auto [consumer, t, warp, lane, stage, row0, vec] = staged(c, ldc);
    if (t == 0) bulk_wait_read<0>();  // no box of an earlier store_tile_async is still read
#pragma unroll
    for (int h = 0; h < BN / kStageCols; ++h) {
      named_barrier_sync(1 + consumer, 128);  // the previous piece has left
#pragma unroll
      for (int s = 0; s < BN / 2; s += 2) {
        if ((8 * (s / 4)) / kStageCols != h) continue;  // compile time: slot s's column piece
        const int off = staged_at(s, warp, lane);
        const u32 lo = bits16(U(vals[s])), hi = bits16(U(vals[s + 1]));
        *reinterpret_cast<u32*>(stage + off) = lo | hi << 16;
      }
      named_barrier_sync(1 + consumer, 128);
      constexpr int kChunksPerRow = kStageCols / 8;
      // Two chunks at a time: unrolled further, the chunk addresses held alongside the
      // next piece's accumulators exceed the consumers' registers (local-memory spills).
#pragma unroll 2
      for (int i = 0; i < 64 * kChunksPerRow / 128; ++i) {
        const int chunk = i * 128 + t, r = chunk / kChunksPerRow, cj = chunk % kChunksPerRow;
        const long long gr = row0 + r, gc = (long long)h * kStageCols + cj * 8;
        if (gr >= rows_valid || gc >= cols_valid) continue;
        const uint4 v = *reinterpret_cast<const uint4*>(stage + chunk_at(r, cj));
        U* dst = c + gr * ldc + gc;
        if (vec && gc + 8 <= cols_valid) {
          asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                       : "memory");
        } else {
          const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (int j = 0; j < 8; ++j) {
            if (gc + j < cols_valid) *reinterpret_cast<unsigned short*>(dst + j) = static_cast<unsigned short>(w[j / 2] >> (16 * (j % 2)));
          }
        }
      }
    }
  }

  // store_tile by TMA: the calling consumer's 64 rows of a tile, converted to U (16-bit),
  // into the tensor of `map` with the tile's origin at element (row, col) of it, from
  // this consumer's staging buffer one 64-column box at a time. Each box is written
  // there as TMA reads it (128-byte swizzled), and one thread hands it to TMA and goes
  // on; before a box slot is written again that thread waits until TMA has read what it
  // held, never for the writes themselves: they drain while the next tile's mainloop
  // runs, and the program waits for them as it ends (mainloop). So a tile pushed to a
  // peer holds its consumers no longer than it takes to stage it, where store_tile's
  // stores from every thread wait for room on the link. Where the launcher gave no map
  // (it is zero) or this consumer's rows or the tile's columns are not whole (the
  // tensor's edge), the consumer's threads store each staged box through c (rows ldc
  // elements apart) as store_tile does; one staging loop serves both ways (two loops
  // side by side would hold more registers than the accumulators leave). Every thread
  // of the consumer warpgroup calls it.
  template <class V, class U>
  IRIS_DEVICE IRIS_FORCEINLINE static void store_tile_async(const V (&vals)[BN / 2], const TensorMap* map, U* c,
                                                            long long ldc, long long rows_valid, long long cols_valid,
                                                            long long row, long long col) {
    static_assert(sizeof(U) == 2, "store_tile_async stages 16-bit values");
    const auto [consumer, t, warp, lane, stage, row0, vec] = staged(c, ldc);
    const bool tma = (map->opaque[0] | map->opaque[1]) != 0 && rows_valid >= row0 + 64 && cols_valid >= BN;
    constexpr int kSlots = kStageCols / 64;  // the boxes the staging buffer holds at once
#pragma unroll
    for (int j = 0; j < BN / 64; ++j) {
      unsigned char* const box = stage + (j % kSlots) * 8192;
      // TMA has read the slot's last box (the threads have: the barriers between).
      if (t == 0) bulk_wait_read<kSlots - 1>();
      named_barrier_sync(1 + consumer, 128);
#pragma unroll
      for (int s = 0; s < BN / 2; s += 2) {
        if ((8 * (s / 4)) / 64 != j) continue;  // compile time: slot s's box
        const int r = 16 * warp + lane / 4 + 8 * (s % 4 / 2);
        const int cc = 8 * (s / 4) % 64 + 2 * (lane % 4);
        const int off = r * 128 + (((cc / 8) ^ (r % 8)) * 16) + (cc % 8) * 2;
        *reinterpret_cast<u32*>(box + off) = bits16(U(vals[s])) | bits16(U(vals[s + 1])) << 16;
      }
      if (tma) fence_proxy_async_shared();
      named_barrier_sync(1 + consumer, 128);
      if (tma) {
        if (t == 0) {
          tma_store_2d(*map, box, static_cast<int>(col + 64 * j), static_cast<int>(row + row0));
          bulk_commit();
        }
        continue;
      }
      // The stores of store_tile, written out again: one helper for both took more
      // registers (ptxas: sample 07's kernel 56 bytes of spills, matmul_all_scatter's 68,
      // where they are 24 and 0 so).
#pragma unroll 2
      for (int i = 0; i < 64 * 8 / 128; ++i) {
        const int chunk = i * 128 + t, r = chunk / 8, cj = chunk % 8;
        const long long gr = row0 + r, gc = 64LL * j + cj * 8;
        if (gr >= rows_valid || gc >= cols_valid) continue;
        const uint4 v = *reinterpret_cast<const uint4*>(box + r * 128 + ((cj ^ (r % 8)) * 16));
        U* dst = c + gr * ldc + gc;
        if (vec && gc + 8 <= cols_valid) {
          asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                       : "memory");
        } else {
          const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            if (gc + e < cols_valid) *reinterpret_cast<unsigned short*>(dst + e) = static_cast<unsigned short>(w[e / 2] >> (16 * (e % 2)));
          }
        }
      }
    }
  }

  // In the epilogue: acc[s] += the value of the calling consumer's 64 rows of a tile of
  // 16-bit U at c (rows ldc elements apart) at slot s's place, rows >= rows_valid and
  // columns >= cols_valid adding nothing. store_tile the other way: the rows come in
  // 16 bytes at a time, coalesced, into this consumer's staging buffer, and each thread
  // reads its slots from there, where loads in the accumulator layout would have each
  // warp touch 8 rows 4 bytes apiece. The copies bypass L1 (cp.async.cg), and the
  // unaligned path's loads are volatile: `c` is written by peers during the kernel,
  // ordered before this by a wait. Every thread of the consumer warpgroup calls it.
  template <class U>
  IRIS_DEVICE IRIS_FORCEINLINE static void add_tile(float (&acc)[BN / 2], const U* c, long long ldc, long long rows_valid,
                                                    long long cols_valid) {
    static_assert(sizeof(U) == 2, "add_tile stages 16-bit values");
    const auto [consumer, t, warp, lane, stage, row0, vec] = staged(c, ldc);
    if (t == 0) bulk_wait_read<0>();  // no box of an earlier store_tile_async is still read
#pragma unroll
    for (int h = 0; h < BN / kStageCols; ++h) {
      named_barrier_sync(1 + consumer, 128);  // the previous piece has been read
      constexpr int kChunksPerRow = kStageCols / 8;
      if (vec) {
        // Every chunk of the piece in flight at once, global to shared without registers
        // (cp.async, zero-filling what lies past the valid rows or columns): one round
        // trip a piece, where loads through registers held two chunks in flight.
        // A thread's chunks share their column (128 threads cover whole rows) and lie
        // `step` rows apart: one pointer, one column test, one row test a chunk.
        static_assert(128 % kChunksPerRow == 0, "a warpgroup's chunks cover whole rows");
        constexpr int kStep = 128 / kChunksPerRow;
        const int r0 = t / kChunksPerRow, cj = t % kChunksPerRow;
        const long long gc = (long long)h * kStageCols + cj * 8;
        const long long left = (cols_valid - gc) * 2;
        const int col_bytes = left <= 0 ? 0 : left >= 16 ? 16 : static_cast<int>(left);
        const int rows_left = static_cast<int>(rows_valid - row0 < 64 ? rows_valid - row0 : 64) - r0;
        const U* src = c + (row0 + r0) * ldc + gc;
        const unsigned dst = static_cast<unsigned>(
            __cvta_generic_to_shared(stage + chunk_at(r0, cj)));
#pragma unroll
        for (int i = 0; i < 64 / kStep; ++i) {
          const int bytes = i * kStep < rows_left ? col_bytes : 0;
          asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst + i * kStep * 128),
                       "l"(bytes ? src + i * kStep * ldc : c), "r"(bytes)
                       : "memory");
        }
        asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
      } else {
#pragma unroll 2
        for (int i = 0; i < 64 * kChunksPerRow / 128; ++i) {
          const int chunk = i * 128 + t, r = chunk / kChunksPerRow, cj = chunk % kChunksPerRow;
          const long long gr = row0 + r, gc = (long long)h * kStageCols + cj * 8;
          u32 w[4] = {0u, 0u, 0u, 0u};
          if (gr < rows_valid) {
            const volatile unsigned short* src = reinterpret_cast<const volatile unsigned short*>(c + gr * ldc + gc);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
              if (gc + j < cols_valid) w[j / 2] |= u32(src[j]) << (16 * (j % 2));
            }
          }
          *reinterpret_cast<uint4*>(stage + chunk_at(r, cj)) =
              uint4{w[0], w[1], w[2], w[3]};
        }
      }
      named_barrier_sync(1 + consumer, 128);
#pragma unroll
      for (int s = 0; s < BN / 2; s += 2) {
        if ((8 * (s / 4)) / kStageCols != h) continue;  // compile time: slot s's column piece
        const int off = staged_at(s, warp, lane);
        const u32 both = *reinterpret_cast<const u32*>(stage + off);
        const unsigned short lo = static_cast<unsigned short>(both & 0xffffu), hi = static_cast<unsigned short>(both >> 16);
        U a, b;
        memcpy(&a, &lo, 2);
        memcpy(&b, &hi, 2);
        acc[s] += static_cast<float>(a);
        acc[s + 1] += static_cast<float>(b);
      }
    }
  }
};

}  // namespace iris::device::sm90
#endif  // IRIS_CUDA_COMPILER
