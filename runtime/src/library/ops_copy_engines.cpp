// The fused ops whose data the GPU's copy engines move beside the GEMM (Schedule::
// copy_engines; docs/decisions/0007): the GEMM's epilogue writes local memory only, and
// copies on side streams, ordered after the launches that wrote their rows by events,
// carry the rows to the peers. The ops' other schedules and the choice between them are
// in ops.cpp.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>

#include "library/library.hpp"
#include "library/ops_internal.hpp"

namespace iris::ops::detail {
namespace {

using library::buffer;
using library::Instance;
using library::instance;
namespace dsl = library::dsl;
using namespace internal;

// Side streams first .. first + count - 1 wait for what `s` has queued (fork), or `s`
// waits for theirs (join). A CUDA graph capture refuses to join a stream it never forked.
void fork_sides(Context& ctx, Stream s, int first, int count) {
  for (int k = 0; k < count; ++k) ctx.order(s, ctx.side_stream(first + k));
}
void join_sides(Context& ctx, Stream s, int first, int count) {
  for (int k = 0; k < count; ++k) ctx.order(ctx.side_stream(first + k), s);
}

// A side stream a peer, as many as there are (at most Context::kSideStreams).
int side_streams_for_peers(Context& ctx) { return std::min(ctx.world() - 1, Context::kSideStreams); }

}  // namespace

// all_gather_matmul by the copy engines: this rank's rows copied into every peer's G on
// a side stream, each copy followed by an 8-byte copy of 1 into the receiver's flag of
// those rows (stream order puts it after the rows), while matmul_gathered, from this
// rank's own rows on (copied into G first), waits for the flags of the rows it covers.
// No SM moves data, so the GEMM keeps every SM. The flags are zeroed at the start of each
// call and a device barrier follows (every rank's are zero, and its GEMM of the last
// call, which read G, is done), so a flag of 1 always means this call's rows, the same in
// a CUDA graph: no flag of the last call can land after the zeroing, since that call's
// GEMM on its receiver waited for every one of them before it ended.
void all_gather_matmul_copies(Context& ctx, const Gemm& g, const Options& o, void* gathered) {
  const int world = ctx.world(), rank = ctx.rank();
  const std::int64_t rows = g.m * world;
  const std::size_t bytes = static_cast<std::size_t>(g.m * g.k) * dtype_size(g.dtype);
  Instance& mm = instance(ctx, dsl::ops_all_gather_matmul::matmul_gathered, gemm_defines(g, o));
  auto* flags = static_cast<std::uint64_t*>(library::zeroed(ctx, "ops.gather_flags", static_cast<std::size_t>(world) * 8));
  // Words of 1: the source of the flag copies, and the epoch matmul_gathered reads.
  std::uint64_t* one = library::constant_words(ctx, "ops.gather_ones", 2, 1);
  Stream s = stream_of(ctx, o);
  ctx.zero_async(flags, static_cast<std::size_t>(world) * 8, s);
  ctx.device_barrier(s);
  // Where they cannot go beside the GEMM the copies go first, on the rank's stream, and a
  // device barrier ends them everywhere (no overlap; the same result).
  const bool beside = library::copies_beside_waits(ctx);
  Stream side = beside ? ctx.side_stream() : s;
  if (beside) ctx.order(s, side);  // fork
  auto* g_rows = static_cast<char*>(gathered) + static_cast<std::size_t>(rank) * bytes;
  for (int k = 1; k < world; ++k) {
    const int q = (rank + k) % world;
    ctx.copy_async(ctx.translate(g_rows, q), g.a, bytes, side);
    ctx.copy_async(ctx.translate(flags + rank, q), one, sizeof(std::uint64_t), side);
  }
  if (!beside && !ctx.on_host()) ctx.device_barrier(s);
  // This rank's own rows on its own stream, before the GEMM: a copy within one GPU may
  // run as a kernel, which on the side stream would wait for an SM that the GEMM, waiting
  // for those rows, never gives up.
  ctx.copy_async(g_rows, g.a, bytes, s);
  ctx.copy_async(flags + rank, one, sizeof(std::uint64_t), s);
  mm.program.launch(mm.kernel,
                    {buffer(gathered, g.dtype, {rows, g.k}), buffer(g.b, g.dtype, {g.k, g.n}),
                     buffer(g.c, g.dtype, {rows, g.n}), flags_arg(flags, world), buffer(one, DType::u64, {2})},
                    s);
  if (beside) ctx.order(side, s);  // join: the call ends once every copy has landed
}

namespace {

// Tile rows of a GEMM launch in the copy-engine forms: about one wave of tiles (as many
// tile rows as the SMs take at once), so each launch's copies go out while the next
// launch computes, and only the last launch's are left after the GEMM.
std::int64_t copy_phase_tile_rows(Context& ctx, const Gemm& g, const Options& o) {
  const std::int64_t across = (g.n + o.block_n - 1) / o.block_n;
  return std::max<std::int64_t>(1, ctx.multiprocessors() / across);
}

}  // namespace

// matmul_all_scatter by the copy engines: the GEMM into this rank's columns of its own C
// in launches of about a wave of tiles each (copy_phase_tile_rows), and after each, on a
// side stream per peer that waits for that launch alone (an event), a 2-D copy of its
// rows of those columns into the peer's C. The copy engines move the columns while the
// GEMM's next launch computes: no SM moves data and no SM waits. (Tried first: one
// GEMM counting its finished tiles per tile row and copies that waited for the counts
// on the GPU's front end (cuStreamWaitValue64): 0.72x-0.77x cuBLAS + NCCL at M = 4096,
// where this form's launches are ordered by events alone.) Device barriers before
// (every rank's C is free of its last call) and after (every rank's copies have landed)
// bound the call.
void matmul_all_scatter_copies(Context& ctx, const Gemm& g, const Options& o) {
  const int world = ctx.world(), rank = ctx.rank();
  Instance& mm = instance(ctx, dsl::ops_matmul_all_scatter::matmul_own_columns, gemm_defines(g, o));
  const std::size_t es = dtype_size(g.dtype), pitch = static_cast<std::size_t>(g.n * world) * es,
                    width = static_cast<std::size_t>(g.n) * es;
  const std::int64_t phase_rows = copy_phase_tile_rows(ctx, g, o) * o.block_m;
  // Two side streams a peer where there are enough, taking the launches in turn: a
  // launch's copy to a peer need not queue behind the last launch's.
  const int peers = side_streams_for_peers(ctx);
  const int lanes = 2 * (world - 1) <= Context::kSideStreams ? 2 : 1;
  Stream s = stream_of(ctx, o);
  ctx.device_barrier(s);
  char* mine = static_cast<char*>(g.c) + static_cast<std::size_t>(rank) * width;
  for (std::int64_t row0 = 0, launch = 0; row0 < g.m; row0 += phase_rows, ++launch) {
    const std::int64_t rows = std::min(phase_rows, g.m - row0);
    const auto* a = static_cast<const char*>(g.a) + static_cast<std::size_t>(row0 * g.k) * es;
    char* c = static_cast<char*>(g.c) + static_cast<std::size_t>(row0) * pitch;
    mm.program.launch(mm.kernel,
                      {buffer(a, g.dtype, {rows, g.k}), buffer(g.b, g.dtype, {g.k, g.n}),
                       buffer(c, g.dtype, {rows, g.n * world})},
                      s);
    const int lane = static_cast<int>(launch % lanes) * peers;
    fork_sides(ctx, s, lane, peers);
    char* from = mine + static_cast<std::size_t>(row0) * pitch;
    for (int k = 1; k < world; ++k) {
      ctx.copy_2d_async(ctx.translate(from, (rank + k) % world), pitch, from, pitch, width, static_cast<std::size_t>(rows),
                        ctx.side_stream(lane + (k - 1) % peers));
    }
  }
  // Join the streams that were forked: in a CUDA graph a stream the capture never forked
  // may not be joined (one launch leaves the second lane unused).
  const int used = static_cast<int>(std::min<std::int64_t>(lanes, (g.m + phase_rows - 1) / phase_rows)) * peers;
  join_sides(ctx, s, 0, used);
  ctx.device_barrier(s);
}

namespace {

// The sums of this rank's rows by the copy engines (matmul_reduce_scatter's and
// matmul_all_reduce's copy_engines): the GEMM in one launch per peer's rows, from the
// next rank's on, into a local scratch, and from there, on a side stream per peer that
// waits for that launch alone (an event), copied into slab `rank` of the owner's R in
// pieces of about a wave of tile rows (copy_phase_tile_rows), each followed by an 8-byte
// copy of 1 into the owner's flag of that piece (stream order puts it after the rows).
// Each copy goes out while the next peer's rows compute, the last peer's under this
// rank's own. This rank's own rows come last, a launch a piece (matmul_sum_slabs), each
// tile summed in the epilogue with the peers' tiles of those rows once their flags say
// they have landed, into `out` (the piece's rows of C follow each other from there);
// after_piece(row0, rows) runs after each such launch (matmul_all_reduce copies the sums
// out). No SM moves data, and nothing is left to sum after the GEMM. The flags are zeroed
// and a device barrier follows (every rank is done with its R and flags of the last call,
// whose pieces it waited for: none of them can land after the zeroing).
void sum_rows_by_copies(Context& ctx, const char* what, const Gemm& g, const Options& asked, Options o, Stream s,
                        char* out, const std::function<void(std::int64_t row0, std::int64_t rows)>& after_piece) {
  o = push_tile(ctx, what, g, asked, o);
  // The pieces (which flag a sender raises and a receiver waits for) follow from the
  // SM count: every rank's GPU is of one model, as the tile choice assumes too.
  const int world = ctx.world(), rank = ctx.rank();
  const std::int64_t mr = g.m / world;
  const std::int64_t piece = std::min(mr, copy_phase_tile_rows(ctx, g, o) * o.block_m), pieces = (mr + piece - 1) / piece;
  const std::size_t es = dtype_size(g.dtype), row_bytes = static_cast<std::size_t>(g.n) * es,
                    block = static_cast<std::size_t>(mr) * row_bytes, flag_bytes = static_cast<std::size_t>(pieces * world) * 8;
  auto* r = static_cast<char*>(library::scratch(ctx, "ops.slabs", static_cast<std::size_t>(world) * block));
  // One block a peer (none on one rank: nothing is copied).
  auto* staged = static_cast<char*>(library::scratch(ctx, "ops.copied_rows", static_cast<std::size_t>(world - 1) * block));
  auto* flags = static_cast<std::uint64_t*>(library::scratch(ctx, "ops.copy_flags", flag_bytes));
  std::uint64_t* one = library::constant_words(ctx, "ops.gather_ones", 2, 1);
  Instance& sum = instance(ctx, dsl::ops_matmul_reduce_scatter::matmul_sum_slabs, gemm_defines(g, o));
  const int streams = side_streams_for_peers(ctx);
  ctx.zero_async(flags, flag_bytes, s);
  ctx.device_barrier(s);
  char* slab = r + static_cast<std::size_t>(rank) * block;
  for (int k = 1; k < world; ++k) {
    const int q = (rank + k) % world;
    const auto* a = static_cast<const char*>(g.a) + static_cast<std::size_t>(q * mr * g.k) * es;
    char* mine = staged + static_cast<std::size_t>(k - 1) * block;
    plain_matmul(ctx, g, a, mr, mine, o, s);
    Stream side = ctx.side_stream((k - 1) % streams);
    ctx.order(s, side);
    for (std::int64_t p = 0; p < pieces; ++p) {
      const std::int64_t row0 = p * piece, rows = std::min(piece, mr - row0);
      const std::size_t at = static_cast<std::size_t>(row0) * row_bytes;
      ctx.copy_async(ctx.translate(slab + at, q), mine + at, static_cast<std::size_t>(rows) * row_bytes, side);
      ctx.copy_async(ctx.translate(flags + p * world + rank, q), one, sizeof(std::uint64_t), side);
    }
  }
  // Where a copy into a peer may be a kernel (ranks sharing a GPU, HIP), one queued
  // behind GEMM programs that wait for it would never run: there every copy lands, as a
  // device barrier after the join says, before the launches that wait for them.
  if (!library::copies_beside_waits(ctx)) {
    join_sides(ctx, s, 0, streams);
    ctx.device_barrier(s);
  }
  const auto* own = static_cast<const char*>(g.a) + static_cast<std::size_t>(rank * mr * g.k) * es;
  for (std::int64_t p = 0; p < pieces; ++p) {
    const std::int64_t row0 = p * piece, rows = std::min(piece, mr - row0);
    sum.program.launch(sum.kernel,
                       {buffer(own + static_cast<std::size_t>(row0 * g.k) * es, g.dtype, {rows, g.k}),
                        buffer(g.b, g.dtype, {g.k, g.n}), buffer(r, g.dtype, {g.m, g.n}),
                        buffer(out + static_cast<std::size_t>(row0) * row_bytes, g.dtype, {rows, g.n}),
                        buffer(flags + p * world, DType::u64, {world}), row0, mr},
                       s);
    after_piece(row0, rows);
  }
  join_sides(ctx, s, 0, streams);
}

}  // namespace

// matmul_reduce_scatter by the copy engines: sum_rows_by_copies into C. The call ends
// with this rank's sums in C and its copies into the peers landed (joined); the peers'
// copies into its slabs were all waited for.
void matmul_reduce_scatter_copies(Context& ctx, const Gemm& g, const Options& asked, const Options& o) {
  sum_rows_by_copies(ctx, "matmul_reduce_scatter", g, asked, o, stream_of(ctx, o), static_cast<char*>(g.c),
                     [](std::int64_t, std::int64_t) {});
}

// matmul_all_reduce by the copy engines for a C of A's type: sum_rows_by_copies into
// this rank's rows of its C, each piece of sums then copied into every peer's C on the
// side streams (the copy engines again) while the next piece computes; a device barrier
// ends the call once every rank's sums have landed everywhere.
void matmul_all_reduce_copies(Context& ctx, const Gemm& g, const Options& asked, const Options& o) {
  const int world = ctx.world(), rank = ctx.rank();
  const std::size_t row_bytes = static_cast<std::size_t>(g.n) * dtype_size(g.dtype);
  char* mine = static_cast<char*>(g.c) + static_cast<std::size_t>(rank * (g.m / world)) * row_bytes;
  const int streams = side_streams_for_peers(ctx);
  Stream s = stream_of(ctx, o);
  sum_rows_by_copies(ctx, "matmul_all_reduce", g, asked, o, s, mine, [&](std::int64_t row0, std::int64_t rows) {
    fork_sides(ctx, s, 0, streams);
    char* from = mine + static_cast<std::size_t>(row0) * row_bytes;
    for (int k = 1; k < world; ++k) {
      ctx.copy_async(ctx.translate(from, (rank + k) % world), from, static_cast<std::size_t>(rows) * row_bytes,
                     ctx.side_stream((k - 1) % streams));
    }
  });
  ctx.device_barrier(s);
}

}  // namespace iris::ops::detail
