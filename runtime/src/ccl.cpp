// The collectives (iris/ccl.hpp): each call launches one kernel of dsl/ccl/, compiled
// through the JIT for its element type and reduction, with its epoch state and flags
// allocated on the heap once per context (library.hpp).
#include "iris/ccl.hpp"

#include "backend/backend.hpp"
#include "library.hpp"

namespace iris::ccl {

const char* name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
  }
  return "?";
}

const char* name(Algorithm a) {
  switch (a) {
    case Algorithm::automatic: return "automatic";
    case Algorithm::one_shot: return "one_shot";
    case Algorithm::two_shot: return "two_shot";
    case Algorithm::atomic: return "atomic";
    case Algorithm::ring: return "ring";
  }
  return "?";
}

namespace {

using library::buffer;
using library::Instance;
using library::instance;
using library::require_on_heap;
using library::state_arg;
using library::sync_arg;
using library::type_defines;

bool atomic_sums(DType t) { return t != DType::f16 && t != DType::bf16; }

Stream stream_of(Context& ctx, const Options& o) { return o.stream ? o.stream : ctx.stream(); }

// The input an in-place call reads from: a copy on the heap scratch, ordered on `s`
// before the kernel, so the kernel may overwrite the original while peers still read.
const void* staged_input(Context& ctx, const void* src, std::size_t bytes, Stream s) {
  void* copy = library::scratch(ctx, "ccl.input", bytes);
  backend::active().copy_device_async(copy, src, bytes, s);
  return copy;
}

}  // namespace

Algorithm choose_all_reduce(Algorithm asked, std::size_t bytes, int world, DType dtype, ReduceOp op) {
  if (asked == Algorithm::atomic && (op != ReduceOp::sum || !atomic_sums(dtype))) {
    throw Error(std::string("all_reduce: the atomic algorithm sums 32- and 64-bit types only, not ") + name(op) +
                " of " + std::string(dtype_name(dtype)));
  }
  if (asked != Algorithm::automatic) return asked;
  // At 2 ranks one shot moves as much as two shot in one step fewer: on 2 x H200 it was
  // as fast up to 2 MiB and faster from 8 MiB (296 against 214 GB/s busbw at 256 MiB;
  // docs/performance.md). Above 2 ranks, two shot from 512 KiB (not measured yet).
  return world <= 2 || bytes <= (std::size_t{512} << 10) ? Algorithm::one_shot : Algorithm::two_shot;
}

namespace detail {

void check_sizes(const char* what, std::size_t src, std::size_t dst, std::size_t want_dst) {
  if (dst != want_dst) {
    throw Error(std::string(what) + ": the output has " + std::to_string(dst) + " elements, but an input of " +
                std::to_string(src) + " needs " + std::to_string(want_dst));
  }
}

void all_reduce(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, const Options& o) {
  if (n == 0) return;
  require_on_heap(ctx, "all_reduce", src);
  require_on_heap(ctx, "all_reduce", dst);
  const std::size_t bytes = n * dtype_size(dt);
  const Algorithm a = choose_all_reduce(o.algorithm, bytes, ctx.world(), dt, o.op);
  Stream s = stream_of(ctx, o);
  const std::int64_t len = static_cast<std::int64_t>(n);
  if (a == Algorithm::atomic) {
    Instance& in = instance(ctx, "ccl/all_reduce_atomic.iris", "all_reduce_atomic", type_defines(dt, false));
    // The input is read while every rank adds into the (zeroed) output.
    if (src == dst) src = staged_input(ctx, src, bytes, s);
    backend::active().memset_async(dst, 0, 1, bytes, s);
    in.program.launch(in.kernel, {buffer(src, dt, {len}), buffer(dst, dt, {len}), state_arg(in), sync_arg(ctx, in)}, s);
    return;
  }
  const bool one = a == Algorithm::one_shot;
  const char* kernel = one ? "all_reduce_one_shot" : a == Algorithm::ring ? "all_reduce_ring" : "all_reduce_two_shot";
  Instance& in = instance(ctx, "ccl/all_reduce.iris", kernel, type_defines(dt, true));
  // One shot: peers read the input while this rank writes the output.
  if (one && src == dst) src = staged_input(ctx, src, bytes, s);
  in.program.launch(in.kernel,
                    {buffer(src, dt, {len}), buffer(dst, dt, {len}), static_cast<std::int64_t>(o.op), state_arg(in),
                     sync_arg(ctx, in)},
                    s);
}

void all_gather(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, const Options& o) {
  if (n == 0) return;
  require_on_heap(ctx, "all_gather", dst);
  Instance& in = instance(ctx, "ccl/all_gather.iris", "all_gather", type_defines(dt, false));
  const std::int64_t len = static_cast<std::int64_t>(n);
  in.program.launch(in.kernel,
                    {buffer(src, dt, {len}), buffer(dst, dt, {len * ctx.world()}), state_arg(in), sync_arg(ctx, in)},
                    stream_of(ctx, o));
}

void reduce_scatter(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, const Options& o) {
  if (n == 0) return;
  require_on_heap(ctx, "reduce_scatter", src);
  Instance& in = instance(ctx, "ccl/reduce_scatter.iris", "reduce_scatter", type_defines(dt, true));
  const std::int64_t len = static_cast<std::int64_t>(n);
  in.program.launch(in.kernel,
                    {buffer(src, dt, {len * ctx.world()}), buffer(dst, dt, {len}), static_cast<std::int64_t>(o.op),
                     state_arg(in), sync_arg(ctx, in)},
                    stream_of(ctx, o));
}

void all_to_all(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, const Options& o) {
  if (n == 0) return;
  require_on_heap(ctx, "all_to_all", dst);
  Instance& in = instance(ctx, "ccl/all_to_all.iris", "all_to_all", type_defines(dt, false));
  const std::int64_t len = static_cast<std::int64_t>(n), w = ctx.world();
  in.program.launch(in.kernel, {buffer(src, dt, {w, len}), buffer(dst, dt, {w, len}), state_arg(in), sync_arg(ctx, in)},
                    stream_of(ctx, o));
}

void broadcast(Context& ctx, DType dt, void* x, std::size_t n, int root, const Options& o) {
  if (root < 0 || root >= ctx.world()) {
    throw Error("broadcast: root " + std::to_string(root) + " is not a rank of this job (world " +
                std::to_string(ctx.world()) + ")");
  }
  if (n == 0) return;
  require_on_heap(ctx, "broadcast", x);
  Instance& in = instance(ctx, "ccl/broadcast.iris", "broadcast", type_defines(dt, false));
  const std::int64_t len = static_cast<std::int64_t>(n);
  in.program.launch(in.kernel, {buffer(x, dt, {len}), std::int64_t{root}, state_arg(in), sync_arg(ctx, in)},
                    stream_of(ctx, o));
}

}  // namespace detail
}  // namespace iris::ccl
