// The fused ops (iris/ops.hpp): the GEMMs of dsl/ops/matmul.iris with the consumers of
// dsl/ops/ (or the collectives of iris/ccl.hpp), through library.hpp's instances.
#include "iris/ops.hpp"

#include <cmath>
#include <cstdint>
#include <string_view>

#include "iris/jit.hpp"
#include "library/library.hpp"
#include "library/ops_internal.hpp"

namespace iris::ops {

const char* name(Schedule s) {
  switch (s) {
    case Schedule::automatic: return "automatic";
    case Schedule::unfused: return "unfused";
    case Schedule::bulk_synchronous: return "bulk_synchronous";
    case Schedule::producer_consumer: return "producer_consumer";
    case Schedule::fused: return "fused";
    case Schedule::fused_pull: return "fused_pull";
    case Schedule::specialized: return "specialized";
    case Schedule::copy_engines: return "copy_engines";
  }
  return "?";
}

namespace internal {

using library::buffer;
using library::Instance;
using library::instance;
namespace dsl = library::dsl;

Stream stream_of(Context& ctx, const Options& o) { return o.stream ? o.stream : ctx.stream(); }

// `count` u64 flags at `flags` on the heap, as a kernel argument.
Arg flags_arg(void* flags, std::int64_t count) {
  return Arg::heap_buffer(flags, DType::u64, Shape{count}, static_cast<std::size_t>(count) * sizeof(std::uint64_t));
}

std::map<std::string, std::int64_t> gemm_defines(const Gemm& g, const Options& o) {
  auto d = library::type_defines(g.dtype, false);
  d["BM"] = o.block_m;
  d["BN"] = o.block_n;
  return d;
}

// C = A x B into `c` of shape [m, n] (a local or heap buffer).
void plain_matmul(Context& ctx, const Gemm& g, const void* a, std::int64_t m, void* c, const Options& o, Stream s) {
  Instance& mm = instance(ctx, dsl::ops_matmul::matmul, gemm_defines(g, o));
  mm.program.launch(mm.kernel, {buffer(a, g.dtype, {m, g.k}), buffer(g.b, g.dtype, {g.k, g.n}), buffer(c, g.dtype, {m, g.n})},
                    s);
}

}  // namespace internal

using namespace internal;

namespace {

using detail::Gemm;
using library::buffer;
using library::Instance;
using library::instance;
namespace dsl = library::dsl;
using library::state_arg;
using library::sync_arg;

std::string shape_text(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// The GEMM's tiles over a rows x cols C, in tiles of bm x bn.
std::int64_t tiles_of(std::int64_t rows, std::int64_t cols, std::int64_t bm, std::int64_t bn) {
  return ((rows + bm - 1) / bm) * ((cols + bn - 1) / bn);
}

// The options with the GEMM's tile checked, or chosen where it is 0: 128 x 256 unless
// that leaves more than half the SMs without a tile, then 128 x 128, then 64 x 128 (a
// GEMM of 256 rows by 8192 columns has 64 tiles of 128 x 256 for 132 SMs; of 512 rows,
// 128, one wave, which halving the tile would only split into two).
Options with_tile(const char* what, Context& ctx, const Options& asked, std::int64_t rows, std::int64_t cols) {
  Options o = asked;
  if (o.block_m == 0 && o.block_n == 0) {
    const auto tiles = [&](std::int64_t bm, std::int64_t bn) { return tiles_of(rows, cols, bm, bn); };
    const std::int64_t sms = ctx.multiprocessors();
    o.block_m = 128;
    o.block_n = 2 * tiles(128, 256) > sms ? 256 : 128;
    if (o.block_n == 128 && 2 * tiles(128, 128) <= sms) o.block_m = 64;
  }
  const bool rows_ok = o.block_m == 64 || o.block_m == 128;
  const bool cols_ok = o.block_n == 64 || o.block_n == 128 || o.block_n == 256;  // powers of two: .iris 2-D tiles
  if (!rows_ok || !cols_ok) {
    throw Error(std::string(what) + ": the GEMM tile " + std::to_string(o.block_m) + " x " + std::to_string(o.block_n) +
                " is not one of 64 or 128 rows by 64, 128 or 256 columns (or 0 x 0: chosen by shape)");
  }
  return o;
}

Schedule schedule_of(const char* what, Schedule asked, std::initializer_list<Schedule> allowed) {
  if (asked == Schedule::automatic) return *allowed.begin();
  for (Schedule s : allowed) {
    if (s == asked) return s;
  }
  std::string names;
  for (Schedule s : allowed) names += std::string(names.empty() ? "" : ", ") + name(s);
  throw Error(std::string(what) + " has no " + name(asked) + " schedule (it has " + names + ")");
}

// An automatic call on a job of one rank: every op is then C = A x B, so the GEMM writes
// C and nothing else runs (the collective would be a copy).
bool only_the_gemm(Context& ctx, const Options& asked) {
  return asked.schedule == Schedule::automatic && ctx.world() == 1;
}

// The GEMM into the heap scratch P, announcing each tile, then `consumer` with (P, C of
// shape c_shape, flags, state, sync): on the same stream or beside it. `producer`:
// matmul_signal (every tile into this rank's P, announced to every rank), or
// matmul_push_rows_signal (every tile into its owner's P, announced there).
void produce_and_consume(Context& ctx, const Gemm& g, const Options& o, Schedule schedule,
                         const dsl::DslKernel& consumer, Shape c_shape,
                         const dsl::DslKernel& producer = dsl::ops_matmul::matmul_signal) {
  // Ranks that are threads sharing one GPU share one CUDA context too, and there the
  // hardware may hold one rank's producer or consumer back until a peer's spinning
  // consumer ends, which waits for it (seen at 4 ranks on one H100): the consumer then
  // runs after the producer on the same stream. It computes the same; only the overlap,
  // which means nothing on a shared GPU, is gone.
  const bool shared_context = library::share(ctx) > 1 && std::string_view(ctx.bootstrap_name()) == "threads";
  const bool beside = schedule == Schedule::producer_consumer && !shared_context;
  // Beside the GEMM the consumer keeps to a quarter of the SMs (see dsl/ops/common.iris);
  // after it, on a GPU of its own, two programs on every SM (as many as an SM holds:
  // 118-128 registers a thread on sm_90a) keep pieces in flight. With one program on a
  // quarter of the SMs, a 4096^2 bf16 consumer after the GEMM took longer than the GEMM
  // itself (H100). Where ranks share the GPU, a peer's GEMM may not have started yet:
  // consumers on every SM would keep it from ever starting (seen at 2 ranks on one H100),
  // so there they keep to a quarter of the SMs too.
  const bool whole_gpu = !beside && library::share(ctx) == 1;
  auto cons_defines = gemm_defines(g, o);
  cons_defines["DIV"] = whole_gpu ? 1 : 4;
  cons_defines["OCC"] = whole_gpu ? 2 : 1;
  Instance& cons = instance(ctx, consumer, std::move(cons_defines));
  Instance& prod = instance(ctx, producer, gemm_defines(g, o));
  const std::int64_t count = tiles_of(g.m, g.n, o.block_m, o.block_n) * ctx.world();
  const Arg flags = flags_arg(library::tile_flags(ctx, cons, static_cast<std::size_t>(count)), count);
  // A pushing producer stores into the peers' scratch: one of its own, whose only other
  // writers are calls like this one, whose consumers end together (depart). In
  // "ops.partial" it could overwrite a peer's partial that an unfused call's collective
  // (in data-and-flag words: no flag round to wait for) still reads.
  const bool pushes = std::string_view(producer.name) != dsl::ops_matmul::matmul_signal.name;
  void* p = library::scratch(ctx, pushes ? "ops.pushed_tiles" : "ops.partial",
                             static_cast<std::size_t>(g.m * g.n) * dtype_size(g.dtype));
  Stream s = stream_of(ctx, o);
  Stream side = s;
  if (beside) {
    side = ctx.side_stream();
    ctx.order(s, side);  // fork
  }
  prod.program.launch(prod.kernel,
                      {buffer(g.a, g.dtype, {g.m, g.k}), buffer(g.b, g.dtype, {g.k, g.n}),
                       buffer(p, g.dtype, {g.m, g.n}), flags, state_arg(cons)},
                      s);
  cons.program.launch(cons.kernel,
                      {buffer(p, g.dtype, {g.m, g.n}), buffer(g.c, g.dtype, std::move(c_shape)), flags,
                       state_arg(cons), sync_arg(ctx, cons)},
                      side);
  if (side != s) ctx.order(side, s);  // join
}

// matmul_all_reduce's fused form: every rank adds each of its tiles into every rank's
// f32 C with atomics, in the GEMM's epilogue (Iris's atomic matmul_all_reduce).
void matmul_all_reduce_atomic(Context& ctx, const Gemm& g, const Options& o) {
  if (g.c_dtype != DType::f32) {
    throw Error(std::string("matmul_all_reduce: the fused schedule adds tiles into C with atomics, which needs an f32 C; "
                            "C is ") + std::string(dtype_name(g.c_dtype)));
  }
  if (o.algorithm != ccl::Algorithm::automatic && o.algorithm != ccl::Algorithm::atomic) {
    throw Error(std::string("matmul_all_reduce: the fused schedule reduces with atomics, not ") + ccl::name(o.algorithm));
  }
  Instance& in = instance(ctx, dsl::ops_matmul_all_reduce::matmul_all_reduce_atomic, gemm_defines(g, o));
  // Peers add into this rank's C: not before every rank has zeroed its C (and is done
  // reading it from the last call), and the call ends once every rank's tiles are in.
  Stream s = stream_of(ctx, o);
  ctx.zero_async(g.c, static_cast<std::size_t>(g.m * g.n) * sizeof(float), s);
  ctx.device_barrier(s);
  in.program.launch(in.kernel,
                    {buffer(g.a, g.dtype, {g.m, g.k}), buffer(g.b, g.dtype, {g.k, g.n}), buffer(g.c, DType::f32, {g.m, g.n})},
                    s);
  ctx.device_barrier(s);
}

// all_gather_matmul's fused form (dsl/ops/all_gather_matmul.iris): push_rows stores this
// rank's A into every rank's G and flags it there; the GEMM of G waits, tile by tile,
// for the flags of the rows it covers, so it starts on the rows already here.
void all_gather_matmul_push(Context& ctx, const Gemm& g, const Options& o, void* gathered) {
  const std::int64_t world = ctx.world(), rows = g.m * world;
  Instance& push = instance(ctx, dsl::ops_all_gather_matmul::push_rows, library::type_defines(g.dtype, false));
  Instance& mm = instance(ctx, dsl::ops_all_gather_matmul::matmul_gathered, gemm_defines(g, o));
  const Arg flags = flags_arg(library::tile_flags(ctx, push, static_cast<std::size_t>(world)), world);
  Stream s = stream_of(ctx, o);
  push.program.launch(push.kernel,
                      {buffer(g.a, g.dtype, {g.m * g.k}), buffer(gathered, g.dtype, {rows * g.k}), flags,
                       state_arg(push), sync_arg(ctx, push)},
                      s);
  // Where ranks share a GPU, a GEMM spinning on every SM for a peer's rows could keep
  // that peer's push from ever getting an SM: there every rank's rows are in first (the
  // same result; the overlap means nothing on a shared GPU). The host backend runs each
  // rank's programs on threads of its own, so its GEMM waits on the flags as on
  // separate GPUs.
  if (library::share(ctx) > 1 && !ctx.on_host()) ctx.device_barrier(s);
  mm.program.launch(mm.kernel,
                    {buffer(gathered, g.dtype, {rows, g.k}), buffer(g.b, g.dtype, {g.k, g.n}),
                     buffer(g.c, g.dtype, {rows, g.n}), flags, state_arg(push)},
                    s);
}

// all_gather_matmul's pull form (dsl/ops/all_gather_matmul.iris): one GEMM of
// gathered(A), reading every rank's rows where they lie.
void all_gather_matmul_pull(Context& ctx, const Gemm& g, const Options& o) {
  library::require_on_heap(ctx, "all_gather_matmul (fused_pull)", g.a);
  Instance& mm = instance(ctx, dsl::ops_all_gather_matmul::matmul_pulled, gemm_defines(g, o));
  // Every rank's A is written before any rank reads it, and stays until every rank has.
  Stream s = stream_of(ctx, o);
  ctx.device_barrier(s);
  mm.program.launch(mm.kernel,
                    {buffer(g.a, g.dtype, {g.m, g.k}), buffer(g.b, g.dtype, {g.k, g.n}),
                     buffer(g.c, g.dtype, {g.m * ctx.world(), g.n})},
                    s);
  ctx.device_barrier(s);
}

// matmul_all_scatter's workgroup-specialized form (dsl/ops/matmul_all_scatter.iris's
// matmul_all_scatter_roles): the GEMM's programs store each tile into this rank's C and
// flag it; the scatter programs copy the flagged tiles into the peers' C.
void matmul_all_scatter_specialized(Context& ctx, const Gemm& g, const Options& o) {
  // Pieces of half a tile: one wait and one load for 16-32 KiB, in the scatter role's
  // own layout (a whole tile's is the GEMM's accumulators').
  auto defines = gemm_defines(g, o);
  defines["CM"] = o.block_m / 2;
  defines["CN"] = o.block_n;
  Instance& in = instance(ctx, dsl::ops_matmul_all_scatter::matmul_all_scatter_roles, std::move(defines));
  const std::int64_t tiles = tiles_of(g.m, g.n, o.block_m, o.block_n);
  const Arg flags = flags_arg(library::tile_flags(ctx, in, static_cast<std::size_t>(tiles)), tiles);
  // Peers store into this rank's C: not before every rank is done with its C of the
  // last call. The kernel ends once every rank's copies are in (its last scatter
  // program waits for every rank's).
  Stream s = stream_of(ctx, o);
  ctx.device_barrier(s);
  in.program.launch(in.kernel,
                    {buffer(g.a, g.dtype, {g.m, g.k}), buffer(g.b, g.dtype, {g.k, g.n}),
                     buffer(g.c, g.dtype, {g.m, g.n * ctx.world()}),
                     flags, state_arg(in), sync_arg(ctx, in)},
                    s);
}

// The tokens of one chunk of flash_decode_partial (its BN).
constexpr std::int64_t kDecodeChunk = 64;

}  // namespace

namespace detail {

Decode check_decode(DType dt, const Shape& q, const Shape& k, const Shape& v, const Shape& out, const void* pq,
                    const void* pk, const void* pv, void* pout) {
  if (dt != DType::bf16 && dt != DType::f16 && dt != DType::f32) {
    throw Error("flash_decode: the tensors are " + std::string(dtype_name(dt)) + "; bf16, f16 or f32 expected");
  }
  if (q.size() != 2 || k.size() != 2 || v != k || out != q) {
    throw Error("flash_decode: q " + shape_text(q) + ", k " + shape_text(k) + ", v " + shape_text(v) + " and out " +
                shape_text(out) + " are not q and out [B * H, D], k and v [B * L, HKV * D]");
  }
  const std::int64_t d = q[1];
  if (d < 32 || d > 256 || (d & (d - 1)) != 0) {
    throw Error("flash_decode: the head dimension D = " + std::to_string(d) + " is not a power of two from 32 to 256");
  }
  if (k[1] % d != 0 || k[1] == 0) {
    throw Error("flash_decode: k's " + std::to_string(k[1]) + " columns are not key/value heads of D = " + std::to_string(d));
  }
  return Decode{dt, pq, pk, pv, pout, q[0], d, k[0], k[1]};
}

void flash_decode(Context& ctx, const Decode& a, const DecodeOptions& asked, const Gather& gather) {
  const Schedule sc = gather ? Schedule::unfused
                             : schedule_of("flash_decode", asked.schedule, {Schedule::fused, Schedule::unfused});
  const std::int64_t heads = asked.heads ? asked.heads : a.rows, kv_heads = a.kv_cols / a.d;
  if (heads <= 0 || a.rows % heads != 0) {
    throw Error("flash_decode: q's " + std::to_string(a.rows) + " rows are not sequences of " + std::to_string(heads) + " heads");
  }
  if (heads % kv_heads != 0) {
    throw Error("flash_decode: " + std::to_string(heads) + " query heads do not share " + std::to_string(kv_heads) +
                " key/value heads evenly");
  }
  const std::int64_t batch = a.rows / heads;
  if (a.tokens % batch != 0) {
    throw Error("flash_decode: k's " + std::to_string(a.tokens) + " rows are not " + std::to_string(batch) +
                " sequences of equal length");
  }
  const std::int64_t len = a.tokens / batch;
  // Enough (split, row) pairs for sixteen per SM, each at least a chunk of tokens: on
  // H100, 256 rows of 32768 tokens ran at 67 GB/s per rank with four per SM (3 splits)
  // and 87 with 8 to 64 splits (docs/performance.md).
  std::int64_t splits = asked.splits;
  if (splits <= 0) {
    const std::int64_t want = (16 * ctx.multiprocessors() + a.rows - 1) / a.rows;
    splits = std::max<std::int64_t>(1, std::min(want, (len + kDecodeChunk - 1) / kDecodeChunk));
  }
  const float scale = asked.scale != 0.0f ? asked.scale : 1.0f / std::sqrt(static_cast<float>(a.d));
  const bool fused = sc == Schedule::fused;
  auto defines = library::type_defines(a.dtype, false);
  defines["D"] = a.d;
  auto partial_defines = defines, combine_defines = defines;
  partial_defines["BN"] = kDecodeChunk;
  partial_defines["PUSH"] = fused ? 1 : 0;
  combine_defines["WAIT"] = fused ? 1 : 0;
  Instance& comb = instance(ctx, dsl::ops_flash_decode::flash_decode_combine, combine_defines);
  Instance& part = instance(ctx, dsl::ops_flash_decode::flash_decode_partial, partial_defines);
  const std::int64_t world = ctx.world(), parts = world * splits * a.rows;
  // Each form its own parts: a fused call's peers store into this rank's parts while
  // the combine of an unfused call before it may still read its own (only the fused
  // combine departs), and a gather writes only where its own barriers order it.
  auto* po = static_cast<float*>(library::scratch(ctx, fused ? "ops.decode_parts" : "ops.decode_gathered",
                                                  static_cast<std::size_t>(parts * (a.d + 1)) * sizeof(float)));
  float* plse = po + parts * a.d;
  const Arg flags = flags_arg(library::tile_flags(ctx, comb, static_cast<std::size_t>(parts)), parts);
  Stream s = asked.stream ? asked.stream : ctx.stream();
  const Arg po_arg = buffer(po, DType::f32, {parts, a.d}), plse_arg = buffer(plse, DType::f32, {parts});
  if (fused) {
    // Peers store into this rank's parts in this call only after every rank's last call
    // has combined them (the combine's depart), so no barrier comes first.
    part.program.launch(part.kernel,
                        {buffer(a.q, a.dtype, {a.rows, a.d}), buffer(a.k, a.dtype, {a.tokens, a.kv_cols}),
                         buffer(a.v, a.dtype, {a.tokens, a.kv_cols}), po_arg, plse_arg, flags, state_arg(comb), heads,
                         splits, scale},
                        s);
    // Where ranks share a GPU, combine programs spinning on every SM for a peer's parts
    // could keep that peer's attention kernel from ever getting one (as in
    // all_gather_matmul's push form): there every rank's parts are in first. The host
    // backend runs each rank's programs on threads of its own.
    if (library::share(ctx) > 1 && !ctx.on_host()) ctx.device_barrier(s);
  } else {
    // This rank's parts, [splits * rows, D] and [splits * rows], gathered rank by rank
    // into po and plse (rank r's parts at rows r * splits * rows..).
    const std::int64_t mine = splits * a.rows;
    auto* send = static_cast<float*>(library::scratch(ctx, "ops.decode_send", static_cast<std::size_t>(mine * (a.d + 1)) * sizeof(float)));
    float* send_lse = send + mine * a.d;
    part.program.launch(part.kernel,
                        {buffer(a.q, a.dtype, {a.rows, a.d}), buffer(a.k, a.dtype, {a.tokens, a.kv_cols}),
                         buffer(a.v, a.dtype, {a.tokens, a.kv_cols}), buffer(send, DType::f32, {mine, a.d}),
                         buffer(send_lse, DType::f32, {mine}), flags, state_arg(comb), heads, splits, scale},
                        s);
    const Gather all_gather = gather ? gather : Gather([&ctx](const void* from, void* to, std::size_t n, Stream st) {
      ccl::detail::all_gather(ctx, DType::f32, from, to, n, {ccl::ReduceOp::sum, ccl::Algorithm::automatic, st});
    });
    all_gather(send, po, static_cast<std::size_t>(mine * a.d), s);
    all_gather(send_lse, plse, static_cast<std::size_t>(mine), s);
  }
  comb.program.launch(comb.kernel,
                      {po_arg, plse_arg, flags, buffer(a.out, a.dtype, {a.rows, a.d}), state_arg(comb), sync_arg(ctx, comb),
                       splits},
                      s);
}

Gemm check(const char* what, DType dt, DType c_dt, bool f32_c, const Shape& a, const Shape& b, const Shape& c,
           const void* pa, const void* pb, void* pc, std::int64_t rows_num, std::int64_t rows_den, std::int64_t cols_mul) {
  if (dt != DType::bf16 && dt != DType::f16 && dt != DType::f32) {
    throw Error(std::string(what) + ": the operands are " + std::string(dtype_name(dt)) + "; bf16, f16 or f32 expected");
  }
  if (c_dt != dt && !(f32_c && c_dt == DType::f32)) {
    throw Error(std::string(what) + ": C is " + std::string(dtype_name(c_dt)) + ", expected " +
                std::string(dtype_name(dt)) + " (A's and B's type)" + (f32_c ? " or f32" : ""));
  }
  if (a.size() != 2 || b.size() != 2 || c.size() != 2 || a[1] != b[0]) {
    throw Error(std::string(what) + ": A " + shape_text(a) + " and B " + shape_text(b) +
                " are not [M, K] and [K, N] (and C " + shape_text(c) + " 2-D)");
  }
  const Gemm g{dt, pa, pb, pc, a[0], b[1], a[1], c_dt};
  if (g.m % rows_den != 0) {
    throw Error(std::string(what) + ": M = " + std::to_string(g.m) + " does not split into " + std::to_string(rows_den) +
                " equal row blocks");
  }
  const Shape want{g.m * rows_num / rows_den, g.n * cols_mul};
  if (c != want) throw Error(std::string(what) + ": C is " + shape_text(c) + ", expected " + shape_text(want));
  return g;
}

// matmul_all_scatter's unfused form: the GEMM into this rank's columns of its own C, a
// device barrier (every rank's C is free of its last call), the copies of those columns
// into every peer's C, and a device barrier (every rank's copies are in).
void matmul_all_scatter_unfused(Context& ctx, const Gemm& g, const Options& o) {
  Instance& mm = instance(ctx, dsl::ops_matmul_all_scatter::matmul_own_columns, gemm_defines(g, o));
  Instance& sc = instance(ctx, dsl::ops_matmul_all_scatter::scatter_columns, library::type_defines(g.dtype, false));
  const Arg c = buffer(g.c, g.dtype, {g.m, g.n * ctx.world()});
  Stream s = stream_of(ctx, o);
  mm.program.launch(mm.kernel, {buffer(g.a, g.dtype, {g.m, g.k}), buffer(g.b, g.dtype, {g.k, g.n}), c}, s);
  if (ctx.world() == 1) return;
  ctx.device_barrier(s);
  sc.program.launch(sc.kernel, {c, g.n}, s);
  ctx.device_barrier(s);
}

// The fewest waves of GEMM tiles (tiles per SM) at which automatic fuses
// matmul_all_scatter: with fewer, most tiles finish in the last wave and their stores
// to the peers go out after the GEMM with nothing left to hide them, where the unfused
// form copies the columns at full speed (4 x H100, N = K = 8192, 128 x 256 tiles: M =
// 256 / 512 / 1024, under 2 waves, unfused 1.12x / 1.05x / 1.05x cuBLAS + NCCL and
// fused 0.99x / 0.87x / 0.95x; M = 2048, 3.9 waves, 1.01x and 1.03x; M = 4096, 0.99x and
// 1.12x).
constexpr std::int64_t kAllScatterFusedFromWaves = 3;

void matmul_all_scatter(Context& ctx, const Gemm& g, const Options& asked) {
  const Options o = with_tile("matmul_all_scatter", ctx, asked, g.m, g.n);
  const bool few_waves = tiles_of(g.m, g.n, o.block_m, o.block_n) < kAllScatterFusedFromWaves * ctx.multiprocessors();
  // automatic: by the copy engines from as many waves where each rank has a GPU of its
  // own on CUDA (4 x H100, N = K = 8192: 1.27x-1.28x at M = 4096 and 1.32x-1.33x at 8192
  // cuBLAS + NCCL, where fused made 1.13x-1.16x and 1.20x-1.22x; docs/performance.md).
  const bool copies = ctx.world() > 1 && !ctx.on_host() && library::copies_beside_waits(ctx);
  const Schedule sc = asked.schedule == Schedule::automatic && few_waves ? Schedule::unfused
                      : asked.schedule == Schedule::automatic && copies
                          ? Schedule::copy_engines
                          : schedule_of("matmul_all_scatter", asked.schedule,
                                        {Schedule::fused, Schedule::specialized, Schedule::unfused, Schedule::copy_engines});
  library::require_on_heap(ctx, "matmul_all_scatter", g.c);
  if (only_the_gemm(ctx, asked)) return plain_matmul(ctx, g, g.a, g.m, g.c, o, stream_of(ctx, o));
  if (sc == Schedule::specialized) return matmul_all_scatter_specialized(ctx, g, o);
  if (sc == Schedule::unfused) return matmul_all_scatter_unfused(ctx, g, o);
  if (sc == Schedule::copy_engines) {
    if (ctx.world() == 1) return matmul_all_scatter_unfused(ctx, g, o);
    return matmul_all_scatter_copies(ctx, g, o);
  }
  Instance& in = instance(ctx, dsl::ops_matmul_all_scatter::matmul_all_scatter, gemm_defines(g, o));
  // Peers store into this rank's C: not before every rank is done with its C of the
  // last call, and the call ends once every rank has stored all of its tiles.
  Stream s = stream_of(ctx, o);
  ctx.device_barrier(s);
  in.program.launch(in.kernel,
                    {buffer(g.a, g.dtype, {g.m, g.k}), buffer(g.b, g.dtype, {g.k, g.n}),
                     buffer(g.c, g.dtype, {g.m, g.n * ctx.world()})},
                    s);
  ctx.device_barrier(s);
}

// Whether M splits evenly over the ranks, at least a row each: the push forms give rank
// q rows q M / world .., and rows past world (M / world) would have no owner.
bool rows_split_evenly(Context& ctx, const Gemm& g) { return g.m % ctx.world() == 0 && g.m >= ctx.world(); }

// Whether the push-fused ops take this GEMM: rows_split_evenly, each rank's rows a
// multiple of the asked tile's rows, or of 64 for a tile chosen by shape.
bool push_fits(Context& ctx, const Gemm& g, const Options& asked) {
  return rows_split_evenly(ctx, g) && (g.m / ctx.world()) % (asked.block_m ? asked.block_m : 64) == 0;
}

// The fewest rows a rank at which automatic pushes: below, a rank's few tiles leave SMs
// idle and the two device barriers weigh more than the GEMM they surround (4 x H100,
// M x 8192 x 7168: at M = 256, 64 rows a rank, fused 0.94x cuBLAS + NCCL and unfused
// 1.20x; at M = 1024, 256 rows a rank, fused 1.07x and unfused 1.04x).
constexpr std::int64_t kPushFromRows = 256;

bool push_pays(Context& ctx, const Gemm& g, const Options& asked) {
  return ctx.world() >= 2 && g.m / ctx.world() >= kPushFromRows && push_fits(ctx, g, asked);
}

// The GEMM of the push-fused ops (dsl/ops/matmul_reduce_scatter.iris's matmul_push_rows):
// its epilogue stores each tile into the slab of the heap scratch R [M, N] of the rank
// owning its rows (rows q M / world .. belong to rank q; rank r's tile lands in slab r).
// Bracketed by device barriers: no rank stores into a peer's R before that peer has
// summed its R of the last call, and the sums start once every rank's tiles have landed.
// A tile has one owner, so its rows lie within one rank's: a tile chosen by shape drops
// to 64 rows where 128 do not divide a rank's rows; one that still does not is refused.
Options push_tile(Context& ctx, const char* what, const Gemm& g, const Options& asked, Options o) {
  if (!rows_split_evenly(ctx, g)) {
    throw Error(std::string(what) + ": the " + name(asked.schedule) + " schedule stores each GEMM tile to the one rank "
                "that owns its rows (rank q: rows q M / world ..), so M = " + std::to_string(g.m) +
                " must be a positive multiple of the ranks (" + std::to_string(ctx.world()) + ")");
  }
  const std::int64_t rows = g.m / ctx.world();
  if (rows % o.block_m != 0 && asked.block_m == 0 && rows % 64 == 0) o.block_m = 64;
  if (rows % o.block_m != 0) {
    throw Error(std::string(what) + ": the " + name(asked.schedule) + " schedule stores each GEMM tile to the one rank "
                "that owns its rows, so each rank's M / world = " + std::to_string(rows) +
                " rows must be a multiple of the tile's " + std::to_string(asked.block_m == 0 ? 64 : o.block_m) + " rows");
  }
  return o;
}

void* push_rows(Context& ctx, const char* what, const Gemm& g, const Options& asked, Options o, Stream s) {
  o = push_tile(ctx, what, g, asked, o);
  Instance& gemm = instance(ctx, dsl::ops_matmul_reduce_scatter::matmul_push_rows, gemm_defines(g, o));
  void* r = library::scratch(ctx, "ops.slabs", static_cast<std::size_t>(g.m * g.n) * dtype_size(g.dtype));
  ctx.device_barrier(s);
  gemm.program.launch(gemm.kernel,
                      {buffer(g.a, g.dtype, {g.m, g.k}), buffer(g.b, g.dtype, {g.k, g.n}), buffer(r, g.dtype, {g.m, g.n})},
                      s);
  ctx.device_barrier(s);
  return r;
}

// matmul_reduce_scatter's fused form: push_rows, then each rank sums its world slabs.
void matmul_reduce_scatter_push(Context& ctx, const Gemm& g, const Options& asked, const Options& o) {
  Instance& sum = instance(ctx, dsl::ops_matmul_reduce_scatter::reduce_slabs, library::type_defines(g.dtype, false));
  Stream s = stream_of(ctx, o);
  void* r = push_rows(ctx, "matmul_reduce_scatter", g, asked, o, s);
  sum.program.launch(sum.kernel, {buffer(r, g.dtype, {g.m, g.n}), buffer(g.c, g.dtype, {g.m / ctx.world(), g.n})}, s);
}

// matmul_all_reduce's workgroup-specialized form (matmul_all_reduce_roles): the GEMM
// pushes each tile to its owner (owners dealt by tile row, round robin) while the reduce
// role, on a sixteenth of the SMs, sums each rank's rows as they become whole and stores
// them into every rank's C. M must be a multiple of world BM (64 rows where 128 do not
// divide it and the tile is chosen by shape).
void matmul_all_reduce_specialized(Context& ctx, const Gemm& g, const Options& asked, Options o) {
  const std::int64_t w = ctx.world();
  if (g.m % (w * o.block_m) != 0 && asked.block_m == 0 && g.m % (w * 64) == 0) o.block_m = 64;
  if (g.m % (w * o.block_m) != 0) {
    throw Error("matmul_all_reduce: the specialized schedule deals the GEMM's tile rows to the ranks in turn, so M = " +
                std::to_string(g.m) + " must be a multiple of world x the tile's rows (" + std::to_string(w) + " x " +
                std::to_string(asked.block_m == 0 ? 64 : o.block_m) + ")");
  }
  auto defines = gemm_defines(g, o);
  defines["CM"] = 32;
  defines["CN"] = o.block_n;
  Instance& in = instance(ctx, dsl::ops_matmul_all_reduce::matmul_all_reduce_roles, std::move(defines));
  const std::int64_t count = tiles_of(g.m, g.n, o.block_m, o.block_n) * w;
  const Arg flags = flags_arg(library::tile_flags(ctx, in, static_cast<std::size_t>(count)), count);
  void* r = library::scratch(ctx, "ops.slabs", static_cast<std::size_t>(g.m * g.n) * dtype_size(g.dtype));
  // Peers store into this rank's C: not before every rank is done with its C of the last
  // call (the slabs: the last call's kernel ended with every rank's sums done).
  Stream s = stream_of(ctx, o);
  ctx.device_barrier(s);
  in.program.launch(in.kernel,
                    {buffer(g.a, g.dtype, {g.m, g.k}), buffer(g.b, g.dtype, {g.k, g.n}), buffer(r, g.dtype, {g.m, g.n}),
                     buffer(g.c, g.dtype, {g.m, g.n}), flags, state_arg(in), sync_arg(ctx, in)},
                    s);
}

// matmul_all_reduce's fused form for a C of A's type: push_rows, then each rank sums its
// slabs into its rows of every rank's C, and the call ends once every rank's rows are in.
void matmul_all_reduce_push(Context& ctx, const Gemm& g, const Options& asked, const Options& o) {
  Instance& sum = instance(ctx, dsl::ops_matmul_all_reduce::reduce_slabs_to_all, library::type_defines(g.dtype, false));
  Stream s = stream_of(ctx, o);
  void* r = push_rows(ctx, "matmul_all_reduce", g, asked, o, s);
  sum.program.launch(sum.kernel, {buffer(r, g.dtype, {g.m, g.n}), buffer(g.c, g.dtype, {g.m, g.n})}, s);
  ctx.device_barrier(s);
}

void matmul_all_reduce(Context& ctx, const Gemm& g, const Options& asked) {
  // A 16-bit A and B into an f32 C: the atomic form alone (the others reduce in A's type).
  const bool wide_c = g.c_dtype != g.dtype;
  // automatic: fused (tiles pushed to their owners) from kPushFromRows rows a rank that
  // take whole tiles, as it beat every other schedule and cuBLAS + NCCL (4 x H100, N = K
  // = 8192: 1.07x, 1.11x, 1.10x at M = 1024, 4096, 8192; unfused 0.98-1.04x,
  // bulk_synchronous two_shot 0.85-0.91x; docs/performance.md); elsewhere unfused from 4
  // ranks and bulk_synchronous below, as measured before.
  const Schedule sc =
      wide_c ? schedule_of("matmul_all_reduce into an f32 C", asked.schedule, {Schedule::fused})
      : asked.schedule == Schedule::automatic && push_pays(ctx, g, asked) &&
              (asked.algorithm == ccl::Algorithm::automatic || asked.algorithm == ccl::Algorithm::two_shot)
          ? Schedule::fused
      : asked.schedule == Schedule::automatic && ctx.world() >= 4
          ? Schedule::unfused
          : schedule_of("matmul_all_reduce", asked.schedule,
                        {Schedule::bulk_synchronous, Schedule::producer_consumer, Schedule::unfused, Schedule::fused,
                         Schedule::specialized, Schedule::copy_engines});
  const Options o = with_tile("matmul_all_reduce", ctx, asked, g.m, g.n);
  library::require_on_heap(ctx, "matmul_all_reduce", g.c);
  if (sc == Schedule::fused && wide_c) return matmul_all_reduce_atomic(ctx, g, o);
  // Into a C of A's type, fused and specialized push tiles to their owners: two shot.
  const bool pushes = sc == Schedule::fused || sc == Schedule::specialized || sc == Schedule::copy_engines;
  if (pushes && o.algorithm != ccl::Algorithm::automatic && o.algorithm != ccl::Algorithm::two_shot) {
    throw Error(std::string("matmul_all_reduce: the ") + name(sc) + " schedule into a C of A's type pushes tiles to " +
                "their owners and reduces two shot, not " + ccl::name(o.algorithm));
  }
  if (sc == Schedule::fused) return matmul_all_reduce_push(ctx, g, asked, o);
  if (sc == Schedule::copy_engines) return matmul_all_reduce_copies(ctx, g, asked, o);
  if (only_the_gemm(ctx, asked)) return plain_matmul(ctx, g, g.a, g.m, g.c, o, stream_of(ctx, o));
  if (sc == Schedule::specialized) return matmul_all_reduce_specialized(ctx, g, asked, o);
  const std::size_t bytes = static_cast<std::size_t>(g.m * g.n) * dtype_size(g.dtype);
  if (sc == Schedule::unfused) {
    void* p = library::scratch(ctx, "ops.partial", bytes);
    plain_matmul(ctx, g, g.a, g.m, p, o, stream_of(ctx, o));
    ccl::detail::all_reduce(ctx, g.dtype, p, g.c, static_cast<std::size_t>(g.m * g.n),
                            {ccl::ReduceOp::sum, o.algorithm, o.stream});
    return;
  }
  // These schedules reduce the tiles with kernels that read the peers' tiles, one shot or
  // two shot; automatic picks between those two as it was measured for them (one shot
  // at 1 and 2 ranks and up to 512 KiB, docs/performance.md), not as the collectives pick.
  const ccl::Algorithm a =
      o.algorithm != ccl::Algorithm::automatic
          ? ccl::choose_all_reduce(o.algorithm, bytes, ctx.world(), g.dtype, ccl::ReduceOp::sum)
      : ctx.world() <= 2 || bytes <= (std::size_t{512} << 10) ? ccl::Algorithm::one_shot
                                                               : ccl::Algorithm::two_shot;
  if (a != ccl::Algorithm::one_shot && a != ccl::Algorithm::two_shot) {
    throw Error(std::string("matmul_all_reduce: the ") + name(sc) + " schedule reduces tiles one_shot or two_shot, not " +
                ccl::name(a) + " (the unfused schedule runs every algorithm)");
  }
  // two_shot where a rank's rows take whole tiles: each tile pushed into its owner's slab
  // and announced there, and the owner sums its rows as they become whole and stores
  // them into every rank's C; otherwise the owner of each piece reads every rank's.
  if (a == ccl::Algorithm::two_shot && push_fits(ctx, g, asked)) {
    produce_and_consume(ctx, g, push_tile(ctx, "matmul_all_reduce", g, asked, o), sc,
                        dsl::ops_matmul_all_reduce::reduce_slabs_tiles_to_all, {g.m, g.n},
                        dsl::ops_matmul_reduce_scatter::matmul_push_rows_signal);
    return;
  }
  produce_and_consume(ctx, g, o, sc,
                      a == ccl::Algorithm::one_shot ? dsl::ops_matmul_all_reduce::reduce_tiles_one_shot
                                                    : dsl::ops_matmul_all_reduce::reduce_tiles_two_shot,
                      {g.m, g.n});
}

void matmul_reduce_scatter(Context& ctx, const Gemm& g, const Options& asked) {
  // automatic: fused from kPushFromRows rows a rank that take whole tiles (4 x H100,
  // N = K = 8192: 1.03x, 1.07x, 1.12x cuBLAS + NCCL at M = 1024, 4096, 8192, where
  // bulk_synchronous made 0.87-0.92x and unfused 0.58-1.03x; docs/performance.md);
  // unfused below them from 4 ranks (M x 8192 x 7168: 1.10x at M = 128, 1.23x at 256,
  // where bulk_synchronous made 0.92x); bulk_synchronous elsewhere.
  const bool few_rows = g.m / ctx.world() < kPushFromRows && ctx.world() >= 4;
  const Schedule sc = asked.schedule == Schedule::automatic && push_pays(ctx, g, asked) ? Schedule::fused
                      : asked.schedule == Schedule::automatic && few_rows
                          ? Schedule::unfused
                          : schedule_of("matmul_reduce_scatter", asked.schedule,
                                        {Schedule::bulk_synchronous, Schedule::producer_consumer, Schedule::unfused,
                                         Schedule::fused, Schedule::copy_engines});
  const Options o = with_tile("matmul_reduce_scatter", ctx, asked, g.m, g.n);
  if (only_the_gemm(ctx, asked)) return plain_matmul(ctx, g, g.a, g.m, g.c, o, stream_of(ctx, o));
  if (sc == Schedule::fused) return matmul_reduce_scatter_push(ctx, g, asked, o);
  if (sc == Schedule::copy_engines) return matmul_reduce_scatter_copies(ctx, g, asked, o);
  const std::int64_t rows = g.m / ctx.world();
  if (sc == Schedule::unfused) {
    void* p = library::scratch(ctx, "ops.partial", static_cast<std::size_t>(g.m * g.n) * dtype_size(g.dtype));
    plain_matmul(ctx, g, g.a, g.m, p, o, stream_of(ctx, o));
    ccl::detail::reduce_scatter(ctx, g.dtype, p, g.c, static_cast<std::size_t>(rows * g.n),
                                {ccl::ReduceOp::sum, ccl::Algorithm::automatic, o.stream});
    return;
  }
  // bulk_synchronous and producer_consumer: each tile pushed into its owner's slab and
  // announced there, and the owner sums its rows from its own memory as they become
  // whole (where a rank's rows take whole tiles); otherwise each rank reads every rank's
  // tiles of its rows.
  if (push_fits(ctx, g, asked)) {
    produce_and_consume(ctx, g, push_tile(ctx, "matmul_reduce_scatter", g, asked, o), sc,
                        dsl::ops_matmul_reduce_scatter::reduce_slabs_tiles, {rows, g.n},
                        dsl::ops_matmul_reduce_scatter::matmul_push_rows_signal);
    return;
  }
  produce_and_consume(ctx, g, o, sc, dsl::ops_matmul_reduce_scatter::reduce_scatter_tiles, {rows, g.n});
}

// The fewest rows a rank at which automatic gathers all_gather_matmul's rows by copy
// engines beside the GEMM: below, the GEMM of its own rows is too short to hide the
// copies (4 x H100, N = K = 8192, against cuBLAS + NCCL, rounds in shuffled order: M =
// 4096 copy_engines 1.16x, unfused 1.02x; M = 8192 1.11x-1.13x and 0.98x; in fixed order
// M = 1024 0.94x and 0.98x, M = 2048 0.79x and 0.91x). Only on CUDA with a GPU a rank:
// where ranks share a GPU, or on HIP (whose stream waits and device copies run as
// kernels), the copies would need SMs that the GEMM, waiting for them, holds; on the
// host backend there is nothing to overlap.
constexpr std::int64_t kCopyEnginesFromRows = 4096;

void all_gather_matmul(Context& ctx, const Gemm& g, const Options& asked) {
  const bool copies = ctx.world() > 1 && !ctx.on_host() && library::copies_beside_waits(ctx) && g.m >= kCopyEnginesFromRows;
  const Schedule sc =
      asked.schedule == Schedule::automatic && copies
          ? Schedule::copy_engines
          : schedule_of("all_gather_matmul", asked.schedule,
                        {Schedule::unfused, Schedule::fused, Schedule::fused_pull, Schedule::copy_engines});
  const Options o = with_tile("all_gather_matmul", ctx, asked, g.m * ctx.world(), g.n);
  if (only_the_gemm(ctx, asked)) return plain_matmul(ctx, g, g.a, g.m, g.c, o, stream_of(ctx, o));
  if (sc == Schedule::fused_pull) return all_gather_matmul_pull(ctx, g, o);
  const std::int64_t rows = g.m * ctx.world();
  void* gathered = library::scratch(ctx, "ops.gathered", static_cast<std::size_t>(rows * g.k) * dtype_size(g.dtype));
  if (sc == Schedule::fused) return all_gather_matmul_push(ctx, g, o, gathered);
  if (sc == Schedule::copy_engines) {
    if (ctx.world() > 1) return all_gather_matmul_copies(ctx, g, o, gathered);
    return all_gather_matmul_push(ctx, g, o, gathered);
  }
  ccl::detail::all_gather(ctx, g.dtype, g.a, gathered, static_cast<std::size_t>(g.m * g.k),
                          {ccl::ReduceOp::sum, ccl::Algorithm::automatic, o.stream});
  plain_matmul(ctx, g, gathered, rows, g.c, o, stream_of(ctx, o));
}

}  // namespace detail
}  // namespace iris::ops
