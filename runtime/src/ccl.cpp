// The collectives (iris/ccl.hpp): each call launches one kernel of dsl/ccl/, compiled
// through the JIT for its element type and reduction, with its epoch state and flags
// allocated on the heap once per context.
#include "iris/ccl.hpp"

#include <map>
#include <memory>
#include <mutex>

#include "backend/backend.hpp"
#include "compiler/driver/stdlib.hpp"
#include "compiler/sema/sema.hpp"
#include "iris/jit.hpp"
#include "iris/program.hpp"

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

bool is_float_type(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }
bool atomic_sums(DType t) { return t != DType::f16 && t != DType::bf16; }

// One collective kernel as this context runs it: its program, its epoch state (local)
// and its flags (symmetric), made together on first use.
// Flags per rank in `sync`: arrival and departure, and the ring's step counters.
constexpr std::size_t kSyncPerRank = 4;

struct Instance {
  Program program;
  std::string kernel;
  void* state = nullptr;  // u64[2]
  void* sync = nullptr;   // u64[kSyncPerRank * world]
};

struct Communicator {
  int share = 1;  // ranks on this rank's GPU
  std::map<std::string, std::unique_ptr<Instance>> instances;
  void* scratch = nullptr;  // symmetric, for in-place calls that need a copy of the input
  std::size_t scratch_bytes = 0;
};

Communicator& communicator(Context& ctx) {
  auto p = ctx.attachment("iris::ccl", [&ctx]() -> std::shared_ptr<void> {
    auto c = std::make_shared<Communicator>();
    const std::vector<int> devices = ctx.all_gather(ctx.device());
    c->share = 0;
    for (int d : devices) c->share += d == ctx.device();
    return c;
  });
  return *static_cast<Communicator*>(p.get());
}

Stream stream_of(Context& ctx, const Options& o) { return o.stream ? o.stream : ctx.stream(); }

// The kernel `kernel` of dsl/<file> for these defines, compiled and set up on first use.
// Collective: every rank reaches it in the same order.
Instance& instance(Context& ctx, const std::string& file, const std::string& kernel,
                   std::map<std::string, std::int64_t> defines) {
  Communicator& c = communicator(ctx);
  defines["SHARE"] = c.share;
  std::string key = file + ":" + kernel;
  for (const auto& [n, v] : defines) key += ";" + n + "=" + std::to_string(v);
  auto it = c.instances.find(key);
  if (it != c.instances.end()) return *it->second;
  const char* source = irisc::stdlib_file(file);
  if (!source) throw Error("the standard library has no " + file + " (libiris was built without dsl/)");
  JitOptions jo;
  jo.defines = std::move(defines);
  auto inst = std::make_unique<Instance>();
  inst->program = jit_program(ctx, source, "dsl/" + file, jo);
  inst->kernel = kernel;
  // Flags start at zero on every rank before any rank can signal: fill, then meet.
  inst->state = ctx.heap_alloc(2 * sizeof(std::uint64_t));
  const std::size_t sync_bytes = kSyncPerRank * static_cast<std::size_t>(ctx.world()) * sizeof(std::uint64_t);
  inst->sync = ctx.heap_alloc(sync_bytes);
  auto& bk = backend::active();
  bk.memset(inst->state, 0, 2 * sizeof(std::uint64_t));
  bk.memset(inst->sync, 0, sync_bytes);
  ctx.barrier();
  return *c.instances.emplace(key, std::move(inst)).first->second;
}

std::map<std::string, std::int64_t> type_defines(DType dt, bool reduces) {
  const auto t = static_cast<irisc::tir::ScalarType>(dt);
  std::map<std::string, std::int64_t> d{{"T", irisc::type_define(t)}};
  if (reduces) {
    d["A"] = irisc::type_define(is_float_type(dt) ? irisc::tir::ScalarType::f32 : t);
  }
  return d;
}

Arg buffer(const void* p, DType dt, Shape shape) {
  std::size_t n = 1;
  for (auto d : shape) n *= static_cast<std::size_t>(d);
  return Arg::heap_buffer(const_cast<void*>(p), dt, std::move(shape), n * dtype_size(dt));
}

Arg state_arg(const Instance& in) { return Arg::device_buffer(in.state, DType::u64, Shape{2}, 16); }
Arg sync_arg(Context& ctx, const Instance& in) {
  const std::size_t n = kSyncPerRank * static_cast<std::size_t>(ctx.world());
  return Arg::heap_buffer(in.sync, DType::u64, Shape{static_cast<std::int64_t>(n)}, n * sizeof(std::uint64_t));
}

void require_on_heap(Context& ctx, const char* what, const void* p) {
  if (!ctx.in_heap(p)) throw Error(std::string(what) + ": the tensors must live on the symmetric heap (made by Context)");
}

// A symmetric buffer of at least `bytes`, grown collectively.
void* scratch(Context& ctx, std::size_t bytes) {
  Communicator& c = communicator(ctx);
  if (c.scratch_bytes < bytes) {
    if (c.scratch) ctx.heap_free(c.scratch);
    c.scratch = ctx.heap_alloc(bytes);
    c.scratch_bytes = bytes;
  }
  return c.scratch;
}

// The input an in-place call reads from: a copy on the heap scratch, ordered on `s`
// before the kernel, so the kernel may overwrite the original while peers still read.
const void* staged_input(Context& ctx, const void* src, std::size_t bytes, Stream s) {
  void* copy = scratch(ctx, bytes);
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
  return world == 1 || bytes <= (std::size_t{512} << 10) ? Algorithm::one_shot : Algorithm::two_shot;
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
