// A rank's Context: GPU selection, stream, symmetric heap, runtime kernels, host
// collectives and launches; and iris::run, which starts the ranks.
#include "iris/context.hpp"

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "backend/backend.hpp"
#include "bootstrap.hpp"
#include "heap_allocator.hpp"
#include "iris/error.hpp"
#include "iris/log.hpp"
#include "iris/size.hpp"
#include "module_impl.hpp"
#include "symmetric_heap.hpp"

namespace iris::embedded {
std::span<const std::byte> runtime_kernels();
}

namespace iris {
namespace {

// The first bytes of every heap belong to libiris: device-barrier flags and epoch.
constexpr std::size_t kReservedBytes = 64 << 10;
constexpr std::size_t kBarrierFlagsOffset = 0;     // u64[kMaxRanks]
constexpr std::size_t kBarrierEpochOffset = 1024;  // u64

constexpr int kNumDTypes = 7;
constexpr DType kAllDTypes[kNumDTypes] = {DType::f32, DType::f16, DType::bf16, DType::i32,
                                          DType::i64, DType::u32, DType::u64};

}  // namespace

struct Context::Impl {
  std::unique_ptr<Bootstrap> boot;
  int device = -1;
  std::string device_name;
  int sms = 0;
  DriverContextHandle* driver_ctx = nullptr;  // the device's primary context, retained
  Stream stream = nullptr;
  std::unique_ptr<SymmetricHeap> heap;
  std::unique_ptr<HeapAllocator> alloc;
  device::Context dctx{};
  Module runtime;
  Kernel fill_u64, barrier, arange[kNumDTypes], random[kNumDTypes];

  Impl(std::unique_ptr<Bootstrap> b, const Options& opt) : boot(std::move(b)) {
    auto& bk = backend::active();
    const int ndev = bk.device_count();
    if (ndev == 0) throw NoDeviceError("no GPU found: the CUDA driver reports no device");
    const int local = boot->local_rank();
    if (local >= ndev && !opt.share_gpus) {
      throw Error("rank " + std::to_string(boot->rank()) + " (local rank " + std::to_string(local) +
                  ") has no GPU of its own: " + std::to_string(ndev) +
                  " GPU(s) present; allow sharing with Options::share_gpus, --share-gpus or IRIS_SHARE_GPUS=1");
    }
    device = local % ndev;
    device_name = bk.device_name(device);
    sms = bk.device_attribute(device, backend::DeviceAttribute::multiprocessors);
    driver_ctx = bk.retain_primary_context(device);
    bk.set_current_context(driver_ctx);
    stream = bk.stream_create();

    std::vector<int> devices(static_cast<std::size_t>(boot->world()));
    boot->allgather(&device, devices.data(), sizeof(int));
    heap = std::make_unique<SymmetricHeap>(*boot, opt.heap_bytes, devices);
    alloc = std::make_unique<HeapAllocator>(kReservedBytes, opt.heap_bytes - kReservedBytes);
    dctx.rank = boot->rank();
    dctx.world = boot->world();
    for (int r = 0; r < boot->world(); ++r) dctx.heap_bases[r] = heap->base(r);

    runtime.impl_ = load_module_impl(embedded::runtime_kernels(), "libiris runtime kernels");
    fill_u64 = runtime.kernel("iris_fill_u64");
    barrier = runtime.kernel("iris_device_barrier");
    for (int i = 0; i < kNumDTypes; ++i) {
      const std::string dt(dtype_name(kAllDTypes[i]));
      arange[i] = runtime.kernel("iris_arange_" + dt);
      random[i] = runtime.kernel("iris_random_" + dt);
    }
    boot->barrier();
    log_info("rank ", boot->rank(), "/", boot->world(), " on GPU ", device, " (", device_name, ", ", sms,
             " SMs), bootstrap ", boot->name());
  }

  ~Impl() {
    auto& bk = backend::active();
    // Peers may still read or write this heap: wait for everyone before freeing it
    // (even when this stream reports an error).
    try {
      bk.stream_synchronize(stream);
    } catch (const std::exception&) {
    }
    try {
      boot->teardown_barrier();
    } catch (const std::exception&) {
    }
    runtime = Module();
    heap.reset();
    if (stream) bk.stream_destroy(stream);
    if (driver_ctx) bk.release_primary_context(device);
  }

  std::size_t offset_of(const void* p) const {
    return static_cast<std::size_t>(static_cast<const char*>(p) - heap->local_base());
  }
  bool in_heap(const void* p) const {
    const char* c = static_cast<const char*>(p);
    return c >= heap->local_base() && c < heap->local_base() + heap->bytes();
  }

  void launch_simple(const Kernel& k, std::size_t n, std::vector<void*> args) {
    const unsigned threads = 256;
    std::size_t blocks = (n + threads - 1) / threads;
    const std::size_t cap = static_cast<std::size_t>(sms) * 8;
    if (blocks > cap) blocks = cap;
    if (blocks == 0) return;
    backend::active().launch(k.handle(), Dim3(static_cast<unsigned>(blocks)), Dim3(threads), 0, stream, args.data(),
                             k.name());
  }
};

static int dtype_index(DType t) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kAllDTypes[i] == t) return i;
  }
  return 0;
}

Context::Context(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::~Context() = default;

int Context::rank() const { return impl_->boot->rank(); }
int Context::world() const { return impl_->boot->world(); }
int Context::device() const { return impl_->device; }
const std::string& Context::device_name() const { return impl_->device_name; }
int Context::multiprocessors() const { return impl_->sms; }
const char* Context::bootstrap_name() const { return impl_->boot->name(); }
Stream Context::stream() const { return impl_->stream; }
const device::Context& Context::device_context() const { return impl_->dctx; }

void* Context::heap_alloc(std::size_t bytes, std::size_t alignment) {
  struct Request {
    unsigned long long bytes, alignment, offset;
    int ok;
  };
  Request mine{bytes, alignment, 0, 0};
  std::string error;
  try {
    mine.offset = impl_->alloc->allocate(bytes, alignment);
    mine.ok = 1;
  } catch (const Error& e) {
    error = e.what();
  }
  std::vector<Request> all(static_cast<std::size_t>(world()));
  impl_->boot->allgather(&mine, all.data(), sizeof(Request));
  // Every rank runs the same checks on the same data, so all throw or none does.
  if (!mine.ok) throw Error(error);
  for (int r = 0; r < world(); ++r) {
    if (!all[static_cast<std::size_t>(r)].ok) {
      impl_->alloc->free(mine.offset);
      throw Error("collective heap allocation of " + std::to_string(bytes) + " bytes failed on rank " +
                  std::to_string(r) + " (see its error); no rank keeps it");
    }
  }
  for (int r = 0; r < world(); ++r) {
    const Request& q = all[static_cast<std::size_t>(r)];
    if (q.bytes != mine.bytes || q.alignment != mine.alignment || q.offset != mine.offset) {
      impl_->alloc->free(mine.offset);
      throw Error("ranks disagree on a collective heap allocation: rank " + std::to_string(rank()) + " asked for " +
                  std::to_string(mine.bytes) + " bytes (alignment " + std::to_string(mine.alignment) +
                  ") and got offset " + std::to_string(mine.offset) + ", rank " + std::to_string(r) +
                  " asked for " + std::to_string(q.bytes) + " bytes (alignment " + std::to_string(q.alignment) +
                  ") and got offset " + std::to_string(q.offset) +
                  "; every rank must make the same heap allocations and frees in the same order");
    }
  }
  return impl_->heap->local_base() + mine.offset;
}

void Context::heap_free(void* ptr) {
  if (!ptr) return;
  if (!impl_->in_heap(ptr)) {
    throw Error("heap_free: pointer " + std::to_string(reinterpret_cast<std::uintptr_t>(ptr)) +
                " is not in rank " + std::to_string(rank()) + "'s symmetric heap");
  }
  impl_->alloc->free(impl_->offset_of(ptr));
}

HeapInfo Context::heap_info() const {
  HeapInfo h;
  h.base = reinterpret_cast<std::uintptr_t>(impl_->heap->local_base());
  h.capacity = impl_->alloc->capacity();
  h.used = impl_->alloc->used_bytes();
  h.free = impl_->alloc->free_bytes();
  h.largest_free_block = impl_->alloc->largest_free_block();
  h.live_allocations = impl_->alloc->live_blocks();
  return h;
}

bool Context::in_heap(const void* ptr) const { return impl_->in_heap(ptr); }

void* Context::translate(const void* ptr, int to) const {
  if (to < 0 || to >= world()) {
    throw Error("rank " + std::to_string(to) + " is out of range [0, " + std::to_string(world()) + ")");
  }
  if (!impl_->in_heap(ptr)) throw Error("translate: the pointer is not in this rank's symmetric heap");
  return impl_->heap->base(to) + impl_->offset_of(ptr);
}

void* Context::alloc_tensor(const Shape& shape, DType dtype, std::size_t* numel) {
  std::size_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw Error("tensor shape has a negative extent (" + std::to_string(d) + ")");
    n *= static_cast<std::size_t>(d);
  }
  *numel = n;
  return heap_alloc(n * dtype_size(dtype));
}

void Context::fill(void* ptr, DType dtype, std::size_t n, double value) {
  const std::uint64_t bits = dtype_bits(dtype, value);
  switch (dtype_size(dtype)) {
    case 2:
    case 4:
      backend::active().memset_async(ptr, static_cast<std::uint32_t>(bits), dtype_size(dtype), n, impl_->stream);
      break;
    default: {
      unsigned long long nn = n, b = bits;
      impl_->launch_simple(impl_->fill_u64, n, {const_cast<device::Context*>(&impl_->dctx), &ptr, &nn, &b});
    }
  }
}

void Context::fill_arange(void* ptr, DType dtype, std::size_t n) {
  unsigned long long nn = n;
  impl_->launch_simple(impl_->arange[dtype_index(dtype)], n, {const_cast<device::Context*>(&impl_->dctx), &ptr, &nn});
}

void Context::fill_random(void* ptr, DType dtype, std::size_t n, int kind, std::uint64_t seed, std::int64_t lo,
                          std::int64_t hi) {
  if (kind < 2 && !dtype_is_float(dtype)) {
    throw Error(std::string(kind == 0 ? "rand" : "randn") + " needs a floating dtype (f32, f16, bf16), not " +
                std::string(dtype_name(dtype)) + "; use randint for integers");
  }
  if (kind == 2 && hi <= lo) {
    throw Error("randint needs low < high (got [" + std::to_string(lo) + ", " + std::to_string(hi) + "))");
  }
  unsigned long long nn = n;
  // Mix the rank in, so ranks draw different numbers from the same seed.
  unsigned long long s = seed * 0x100000001b3ull + static_cast<unsigned long long>(rank()) + 1;
  long long l = lo, h = hi;
  impl_->launch_simple(impl_->random[dtype_index(dtype)], n,
                       {const_cast<device::Context*>(&impl_->dctx), &ptr, &nn, &kind, &s, &l, &h});
}

void Context::copy_to_host(void* host, const void* device, std::size_t bytes) {
  backend::active().copy_async(host, device, bytes, impl_->stream);
  synchronize();
}

void Context::copy_from_host(void* device, const void* host, std::size_t bytes) {
  backend::active().copy_async(device, host, bytes, impl_->stream);
  synchronize();
}

void Context::synchronize() { backend::active().stream_synchronize(impl_->stream); }

void Context::barrier() {
  synchronize();
  impl_->boot->barrier();
}

void Context::device_barrier(Stream stream) {
  char* base = impl_->heap->local_base();
  void* flags = base + kBarrierFlagsOffset;
  void* epoch = base + kBarrierEpochOffset;
  void* args[] = {const_cast<device::Context*>(&impl_->dctx), &flags, &epoch};
  backend::active().launch(impl_->barrier.handle(), Dim3(1), Dim3(32), 0, stream ? stream : impl_->stream, args,
                           impl_->barrier.name());
}

void Context::broadcast_host(void* data, std::size_t bytes, int root) { impl_->boot->broadcast(data, bytes, root); }

void Context::all_gather_host(const void* mine, void* all, std::size_t bytes) {
  impl_->boot->allgather(mine, all, bytes);
}

void Context::broadcast(void* symmetric_ptr, std::size_t bytes, int root) {
  if (root < 0 || root >= world()) {
    throw Error("broadcast root " + std::to_string(root) + " is out of range [0, " + std::to_string(world()) + ")");
  }
  if (!impl_->in_heap(symmetric_ptr) || impl_->offset_of(symmetric_ptr) + bytes > impl_->heap->bytes()) {
    throw Error("broadcast: the buffer is not inside the symmetric heap");
  }
  barrier();
  if (rank() != root) {
    backend::active().copy_async(symmetric_ptr, translate(symmetric_ptr, root), bytes, impl_->stream);
  }
  barrier();
}

Module Context::load_module(std::span<const std::byte> code, const std::string& name) {
  Module m;
  m.impl_ = load_module_impl(code, name);
  return m;
}

Module Context::load_module(const std::filesystem::path& file) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) throw Error("cannot read module " + file.string() + ": " + ec.message());
  std::vector<std::byte> bytes(size);
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) throw Error("cannot open module " + file.string());
  const size_t got = std::fread(bytes.data(), 1, size, f);
  std::fclose(f);
  if (got != size) throw Error("short read of module " + file.string());
  return load_module(bytes, file.string());
}

void Context::launch_raw(const Kernel& kernel, const LaunchConfig& cfg, void** args, const std::size_t* arg_sizes,
                         std::size_t nargs) {
  if (!kernel) throw Error("launch of an empty Kernel (look it up with Module::kernel first)");
  const auto& want = kernel.param_sizes();
  if (!want.empty() || nargs == 0) {
    if (want.size() != nargs) {
      throw Error("kernel '" + kernel.name() + "' takes " + std::to_string(want.size()) + " parameters but " +
                  std::to_string(nargs) + " were passed (the device context, passed first, counts as one)");
    }
    for (std::size_t i = 0; i < nargs; ++i) {
      if (want[i] != arg_sizes[i]) {
        throw Error("kernel '" + kernel.name() + "' parameter " + std::to_string(i) + " is " +
                    std::to_string(want[i]) + " bytes but the argument passed is " + std::to_string(arg_sizes[i]) +
                    " bytes" + (i == 0 ? " (the first parameter must be iris::device::Context)" : ""));
      }
    }
  }
  if (cfg.grid.x == 0 || cfg.grid.y == 0 || cfg.grid.z == 0 || cfg.block.x == 0 || cfg.block.y == 0 ||
      cfg.block.z == 0) {
    throw Error("launch of '" + kernel.name() + "' with an empty grid or block");
  }
  auto& bk = backend::active();
  if (cfg.shared_bytes > (48u << 10) &&
      (!kernel.shared_allowed_ || cfg.shared_bytes > kernel.shared_allowed_->load(std::memory_order_relaxed))) {
    bk.set_max_dynamic_shared_bytes(kernel.handle(), cfg.shared_bytes);
    if (kernel.shared_allowed_) kernel.shared_allowed_->store(cfg.shared_bytes, std::memory_order_relaxed);
  }
  bk.launch(kernel.handle(), cfg.grid, cfg.block, cfg.shared_bytes, cfg.stream ? cfg.stream : impl_->stream, args,
            kernel.name());
}

int device_count() {
  try {
    return backend::active().device_count();
  } catch (const Error&) {  // NoDeviceError, or the driver failing to count
    return 0;
  }
}

int run(const Options& options, const std::function<void(Context&)>& body) {
  options.validate();
  if (launched_by_mpi()) {
    backend::active().require();  // NoDeviceError before MPI starts
    auto boot = make_mpi_bootstrap(options.host_timeout);
    set_log_rank(boot->rank(), boot->world());
    log_environment();
    if (boot->world() > device::kMaxRanks) {
      throw Error("mpirun started " + std::to_string(boot->world()) + " ranks; at most " +
                  std::to_string(device::kMaxRanks) + " are supported");
    }
    if (options.ranks != 0 && options.ranks != boot->world()) {
      log(LogLevel::warn, "--ranks " + std::to_string(options.ranks) + " ignored: mpirun started " +
                              std::to_string(boot->world()) + " ranks");
    }
    std::unique_ptr<Context> ctx;
    try {
      ctx.reset(new Context(std::make_unique<Context::Impl>(std::move(boot), options)));
      body(*ctx);
    } catch (const std::exception& e) {
      log(LogLevel::error, e.what());
      abort_mpi_job();  // peers may be blocked in a collective with this rank
    }
    ctx.reset();
    return 0;  // a failing rank ends the whole job through MPI_Abort
  }

  log_environment();
  const int ndev = backend::active().device_count();  // throws NoDeviceError: no driver / no device
  const int world = options.ranks ? options.ranks : ndev;
  if (world > ndev && !options.share_gpus) {
    throw Error(std::to_string(world) + " ranks requested but only " + std::to_string(ndev) +
                " GPU(s) found; allow several ranks per GPU with Options::share_gpus, --share-gpus or "
                "IRIS_SHARE_GPUS=1");
  }
  if (world > device::kMaxRanks) {
    throw Error("at most " + std::to_string(device::kMaxRanks) + " ranks are supported (got " + std::to_string(world) + ")");
  }
  auto group = make_thread_group(world, options.host_timeout);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      set_log_rank(r, world);
      std::unique_ptr<Context> ctx;
      try {
        ctx.reset(new Context(std::make_unique<Context::Impl>(make_thread_bootstrap(group, r), options)));
        body(*ctx);
      } catch (const std::exception& e) {
        log(LogLevel::error, e.what());
        // Wake the other ranks before this context's teardown waits for them.
        abort_thread_group(*group, "rank " + std::to_string(r) + ": " + e.what());
        ++failures;
      }
      ctx.reset();
      set_log_rank(-1, 0);
    });
  }
  for (auto& t : threads) t.join();
  return failures.load() ? 1 : 0;
}

}  // namespace iris
