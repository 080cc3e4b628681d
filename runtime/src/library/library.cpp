#include "library/library.hpp"

#include <algorithm>
#include <memory>
#include <string_view>
#include <vector>

#include "compiler/driver/compile.hpp"
#include "iris/jit.hpp"
#include "jit/jit_target.hpp"

namespace iris::library {

namespace {

bool is_float_type(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

struct Scratch {
  void* ptr = nullptr;
  std::size_t bytes = 0;
};

// What a context keeps for the library.
struct State {
  Context* ctx = nullptr;
  int share = 1;
  int max_share = 1;
  std::map<std::string, std::unique_ptr<Instance>> instances;
  std::map<std::string, Scratch> scratch;
  std::map<std::string, Scratch> zeroed;
  std::map<std::string, std::pair<Scratch, std::uint64_t>> constants;  // and the value of each word
};

State& state(Context& ctx) {
  auto p = ctx.attachment("iris::library", [&ctx]() -> std::shared_ptr<void> {
    auto s = std::make_shared<State>();
    s->ctx = &ctx;
    const std::vector<int> devices = ctx.all_gather(ctx.device());
    s->share = 0;
    for (int d : devices) s->share += d == ctx.device();
    for (int d : devices) s->max_share = std::max<int>(s->max_share, static_cast<int>(std::count(devices.begin(), devices.end(), d)));
    return s;
  });
  return *static_cast<State*>(p.get());
}

// `bytes` of the heap, zeroed on this rank's stream. Every caller then calls
// ctx.barrier(), which waits for that stream on every rank: no peer signals into memory
// that is still to be cleared.
void* zeroed_heap(Context& ctx, std::size_t bytes) {
  void* p = ctx.heap_alloc(bytes);
  ctx.zero_async(p, bytes);
  return p;
}

}  // namespace

int share(Context& ctx) { return state(ctx).share; }
int max_share(Context& ctx) { return state(ctx).max_share; }

bool copies_beside_waits(Context& ctx) { return max_share(ctx) == 1 && std::string_view(ctx.backend()) != "hip"; }

// A first call's set-up (a JIT compile, heap allocations, host barriers, a host sync
// before a scratch grows) cannot be captured into a CUDA graph: say so, before the
// driver answers a host sync with a bare CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED.
void require_not_capturing(Context& ctx, const std::string& what) {
  if (!ctx.capturing()) return;
  throw Error(what + " is set up on its first call (a JIT compile, heap allocations, barriers between the ranks), "
              "which a CUDA graph capture cannot hold: run the call once eagerly, at its largest size, before "
              "capturing it");
}

Instance& instance(Context& ctx, const dsl::DslKernel& k, std::map<std::string, std::int64_t> defines,
                   const std::string& target) {
  const std::string file = k.file, kernel = k.name;
  const auto declares = [&](std::string_view name) {
    for (const char* const* p = k.params; *p; ++p) {
      if (name == *p) return true;
    }
    return false;
  };
  State& st = state(ctx);
  // The kernels that size their programs by the ranks sharing a GPU declare SHARE.
  if (declares("SHARE")) defines["SHARE"] = st.share;
  std::string key = file + ":" + kernel + "@" + target;
  for (const auto& [n, v] : defines) key += ";" + n + "=" + std::to_string(v);
  auto it = st.instances.find(key);
  if (it != st.instances.end()) return *it->second;
  // First use. Every define names one of the kernel's compile-time parameters: irisc
  // only warns of one that does not, and the parameter it was meant for would keep its
  // default.
  for (const auto& [name, value] : defines) {
    if (!declares(name)) {
      throw Error("iris: internal: the standard library passes '" + name + "' to kernel '" + kernel + "' of dsl/" + file +
                  ", which has no such compile-time parameter");
    }
  }
  const char* source = irisc::stdlib_file(file);
  if (!source) throw Error("the standard library has no " + file + " (libiris was built without dsl/)");
  require_not_capturing(ctx, "the standard library's kernel '" + kernel + "' (dsl/" + file + ")");
  JitOptions jo;
  jo.defines = std::move(defines);
  jo.target = target;
  jo.kernels = {kernel};  // not the file's other kernels: a compile each, for nothing
  auto inst = std::make_unique<Instance>();
  inst->program = jit_program(ctx, source, "dsl/" + file, jo);
  inst->kernel = kernel;
  inst->state = zeroed_heap(ctx, 2 * sizeof(std::uint64_t));
  inst->sync = zeroed_heap(ctx, kSyncPerRank * static_cast<std::size_t>(ctx.world()) * sizeof(std::uint64_t));
  ctx.barrier();
  return *st.instances.emplace(key, std::move(inst)).first->second;
}

void* tile_flags(Context& ctx, Instance& in, std::size_t count) {
  if (in.tile_flag_count < count) {
    require_not_capturing(ctx, "the per-tile flags of kernel '" + in.kernel + "'");
    // Every rank is past the calls that used the old flags before any frees them.
    ctx.synchronize();
    ctx.barrier();
    if (in.tile_flags) ctx.heap_free(in.tile_flags);
    in.tile_flags = zeroed_heap(ctx, count * sizeof(std::uint64_t));
    in.tile_flag_count = count;
    ctx.barrier();
  }
  return in.tile_flags;
}

namespace {

// scratch() and empty_slots(): `fill` < 0 leaves the bytes as the heap has them.
void* grown(Context& ctx, const std::string& name, std::size_t bytes, std::size_t* have, int fill) {
  Scratch& s = state(ctx).scratch[name];
  if (s.bytes < bytes) {
    require_not_capturing(ctx, "the standard library's scratch '" + name + "' (growing to " + std::to_string(bytes) +
                                   " bytes for a call larger than any before)");
    if (s.ptr) {
      ctx.synchronize();  // no queued call still uses the old buffer
      ctx.barrier();
      ctx.heap_free(s.ptr);
    }
    s.ptr = ctx.heap_alloc(bytes);
    if (fill >= 0) ctx.set_async(s.ptr, static_cast<unsigned char>(fill), bytes);
    s.bytes = bytes;
    if (fill >= 0) ctx.barrier();  // set everywhere before any rank's kernel stores into it
  }
  if (have) *have = s.bytes;
  return s.ptr;
}

}  // namespace

void* scratch(Context& ctx, const std::string& name, std::size_t bytes, std::size_t* have, bool zero) {
  return grown(ctx, name, bytes, have, zero ? 0 : -1);
}

void* empty_slots(Context& ctx, const std::string& name, std::size_t bytes, std::size_t* have) {
  return grown(ctx, name, bytes, have, 0xff);
}

void* zeroed(Context& ctx, const std::string& name, std::size_t bytes) {
  Scratch& s = state(ctx).zeroed[name];
  if (!s.ptr) {
    require_not_capturing(ctx, "the standard library's flags '" + name + "'");
    s.ptr = zeroed_heap(ctx, bytes);
    s.bytes = bytes;
    ctx.barrier();  // zeroed on every rank before any rank's kernel signals into it
  }
  if (s.bytes < bytes) throw Error("iris: internal: the zeroed buffer '" + name + "' was made smaller than asked");
  return s.ptr;
}

std::uint64_t* constant_words(Context& ctx, const std::string& name, std::size_t count, std::uint64_t value) {
  auto& [s, made_with] = state(ctx).constants[name];
  if (s.ptr && made_with != value) {
    throw Error("iris: internal: the constants '" + name + "' were made " + std::to_string(made_with) + ", not " +
                std::to_string(value));
  }
  if (!s.ptr) {
    made_with = value;
    require_not_capturing(ctx, "the standard library's constants '" + name + "'");
    s.ptr = ctx.heap_alloc(count * sizeof(std::uint64_t));
    s.bytes = count * sizeof(std::uint64_t);
    const std::vector<std::uint64_t> words(count, value);
    ctx.copy_from_host(s.ptr, words.data(), s.bytes);
    ctx.barrier();  // written on every rank before any rank's copies read a peer's
  }
  if (s.bytes < count * sizeof(std::uint64_t)) throw Error("iris: internal: the constants '" + name + "' were made fewer than asked");
  return static_cast<std::uint64_t*>(s.ptr);
}

std::map<std::string, std::int64_t> type_defines(DType dt, bool reduces) {
  std::map<std::string, std::int64_t> d{{"T", type_define_of(dt)}};
  if (reduces) d["A"] = type_define_of(is_float_type(dt) ? DType::f32 : dt);
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

}  // namespace iris::library
