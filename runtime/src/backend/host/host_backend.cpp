// The host backend: libiris on CPU threads. "Device" memory is host memory, streams run
// what is enqueued at once and in order (so events, graphs and synchronize are plain),
// ranks of one process share one address space (IPC hands out the pointer itself), and
// libiris's own kernels (fill, arange, random, the device barrier) are C++ functions
// with the GPU kernels' semantics. Modules of GPU code (cubin, fatbin, PTX) cannot run
// here and are refused with a message.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.hpp"
#include "backend/host/host_job.hpp"
#include "backend/host/interpreter.hpp"
#include "backend/host/races.hpp"
#include "compiler/contract/host_code.hpp"
#include "iris/dtype.hpp"

namespace iris {

// The backend's handles (opaque to the rest of libiris).
struct StreamHandle {
  int unused = 0;
};
struct EventHandle {
  std::chrono::steady_clock::time_point when{};
  bool recorded = false;
};
struct ModuleHandle;
struct FunctionHandle;
struct DriverContextHandle {
  int device = 0;
};
struct GraphHandle;
struct GraphExecHandle;

namespace host {
namespace {

using namespace backend;
using u64 = unsigned long long;
using device::Cmp;

// Ranks on the host backend: as many "devices" as ranks may be, so that a job needs no
// GPU sharing; each runs a few programs at once.
constexpr int kDevices = device::kMaxRanks;
constexpr int kMultiprocessors = 4;

// ---- libiris's kernels, on the host ----------------------------------------------------
// Each takes the launch's argument pointers, as cuLaunchKernel does.
using KernelFn = void (*)(void** args);

template <class T> T arg(void** args, int i) {
  T v;
  std::memcpy(&v, args[i], sizeof v);
  return v;
}

// The GPU kernels' generator (runtime_kernels.cu): element i's value depends only on
// (seed, rank, i), so host and GPU runs draw the same numbers.
u64 mix64(u64 z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
float uniform01(u64 bits) { return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f); }

template <class T> T from_double(double v) {
  if constexpr (std::is_same_v<T, half>) {
    return half(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return bfloat16(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

// The race check sees libiris's fills as plain writes of the rank that made them.
template <class T> void track_fill(void** args, const T* dst, u64 n) {
  if (!races::enabled()) return;
  const auto& ctx = *static_cast<const device::Context*>(args[0]);
  static const char* site = races::intern("a fill (Context::zeros, full, arange, rand, randn or randint)");
  for (u64 i = 0; i < n; ++i) races::access(ctx, dst + i, races::Access::write, site, nullptr, static_cast<long long>(i));
}

template <class T> void arange(void** args) {
  T* dst = arg<T*>(args, 1);
  const u64 n = arg<u64>(args, 2);
  track_fill(args, dst, n);
  for (u64 i = 0; i < n; ++i) dst[i] = from_double<T>(static_cast<double>(i));
}

template <class T> void random(void** args) {
  T* dst = arg<T*>(args, 1);
  const u64 n = arg<u64>(args, 2);
  const int kind = arg<int>(args, 3);
  const u64 seed = arg<u64>(args, 4);
  const long long lo = arg<long long>(args, 5), hi = arg<long long>(args, 6);
  track_fill(args, dst, n);
  const u64 key = mix64(seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull);
  for (u64 i = 0; i < n; ++i) {
    const u64 a = mix64(key ^ (2 * i));
    double v;
    if (kind == 0) {
      v = uniform01(a);
    } else if (kind == 1) {
      const u64 b = mix64(key ^ (2 * i + 1));
      const float u1 = std::fmax(uniform01(a), 1e-7f), u2 = uniform01(b);
      v = std::sqrt(-2.0f * std::log(u1)) * std::cos(3.14159265358979f * 2.0f * u2);
    } else {
      const u64 span = static_cast<u64>(hi - lo);
      v = static_cast<double>(lo + static_cast<long long>(a % span));
    }
    dst[i] = from_double<T>(v);
  }
}

void fill_u64(void** args) {
  u64* dst = arg<u64*>(args, 1);
  const u64 n = arg<u64>(args, 2), bits = arg<u64>(args, 3);
  track_fill(args, dst, n);
  for (u64 i = 0; i < n; ++i) dst[i] = bits;
}

// The device barrier's protocol (runtime_kernels.cu): this rank's epoch, stored into its
// flag on every rank, then every rank's flag here awaited.
void device_barrier(void** args) {
  const auto& ctx = *static_cast<const device::Context*>(args[0]);
  u64* flags = arg<u64*>(args, 1);
  u64* epoch = arg<u64*>(args, 2);
  const u64 e = ++*epoch;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int r = 0; r < ctx.world; ++r) {
    u64* flag = device::translate(ctx, flags + ctx.rank, r);
    if (races::enabled()) {
      static const char* site = races::intern("the device barrier");
      races::access(ctx, flag, races::Access::atomic_write, site, "the device barrier's flags", ctx.rank);
      races::release(ctx, flag);
    }
    std::atomic_ref<u64>(*flag).store(e, std::memory_order_release);
  }
  for (int r = 0; r < ctx.world; ++r) {
    wait(ctx, Flag{flags + r, 8, false, "the device barrier's flags", r}, Cmp::ge, e,
         device::WaitSite{"the device barrier", r, 1}, 0);
    if (races::enabled()) races::acquire(ctx, flags + r);
  }
}

void trace_clock(void** args) {
  u64* out = arg<u64*>(args, 1);
  *out = static_cast<u64>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count());
}

// A function of a module: one of libiris's kernels (fn), or an irisc kernel the
// interpreter runs.
struct Function {
  std::string name;
  std::vector<std::size_t> param_sizes;
  KernelFn fn = nullptr;
  const InterpretedKernel* interpreted = nullptr;
};

constexpr std::size_t kContextBytes = sizeof(device::Context);

std::vector<Function> runtime_functions() {
  std::vector<Function> f;
  f.push_back({"iris_fill_u64", {kContextBytes, 8, 8, 8}, fill_u64});
  f.push_back({"iris_device_barrier", {kContextBytes, 8, 8}, device_barrier});
  f.push_back({"iris_trace_clock", {kContextBytes, 8}, trace_clock});
  // (Each of these takes the context first: launch() reads it to know the rank.)
#define IRIS_HOST_DTYPE(NAME, T)                                                                          \
  f.push_back({"iris_arange_" #NAME, {kContextBytes, 8, 8}, arange<T>});                                  \
  f.push_back({"iris_random_" #NAME, {kContextBytes, 8, 8, 4, 8, 8, 8}, random<T>});                      
  IRIS_HOST_DTYPE(f32, float)
  IRIS_HOST_DTYPE(f16, half)
  IRIS_HOST_DTYPE(bf16, bfloat16)
  IRIS_HOST_DTYPE(i32, std::int32_t)
  IRIS_HOST_DTYPE(i64, std::int64_t)
  IRIS_HOST_DTYPE(u32, std::uint32_t)
  IRIS_HOST_DTYPE(u64, std::uint64_t)
#undef IRIS_HOST_DTYPE
  return f;
}

struct HostModule {
  std::string name;
  std::vector<Function> functions;
  std::unique_ptr<LoadedModule> loaded;  // a host code object's kernels
};

HostModule* mod(ModuleHandle* h) { return reinterpret_cast<HostModule*>(h); }
Function* fun(FunctionHandle* h) { return reinterpret_cast<Function*>(h); }

[[noreturn]] void unsupported(const std::string& what) {
  throw Error(what + " is not available on the host backend (IRIS_BACKEND=host)");
}

class HostBackend final : public Backend {
 public:
  const char* name() const override { return "host"; }
  void require() override {}

  int device_count() override { return kDevices; }
  std::string device_name(int) override { return "host CPU"; }
  int device_attribute(int, DeviceAttribute attribute) override {
    switch (attribute) {
      case DeviceAttribute::multiprocessors: return kMultiprocessors;
      case DeviceAttribute::compute_capability_major:
      case DeviceAttribute::compute_capability_minor: return 0;
    }
    return 0;
  }
  std::string device_arch(int) override { return "host"; }
  bool can_access_peer(int, int) override { return true; }
  bool peer_native_atomics(int, int) override { return true; }

  DriverContextHandle* retain_primary_context(int device) override { return &contexts_[device % kDevices]; }
  void release_primary_context(int) noexcept override {}
  void set_current_context(DriverContextHandle*) override {}
  void enable_peer_access(DriverContextHandle*) override {}
  void synchronize() override {}

  void* mem_alloc(std::size_t bytes) override {
    // Aligned as the CUDA driver's allocations are (2 MiB for heaps), so that offsets
    // aligned within a heap are aligned addresses too.
    const std::size_t align = bytes >= (std::size_t{2} << 20) ? (std::size_t{2} << 20) : 4096;
    return std::aligned_alloc(align, (bytes + align - 1) / align * align);  // nullptr: out of memory
  }
  void mem_free(void* ptr) noexcept override { std::free(ptr); }
  void* host_alloc_mapped(std::size_t bytes, void** device_ptr) override {
    void* p = std::calloc(1, bytes);
    if (!p) throw std::bad_alloc();
    *device_ptr = p;
    return p;
  }
  void host_free_mapped(void* ptr) noexcept override { std::free(ptr); }
  MemoryInfo memory_info() override { return {}; }
  void memset(void* dst, unsigned char value, std::size_t bytes) override { std::memset(dst, value, bytes); }
  void memset_async(void* dst, std::uint32_t value, std::size_t element_bytes, std::size_t count,
                    StreamHandle*) override {
    auto* d = static_cast<unsigned char*>(dst);
    for (std::size_t i = 0; i < count; ++i) std::memcpy(d + i * element_bytes, &value, element_bytes);
  }
  void copy_to_host(void* host, const void* device, std::size_t bytes) override { std::memmove(host, device, bytes); }
  void copy_from_host(void* device, const void* host, std::size_t bytes) override { std::memmove(device, host, bytes); }
  void copy_device_async(void* dst, const void* src, std::size_t bytes, StreamHandle*) override {
    ordered_copy(dst, src, bytes);
  }
  static void ordered_copy(void* dst, const void* src, std::size_t bytes) {
    if (bytes == sizeof(std::uint64_t) && reinterpret_cast<std::uintptr_t>(dst) % alignof(std::uint64_t) == 0) {
      std::uint64_t v;
      std::memcpy(&v, src, sizeof v);
      __atomic_store_n(static_cast<std::uint64_t*>(dst), v, __ATOMIC_RELEASE);
      return;
    }
    std::atomic_thread_fence(std::memory_order_release);
    std::memmove(dst, src, bytes);
  }
  // A copy that publishes a flag (8 aligned bytes after the data it guards) is a release
  // store, so that a peer's acquire load of the flag sees the data (as on a GPU, where a
  // copy on a stream is ordered after the one before it).
  void copy_async(void* dst, const void* src, std::size_t bytes, StreamHandle*) override { ordered_copy(dst, src, bytes); }
  void copy_peer_async(void* dst, DriverContextHandle*, const void* src, DriverContextHandle*, std::size_t bytes,
                       StreamHandle*) override {
    std::memmove(dst, src, bytes);
  }
  void copy_2d_async(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                     std::size_t height, StreamHandle*) override {
    for (std::size_t r = 0; r < height; ++r) {
      std::memmove(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * src_pitch, width);
    }
  }
  // Work runs as it is enqueued here, so the kernels that raise the word have run: a
  // word still below `value` never gets there.
  void wait_value_async(const std::uint64_t* word, std::uint64_t value, StreamHandle*) override {
    const std::uint64_t now = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    if (now < value) {
      throw Error("wait_value: the word is " + std::to_string(now) + " and nothing enqueued before raises it to " +
                  std::to_string(value) + " (the host backend runs work as it is enqueued)");
    }
  }

  // Ranks of one process: the "handle" is the pointer.
  IpcMemHandle ipc_export(void* base) override {
    IpcMemHandle h{};
    std::memcpy(h.bytes, &base, sizeof base);
    return h;
  }
  void* ipc_open(const IpcMemHandle&) override {
    unsupported("sharing memory between processes (mpirun); run the ranks as threads");
  }
  void ipc_close(void*) noexcept override {}

  ModuleHandle* module_load(const void* image, const std::string& name) override {
    if (!irisc::is_host_code(std::span<const std::byte>(static_cast<const std::byte*>(image), irisc::kHostCodePrefix.size()))) {
      throw IncompatibleCodeError(name + " holds GPU code (a cubin, fatbin or PTX), which the host backend cannot run: "
                                         "it runs irisc kernels (through the JIT, or compiled with irisc --target=host) "
                                         "and libiris's own");
    }
    auto m = std::make_unique<HostModule>();
    m->name = name;
    m->loaded = host::load(image, name);
    for (const InterpretedKernel& k : m->loaded->kernels) {
      Function f;
      f.name = k.symbol;
      f.param_sizes = k.param_sizes;
      f.interpreted = &k;
      m->functions.push_back(std::move(f));
    }
    return reinterpret_cast<ModuleHandle*>(m.release());
  }
  ModuleHandle* runtime_module(const RuntimeKernelImages&, const std::string& name) override {
    auto* m = new HostModule{name, runtime_functions(), nullptr};
    return reinterpret_cast<ModuleHandle*>(m);
  }
  void module_unload(ModuleHandle* module) noexcept override { delete mod(module); }
  FunctionHandle* module_function(ModuleHandle* module, const std::string& name) override {
    for (Function& f : mod(module)->functions) {
      if (f.name == name) return reinterpret_cast<FunctionHandle*>(&f);
    }
    return nullptr;
  }
  std::vector<std::string> module_function_names(ModuleHandle* module) override {
    std::vector<std::string> out;
    for (const Function& f : mod(module)->functions) out.push_back(f.name);
    return out;
  }
  std::optional<ModuleGlobal> module_global(ModuleHandle* module, const std::string& name) override {
    const HostModule* m = mod(module);
    if (name != "iris_metadata" || !m->loaded) return std::nullopt;
    std::string& json = m->loaded->metadata;
    return ModuleGlobal{json.data(), json.size() + 1};
  }
  std::vector<std::size_t> function_param_sizes(FunctionHandle* function) override { return fun(function)->param_sizes; }
  void set_max_dynamic_shared_bytes(FunctionHandle*, std::size_t) override {}
  // 4 x 4 programs at once: what the interpreter runs concurrently (interpreter.cpp).
  int resident_blocks_per_sm(FunctionHandle*, int, std::size_t) override { return 4; }
  int max_active_clusters(FunctionHandle*, int, int, std::size_t) override { return 0; }
  void launch(FunctionHandle* function, Dim3 grid, Dim3, std::size_t, StreamHandle*, void** args,
              std::string_view) override {
    const Function& f = *fun(function);
    if (f.interpreted) {
      host::run(*f.interpreted, grid.x * grid.y * grid.z, args);
      return;
    }
    const auto& ctx = *static_cast<const device::Context*>(args[0]);
    LaunchScope launch(ctx, 1);
    WorkerScope worker(ctx);
    f.fn(args);
  }
  void encode_tensor_map(const TensorMapSpec&, TensorMap*) override { unsupported("TMA tensor maps"); }

  // Called as each job starts (iris::run): earlier jobs' state goes.
  void set_race_check(bool on) override {
    forget_jobs();
    races::start(on);
  }
  bool watches_collectives() const override { return true; }
  void host_collective(const device::Context& ctx, bool entering) override {
    if (races::enabled()) races::collective(ctx, entering);
    in_collective(ctx, entering);
  }

  StreamHandle* stream_create() override { return new StreamHandle{}; }
  void stream_destroy(StreamHandle* stream) noexcept override { delete stream; }
  void stream_synchronize(StreamHandle*) override {}
  bool stream_query(StreamHandle*) override { return true; }
  void stream_wait_event(StreamHandle*, EventHandle*) override {}
  EventHandle* event_create() override { return new EventHandle{}; }
  void event_destroy(EventHandle* event) noexcept override { delete event; }
  void event_record(EventHandle* event, StreamHandle*) override {
    event->when = std::chrono::steady_clock::now();
    event->recorded = true;
  }
  void event_synchronize(EventHandle*) override {}
  float event_elapsed_ms(EventHandle* begin, EventHandle* end) override {
    if (!begin->recorded || !end->recorded) throw Error("elapsed time of an event that was never recorded");
    return std::chrono::duration<float, std::milli>(end->when - begin->when).count();
  }

  void capture_begin(StreamHandle*) override { unsupported("graph capture"); }
  GraphHandle* capture_end(StreamHandle*) override { unsupported("graph capture"); }
  void capture_abort(StreamHandle*) noexcept override {}
  GraphExecHandle* graph_instantiate(GraphHandle*) override { unsupported("graphs"); }
  void graph_destroy(GraphHandle*) noexcept override {}
  void graph_launch(GraphExecHandle*, StreamHandle*) override { unsupported("graphs"); }
  void graph_exec_destroy(GraphExecHandle*) noexcept override {}

 private:
  DriverContextHandle contexts_[kDevices] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
};

}  // namespace

}  // namespace host

namespace backend {
Backend& host() {
  static host::HostBackend host_backend;
  return host_backend;
}
}  // namespace backend

}  // namespace iris
