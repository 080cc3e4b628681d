// A rank's Context: GPU selection, stream, symmetric heap, runtime kernels, host
// collectives and launches; and iris::run, which starts the ranks.
#include "iris/context.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "backend/backend.hpp"
#include "job/bootstrap.hpp"
#include "heap/heap_allocator.hpp"
#include "iris/error.hpp"
#include "iris/log.hpp"
#include "iris/size.hpp"
#include "launch/module_impl.hpp"
#include "heap/symmetric_heap.hpp"
#include "trace/trace.hpp"
#include "job/wait_fault.hpp"

namespace iris::embedded {
std::span<const std::byte> runtime_kernels();
std::span<const std::byte> runtime_kernels_amdgpu();
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

// How long a rank waits for its own GPU work to stop after a peer failed (device waits
// see the abort within milliseconds; only a spin the abort cannot reach takes longer).
constexpr std::chrono::seconds kAbortGrace{10};

}  // namespace

namespace {

// What a failed job leaves allocated because a peer's kernel may still touch it: kept
// (and reachable) here until the process ends, never freed under a running kernel.
struct Quarantine {
  std::mutex mu;
  std::vector<std::unique_ptr<SymmetricHeap>> heaps;
  std::vector<std::unique_ptr<Tracer>> tracers;
  std::vector<device::Control*> controls;
  std::vector<StreamHandle*> streams;
};

Quarantine& quarantine() {
  static Quarantine* q = new Quarantine;  // never destroyed: kernels may outlive static destructors
  return *q;
}

}  // namespace

// What the ranks of one job share to stop together: the first failure, and each rank's
// control block, whose abort word makes that rank's device waits stop waiting.
struct Job {
  std::mutex mu;
  std::string failure;  // "rank r: why"
  std::atomic<bool> failed{false};
  // A rank whose GPU work did not stop (after an abort, or past the host timeout): the
  // process cannot tear its contexts down under a running kernel, so run() ends it.
  std::atomic<bool> stuck{false};
  std::string stuck_why;
  std::vector<device::Control*> controls;

  void add(device::Control* c) {
    std::lock_guard<std::mutex> lock(mu);
    controls.push_back(c);
    if (failed.load()) __atomic_store_n(&c->abort, 1u, __ATOMIC_RELEASE);
  }
  void remove(device::Control* c) {
    std::lock_guard<std::mutex> lock(mu);
    std::erase(controls, c);
  }
  // Records the first failure and stops every rank's device waits.
  void fail(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu);
    if (failure.empty()) failure = why;
    failed.store(true);
    for (device::Control* c : controls) __atomic_store_n(&c->abort, 1u, __ATOMIC_RELEASE);
  }
  std::string why() {
    std::lock_guard<std::mutex> lock(mu);
    return failure;
  }
};

// The host backend hears of each host collective as every rank enters and leaves it:
// its deadlock check counts a rank in a collective as blocked, and its race check takes
// collectives as barrier edges.
class WatchedBootstrap final : public Bootstrap {
 public:
  explicit WatchedBootstrap(std::unique_ptr<Bootstrap> inner) : inner_(std::move(inner)) {}
  // From here on, collectives are edges of `ctx`'s job (once its heap exists).
  void watch(const device::Context* ctx) { ctx_ = ctx; }

  int rank() const override { return inner_->rank(); }
  int world() const override { return inner_->world(); }
  int local_rank() const override { return inner_->local_rank(); }
  bool single_process() const override { return inner_->single_process(); }
  const char* name() const override { return inner_->name(); }
  void barrier() override {
    Edge e(ctx_);
    inner_->barrier();
  }
  void allgather(const void* mine, void* all, std::size_t bytes) override {
    Edge e(ctx_);
    inner_->allgather(mine, all, bytes);
  }
  void broadcast(void* data, std::size_t bytes, int root) override {
    Edge e(ctx_);
    inner_->broadcast(data, bytes, root);
  }
  void teardown_barrier() override {
    Edge e(ctx_);
    inner_->teardown_barrier();
  }
  void abort(std::string_view why) override { inner_->abort(why); }

 private:
  struct Edge {
    const device::Context* ctx;
    explicit Edge(const device::Context* c) : ctx(c) {
      if (ctx) backend::active().host_collective(*ctx, true);
    }
    ~Edge() {
      if (ctx) backend::active().host_collective(*ctx, false);
    }
  };
  std::unique_ptr<Bootstrap> inner_;
  const device::Context* ctx_ = nullptr;
};

struct Context::Impl {
  std::unique_ptr<Bootstrap> boot;
  std::shared_ptr<Job> job;
  double host_timeout = 0;
  device::Control* control = nullptr;  // host-mapped (see device::Control)
  std::unique_ptr<Tracer> tracer;      // Options::trace
  std::string trace_path;
  int device = -1;
  std::string device_name;
  int sms = 0;
  DriverContextHandle* driver_ctx = nullptr;  // the device's primary context, retained
  Stream stream = nullptr;
  std::unique_ptr<SymmetricHeap> heap;
  std::unique_ptr<HeapAllocator> alloc;
  device::Context dctx{};
  Module runtime;
  // Why the backend has no runtime kernels (backend::MissingRuntimeKernelsError; hip),
  // else empty: the context works, and each feature that needs one of them says this.
  std::string runtime_missing;
  std::map<std::string, std::shared_ptr<void>> attachments;  // Context::attachment
  Kernel fill_u64, barrier, arange[kNumDTypes], random[kNumDTypes];

  Impl(std::unique_ptr<Bootstrap> b, const Options& opt, std::shared_ptr<Job> j)
      : boot(std::move(b)), job(std::move(j)), host_timeout(opt.host_timeout) {
    auto& bk = backend::active();
    const int ndev = bk.device_count();
    if (ndev == 0) throw NoDeviceError(std::string("no GPU found: the ") + bk.name() + " backend reports no device");
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
    if (auto* watched = dynamic_cast<WatchedBootstrap*>(boot.get())) watched->watch(&dctx);
    void* control_device = nullptr;
    control = static_cast<device::Control*>(bk.host_alloc_mapped(sizeof(device::Control), &control_device));
    dctx.control = static_cast<device::Control*>(control_device);
    // 0 is forever; any other timeout, however short, is at least a nanosecond (a
    // sub-nanosecond one rounded to 0 and waited forever).
    dctx.wait_timeout_ns = opt.wait_timeout > 0
                               ? std::max<unsigned long long>(1, static_cast<unsigned long long>(std::ceil(opt.wait_timeout * 1e9)))
                               : 0;
    job->add(control);

    try {
      runtime.impl_ = runtime_module_impl({embedded::runtime_kernels(), embedded::runtime_kernels_amdgpu()},
                                          "libiris runtime kernels");
    } catch (const backend::MissingRuntimeKernelsError& e) {
      runtime_missing = e.what();
      log_debug("rank ", boot->rank(), ": ", runtime_missing);
    }
    if (runtime) {
      fill_u64 = runtime.kernel("iris_fill_u64");
      barrier = runtime.kernel("iris_device_barrier");
      for (int i = 0; i < kNumDTypes; ++i) {
        const std::string dt(dtype_name(kAllDTypes[i]));
        arange[i] = runtime.kernel("iris_arange_" + dt);
        random[i] = runtime.kernel("iris_random_" + dt);
      }
    }
    if (!opt.trace.empty()) start_trace(opt.trace);
    boot->barrier();
    log_info("rank ", boot->rank(), "/", boot->world(), " on GPU ", device, " (", device_name, ", ", sms,
             " SMs, the ", bk.name(), " backend), bootstrap ", boot->name());
  }

  ~Impl() {
    auto& bk = backend::active();
    // Peers may still read or write this heap: wait for everyone before freeing it
    // (even when this stream reports an error). Not again after a wait gave up on it:
    // that would wait a second full timeout for the same kernel.
    if (!gave_up) {
      try {
        wait_stream(stream);
      } catch (const std::exception&) {
      }
    }
    finish_trace();
    try {
      boot->teardown_barrier();
    } catch (const std::exception&) {
    }
    runtime = Module();
    attachments.clear();
    if (control) job->remove(control);
    if (job->failed.load() || !quiet) {
      // A peer's kernels may still touch this heap (or this rank's own, if its stream
      // never drained): leave the memory to the process's end rather than free it
      // under them.
      Quarantine& q = quarantine();
      std::lock_guard<std::mutex> lock(q.mu);
      q.heaps.push_back(std::move(heap));
      q.tracers.push_back(std::move(tracer));  // its ring too: a kernel may still write events into it
      q.controls.push_back(control);
      q.streams.push_back(stream);
      log_debug("rank ", boot->rank(), ": the job failed; its heap is left allocated until the process ends");
      return;
    }
    heap.reset();
    bk.host_free_mapped(control);
    if (stream) bk.stream_destroy(stream);
    if (driver_ctx) bk.release_primary_context(device);
  }

  // Waits for `s` to finish, watching for a peer's failure and for host_timeout, then
  // reports a device wait that gave up or an abort (both throw iris::Error).
  void wait_stream(StreamHandle* s) {
    auto& bk = backend::active();
    if (!bk.stream_query(s)) {
      using clock = std::chrono::steady_clock;
      const auto start = clock::now();
      auto nap = std::chrono::microseconds(5);
      clock::time_point abort_seen{};
      while (!bk.stream_query(s)) {
        const auto now = clock::now();
        if (job->failed.load() && abort_seen == clock::time_point{}) abort_seen = now;
        if (abort_seen != clock::time_point{} && now - abort_seen > kAbortGrace) {
          quiet = false;
          gave_up = true;
          mark_stuck("its GPU work did not stop " + std::to_string(kAbortGrace.count()) + " s after the job failed");
          throw Error("rank " + std::to_string(boot->rank()) + " stopped because " + job->why() +
                      "; this rank's GPU work has not stopped " + std::to_string(kAbortGrace.count()) +
                      " s later (a spin that does not watch the abort word: a wait_until without a context?)");
        }
        if (host_timeout > 0 && std::chrono::duration<double>(now - start).count() > host_timeout) {
          quiet = false;
          gave_up = true;
          mark_stuck("its GPU work was still running after the host timeout (" + seconds_text(host_timeout) + ")");
          throw Error("rank " + std::to_string(boot->rank()) + ": waited " + seconds_text(host_timeout) +
                      " for this rank's GPU work to finish and it has not: a kernel is still running. If it waits "
                      "on a flag, check who should set it; if it is just long, raise Options::host_timeout "
                      "(IRIS_HOST_TIMEOUT; 0 waits forever)");
        }
        std::this_thread::sleep_for(nap);
        if (nap < std::chrono::milliseconds(1)) nap *= 2;
      }
    }
    check_control();
  }

  void check_control() const {
    if (__atomic_load_n(&control->fault, __ATOMIC_ACQUIRE) == 2) {
      throw Error(describe_gave_up(boot->rank(), control->wait, heap->bytes()));
    }
    if (__atomic_load_n(&control->abort, __ATOMIC_RELAXED) && job->failed.load()) {
      const std::string stood =
          __atomic_load_n(&control->fault, __ATOMIC_ACQUIRE) == 3 ? describe_ended(control->wait, heap->bytes()) : "";
      throw Error("rank " + std::to_string(boot->rank()) + " stopped because " + job->why() +
                  " (this rank's device waits were ended" + stood + "; its results are not meaningful)");
    }
  }

  bool quiet = true;  // false when this rank's stream may still be running
  bool gave_up = false;  // a wait for this rank's stream gave up: its GPU work is stuck

  void mark_stuck(const std::string& why) {
    std::lock_guard<std::mutex> lock(job->mu);
    if (!job->stuck.load()) job->stuck_why = "rank " + std::to_string(boot->rank()) + ": " + why;
    job->stuck.store(true);
  }

  static constexpr std::size_t kTraceEvents = std::size_t{1} << 17;

  void start_trace(const std::string& path) {
    auto& bk = backend::active();
    trace_path = path;
    tracer = std::make_unique<Tracer>(boot->rank(), device, kTraceEvents);
    dctx.trace = tracer->ring();
    // Device time against host time: one kernel reads %globaltimer between two host stamps.
    require_runtime_kernels("tracing (Options::trace, IRIS_TRACE)");
    Kernel clock = runtime.kernel("iris_trace_clock");
    unsigned long long* slot = tracer->clock_slot();
    void* args[] = {&dctx, &slot};
    const std::int64_t before = Context::trace_clock_ns();
    bk.launch(clock.handle(), Dim3(1), Dim3(1), 0, stream, args, clock.name());
    bk.stream_synchronize(stream);
    tracer->calibrate(before, Context::trace_clock_ns());
  }

  // Collects this rank's trace; rank 0 writes everyone's. After a failure no rank can
  // count on the others: each prints its last events and writes its own file.
  void finish_trace() {
    if (!tracer) return;
    const int r = boot->rank();
    try {
      tracer->collect();
    } catch (const std::exception& e) {
      log_warn("rank ", r, ": the trace could not be read back: ", e.what());
      return;
    }
    auto write = [&](const std::string& path, const std::vector<std::string>& parts) {
      // Never through a symbolic link: IRIS_TRACE pointed at a link would truncate
      // whatever the link names.
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0) {
        log_warn("rank ", r, ": cannot write the trace to ", path, ": ",
                 errno == ELOOP ? std::string("it is a symbolic link, which the trace does not follow")
                                : std::string(std::strerror(errno)));
        return;
      }
      const std::string text = merge_trace(parts);
      std::size_t done = 0;
      while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      ::close(fd);
      if (done < text.size()) {
        log_warn("rank ", r, ": cannot write the trace to ", path);
      } else {
        log_info("rank ", r, ": wrote the trace to ", path);
      }
    };
    if (!job->failed.load() && quiet) {
      try {
        const std::string mine = tracer->events_json();
        const unsigned long long n = mine.size();
        std::vector<unsigned long long> sizes(static_cast<std::size_t>(boot->world()));
        boot->allgather(&n, sizes.data(), sizeof n);
        const std::size_t most = static_cast<std::size_t>(*std::max_element(sizes.begin(), sizes.end()));
        std::string padded = mine;
        padded.resize(most, ' ');
        std::string all(most * sizes.size(), ' ');
        boot->allgather(padded.data(), all.data(), most);
        if (r == 0) {
          std::vector<std::string> parts;
          for (std::size_t i = 0; i < sizes.size(); ++i) parts.push_back(all.substr(i * most, sizes[i]));
          write(trace_path, parts);
        }
        return;
      } catch (const std::exception&) {
        // A peer failed meanwhile: fall through to this rank's own report.
      }
    }
    log(LogLevel::error, "rank " + std::to_string(r) + ": the last trace events before the failure (time relative to "
                         "the last one):\n" + tracer->last_events(16));
    write(trace_path + ".rank" + std::to_string(r) + ".json", {tracer->events_json()});
  }

  // Times a host span for the trace when tracing is on.
  struct Span {
    Tracer* t;
    std::int64_t begin;
    explicit Span(Tracer* tracer) : t(tracer), begin(tracer ? Context::trace_clock_ns() : 0) {}
    void end(std::string_view name) {
      if (t) t->span(name, begin, Context::trace_clock_ns());
    }
  };
  std::size_t offset_of(const void* p) const {
    return static_cast<std::size_t>(static_cast<const char*>(p) - heap->local_base());
  }
  bool in_heap(const void* p) const {
    const char* c = static_cast<const char*>(p);
    return c >= heap->local_base() && c < heap->local_base() + heap->bytes();
  }
  bool in_heap(const void* p, std::size_t bytes) const {
    const char* c = static_cast<const char*>(p);
    const std::size_t all = heap->bytes();
    return c >= heap->local_base() && bytes <= all && static_cast<std::size_t>(c - heap->local_base()) <= all - bytes;
  }
  // A host copy of `bytes` at `device`: inside the heap to its end, where it starts there.
  void check_copy(const char* what, const void* device, std::size_t bytes) const {
    if (!in_heap(device) || in_heap(device, bytes)) return;
    throw Error(std::string(what) + ": " + std::to_string(bytes) + " bytes from heap offset " +
                std::to_string(offset_of(device)) + " run past the end of the symmetric heap (" +
                std::to_string(heap->bytes()) + " bytes)");
  }

  // Throws iris::Error naming `feature` when the backend has no runtime kernels.
  void require_runtime_kernels(std::string_view feature) const {
    if (runtime_missing.empty()) return;
    throw Error(std::string(feature) + " needs one of libiris's own kernels, which the " + backend::active().name() +
                " backend cannot run: " + runtime_missing);
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

std::shared_ptr<void> Context::attachment(const std::string& key, const std::function<std::shared_ptr<void>()>& make) {
  auto it = impl_->attachments.find(key);
  if (it == impl_->attachments.end()) it = impl_->attachments.emplace(key, make()).first;
  return it->second;
}

int Context::rank() const { return impl_->boot->rank(); }
int Context::world() const { return impl_->boot->world(); }
int Context::device() const { return impl_->device; }
const std::string& Context::device_name() const { return impl_->device_name; }
int Context::multiprocessors() const { return impl_->sms; }
const char* Context::bootstrap_name() const { return impl_->boot->name(); }
Stream Context::stream() const { return impl_->stream; }
const device::Context& Context::device_context() const { return impl_->dctx; }

void* Context::heap_alloc(std::size_t bytes, std::size_t alignment) {
  Impl::Span span(impl_->tracer.get());
  void* p = heap_alloc_collective(bytes, alignment);
  if (span.t) span.end("heap_alloc " + std::to_string(bytes) + " B");
  return p;
}

void* Context::heap_alloc_collective(std::size_t bytes, std::size_t alignment) {
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
bool Context::in_heap(const void* ptr, std::size_t bytes) const { return impl_->in_heap(ptr, bytes); }

void* Context::translate(const void* ptr, int to) const {
  if (to < 0 || to >= world()) {
    throw Error("rank " + std::to_string(to) + " is out of range [0, " + std::to_string(world()) + ")");
  }
  if (!impl_->in_heap(ptr)) throw Error("translate: the pointer is not in this rank's symmetric heap");
  return impl_->heap->base(to) + impl_->offset_of(ptr);
}

void* Context::alloc_tensor(const Shape& shape, DType dtype, std::size_t* numel) {
  auto shape_text = [&] {
    std::string t = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + std::to_string(shape[i]);
    return t + "]";
  };
  std::size_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw Error("tensor shape " + shape_text() + " has a negative extent (" + std::to_string(d) + ")");
    if (__builtin_mul_overflow(n, static_cast<std::size_t>(d), &n)) {
      throw Error("tensor shape " + shape_text() + " has more elements than 64 bits can count");
    }
  }
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(n, dtype_size(dtype), &bytes)) {
    throw Error("tensor shape " + shape_text() + " of " + std::string(dtype_name(dtype)) + " needs " +
                std::to_string(n) + " x " + std::to_string(dtype_size(dtype)) + " bytes, more than 64 bits can count");
  }
  *numel = n;
  return heap_alloc(bytes);
}

void Context::fill(void* ptr, DType dtype, std::size_t n, double value) {
  const std::uint64_t bits = dtype_bits(dtype, value);
  switch (dtype_size(dtype)) {
    case 2:
    case 4:
      backend::active().memset_async(ptr, static_cast<std::uint32_t>(bits), dtype_size(dtype), n, impl_->stream);
      break;
    default: {
      impl_->require_runtime_kernels("Context::fill of 8-byte elements");
      unsigned long long nn = n, b = bits;
      impl_->launch_simple(impl_->fill_u64, n, {const_cast<device::Context*>(&impl_->dctx), &ptr, &nn, &b});
    }
  }
}

void Context::fill_arange(void* ptr, DType dtype, std::size_t n) {
  impl_->require_runtime_kernels("Context::fill_arange");
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
  impl_->require_runtime_kernels("Context::fill_random");
  unsigned long long nn = n;
  // Mix the rank in, so ranks draw different numbers from the same seed.
  unsigned long long s = seed * 0x100000001b3ull + static_cast<unsigned long long>(rank()) + 1;
  long long l = lo, h = hi;
  impl_->launch_simple(impl_->random[dtype_index(dtype)], n,
                       {const_cast<device::Context*>(&impl_->dctx), &ptr, &nn, &kind, &s, &l, &h});
}

void Context::copy_to_host(void* host, const void* device, std::size_t bytes) {
  impl_->check_copy("copy_to_host", device, bytes);
  backend::active().copy_async(host, device, bytes, impl_->stream);
  synchronize();
}

void Context::copy_from_host(void* device, const void* host, std::size_t bytes) {
  impl_->check_copy("copy_from_host", device, bytes);
  backend::active().copy_async(device, host, bytes, impl_->stream);
  synchronize();
}

void Context::synchronize() {
  Impl::Span span(impl_->tracer.get());
  impl_->wait_stream(impl_->stream);
  span.end("synchronize");
}

void Context::barrier() {
  synchronize();
  Impl::Span span(impl_->tracer.get());
  impl_->boot->barrier();
  span.end("barrier");
}

const char* Context::backend() const { return backend::active().name(); }
bool Context::on_host() const { return std::string_view(backend()) == "host"; }

bool Context::tracing() const { return impl_->tracer != nullptr; }

void Context::trace_span(std::string_view name, std::int64_t begin_ns, std::int64_t end_ns) {
  if (impl_->tracer) impl_->tracer->span(name, begin_ns, end_ns);
}

std::int64_t Context::trace_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Context::trace_kernel(const std::string& name) {
  if (impl_->tracer) impl_->tracer->name_kernel(name);
}

void Context::device_barrier(Stream stream) {
  impl_->require_runtime_kernels("Context::device_barrier (and the collectives and fused ops, which use it)");
  char* base = impl_->heap->local_base();
  void* flags = base + kBarrierFlagsOffset;
  void* epoch = base + kBarrierEpochOffset;
  void* args[] = {const_cast<device::Context*>(&impl_->dctx), &flags, &epoch};
  Impl::Span span(impl_->tracer.get());
  backend::active().launch(impl_->barrier.handle(), Dim3(1), Dim3(32), 0, stream ? stream : impl_->stream, args,
                           impl_->barrier.name());
  span.end("device_barrier (enqueue)");
}

void Context::broadcast_host(void* data, std::size_t bytes, int root) { impl_->boot->broadcast(data, bytes, root); }

void Context::all_gather_host(const void* mine, void* all, std::size_t bytes) {
  impl_->boot->allgather(mine, all, bytes);
}

void Context::broadcast(void* symmetric_ptr, std::size_t bytes, int root) {
  if (root < 0 || root >= world()) {
    throw Error("broadcast root " + std::to_string(root) + " is out of range [0, " + std::to_string(world()) + ")");
  }
  if (!impl_->in_heap(symmetric_ptr, bytes)) {
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
  Impl::Span span(impl_->tracer.get());
  bk.launch(kernel.handle(), cfg.grid, cfg.block, cfg.shared_bytes, cfg.stream ? cfg.stream : impl_->stream, args,
            kernel.name());
  if (span.t) span.end("launch " + kernel.name());
}

int device_count() {
  try {
    return backend::active().device_count();
  } catch (const Error&) {  // NoDeviceError, or the driver failing to count
    return 0;
  }
}

namespace {
// What a rank whose body threw something other than a std::exception reports (it would
// otherwise end the process through std::terminate, with no word on which rank).
constexpr const char* kNotAnException =
    "the rank's body threw a value that is not a std::exception (such as `throw 42`); throw iris::Error or "
    "another std::exception to say what went wrong";
}  // namespace

int run(const Options& options, const std::function<void(Context&)>& body) {
  options.validate();
  backend::select(options.backend);
  backend::active().set_race_check(options.check_races);
  // The host backend runs ranks as threads of one process: an MPI launcher's variables
  // (a stray PMI_SIZE in the environment, or mpirun itself) do not make it an MPI job.
  const bool host = std::string_view(backend::active().name()) == "host";
  if (host && launched_by_mpi()) {
    log(LogLevel::warn, "the host backend runs its ranks as threads of this process; the MPI launcher's "
                        "environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE, ...) is ignored");
  }
  if (!host && launched_by_mpi()) {
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
    auto job = std::make_shared<Job>();
    try {
      ctx.reset(new Context(std::make_unique<Context::Impl>(std::move(boot), options, job)));
      body(*ctx);
    } catch (const std::exception& e) {
      log(LogLevel::error, e.what());
      abort_mpi_job();  // peers may be blocked in a collective with this rank
    } catch (...) {
      log(LogLevel::error, kNotAnException);
      abort_mpi_job();
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
  auto job = std::make_shared<Job>();
  std::atomic<int> failures{0};
  std::atomic<int> finished{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      set_log_rank(r, world);
      std::unique_ptr<Context> ctx;
      std::string why;
      bool failed = false;
      try {
        std::unique_ptr<Bootstrap> boot = make_thread_bootstrap(group, r);
        if (backend::active().watches_collectives()) boot = std::make_unique<WatchedBootstrap>(std::move(boot));
        ctx.reset(new Context(std::make_unique<Context::Impl>(std::move(boot), options, job)));
        body(*ctx);
      } catch (const std::exception& e) {
        failed = true;
        why = e.what();
      } catch (...) {
        failed = true;
        why = kNotAnException;
      }
      if (failed) {
        log(LogLevel::error, why);
        // Wake the other ranks (host collectives and device waits) before this
        // context's teardown waits for them.
        // Most messages already start with "rank r: "; say it once.
        const std::string tag = "rank " + std::to_string(r) + ": ";
        if (why.rfind(tag, 0) == 0) why.erase(0, tag.size());
        const bool first = !job->failed.load();
        job->fail("rank " + std::to_string(r) + " failed: " + why);
        if (first) abort_thread_group(*group, tag + why);
        ++failures;
      }
      ctx.reset();
      set_log_rank(-1, 0);
      ++finished;
    });
  }
  // The watchdog: a rank whose kernel does not stop may also never leave its body (a
  // module with a running kernel cannot be unloaded), so do not wait for every thread
  // once one is stuck: give the others a moment to report, then end the process.
  using wd_clock = std::chrono::steady_clock;
  wd_clock::time_point stuck_seen{};
  while (finished.load() < world) {
    if (job->stuck.load()) {
      if (stuck_seen == wd_clock::time_point{}) stuck_seen = wd_clock::now();
      if (wd_clock::now() - stuck_seen > std::chrono::seconds(2)) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!job->stuck.load()) {
    for (auto& t : threads) t.join();
  }
  if (job->stuck.load()) {
    // As PyTorch's watchdog does: a kernel that does not stop keeps the GPU's context,
    // and the process with it, alive however long it runs. Say so and end the process.
    log(LogLevel::error, "ending the process (exit status 1): " + job->stuck_why +
                             "; a kernel still running cannot be stopped from the host");
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  }
  return failures.load() ? 1 : 0;
}

}  // namespace iris
