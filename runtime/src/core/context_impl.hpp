// A rank's Context state (Context::Impl), shared by the files that implement Context:
// core/context.cpp (the rest), core/context_impl.cpp (setting a rank up and down,
// waiting for its stream), heap/context_heap.cpp (allocations, fills),
// trace/context_trace.cpp (tracing) and job/run.cpp (iris::run). Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.hpp"
#include "heap/heap_allocator.hpp"
#include "heap/symmetric_heap.hpp"
#include "iris/context.hpp"
#include "iris/error.hpp"
#include "job/bootstrap.hpp"
#include "job/job.hpp"
#include "trace/trace.hpp"

namespace iris::embedded {
std::span<const std::byte> runtime_kernels();
std::span<const std::byte> runtime_kernels_amdgpu();
}

namespace iris {

// The first bytes of every heap belong to libiris: device-barrier flags and epoch.
inline constexpr std::size_t kReservedBytes = 64 << 10;
inline constexpr std::size_t kBarrierFlagsOffset = 0;     // u64[kMaxRanks]
inline constexpr std::size_t kBarrierEpochOffset = 1024;  // u64

inline constexpr int kNumDTypes = 7;
inline constexpr DType kAllDTypes[kNumDTypes] = {DType::f32, DType::f16, DType::bf16, DType::i32,
                                          DType::i64, DType::u32, DType::u64};

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
  // Context::explain_waits: libraries' words for waits on their flags.
  std::vector<std::function<std::string(const void*, std::uint64_t, const Context::WaitRead&)>> explainers;
  std::string explain(const device::WaitFault& f) const;
  // explain() of the wait this rank's control block holds, once one is recorded; else "".
  std::string explain_recorded() const;
  std::vector<StreamHandle*> sides;  // Context::side_stream(i), each made on first use
  EventHandle* order_event = nullptr;  // Context::order's, made on first use
  Kernel fill_u64, barrier, arange[kNumDTypes], random[kNumDTypes];
  Impl(std::unique_ptr<Bootstrap> b, const Options& opt, std::shared_ptr<Job> j);
  ~Impl();

  // Waits for `s` to finish, watching for a peer's failure and for host_timeout, then
  // reports a device wait that gave up or an abort (both throw iris::Error).
  void wait_stream(StreamHandle* s);
  void check_control() const;

  bool quiet = true;  // false when this rank's stream may still be running
  bool gave_up = false;  // a wait for this rank's stream gave up: its GPU work is stuck

  void mark_stuck(const std::string& why);

  static constexpr std::size_t kTraceEvents = std::size_t{1} << 17;

  void start_trace(const std::string& path);  // trace/context_trace.cpp
  // Collects this rank's trace; rank 0 writes everyone's. After a failure no rank can
  // count on the others: each prints its last events and writes its own file.
  void finish_trace();

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

}  // namespace iris
