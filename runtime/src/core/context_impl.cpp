// Setting a rank's Context up and down, and waiting for its stream (core/context_impl.hpp).
#include "core/context_impl.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "backend/backend.hpp"
#include "job/bootstrap.hpp"
#include "heap/heap_allocator.hpp"
#include "iris/error.hpp"
#include "iris/log.hpp"
#include "iris/size.hpp"
#include "launch/module_impl.hpp"
#include "heap/symmetric_heap.hpp"
#include "job/wait_fault.hpp"

namespace iris {
namespace {

// How long a rank waits for its own GPU work to stop after a peer failed (device waits
// see the abort within milliseconds; only a spin the abort cannot reach takes longer).
constexpr std::chrono::seconds kAbortGrace{10};

}  // namespace

Context::Impl::Impl(std::unique_ptr<Bootstrap> b, const Options& opt, std::shared_ptr<Job> j)
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

Context::Impl::~Impl() {
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
    for (StreamHandle* side : sides) {
      if (side) q.streams.push_back(side);
    }
    log_debug("rank ", boot->rank(), ": the job failed; its heap is left allocated until the process ends");
    return;
  }
  heap.reset();
  bk.host_free_mapped(control);
  if (order_event) bk.event_destroy(order_event);
  for (StreamHandle* side : sides) {
    if (side) bk.stream_destroy(side);
  }
  if (stream) bk.stream_destroy(stream);
  if (driver_ctx) bk.release_primary_context(device);
}

void Context::Impl::wait_stream(StreamHandle* s) {
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

void Context::Impl::check_control() const {
  if (__atomic_load_n(&control->fault, __ATOMIC_ACQUIRE) == 2) {
    throw Error(describe_gave_up(boot->rank(), control->wait, heap->bytes(), explain(control->wait)));
  }
  if (__atomic_load_n(&control->abort, __ATOMIC_RELAXED) && job->failed.load()) {
    const std::string stood =
        __atomic_load_n(&control->fault, __ATOMIC_ACQUIRE) == 3
            ? describe_ended(control->wait, heap->bytes()) + explain(control->wait)
            : "";
    throw Error("rank " + std::to_string(boot->rank()) + " stopped because " + job->why() +
                " (this rank's device waits were ended" + stood + "; its results are not meaningful)");
  }
}

std::string Context::Impl::explain(const device::WaitFault& f) const {
  std::string out;
  if (f.kind == 1 || f.flag_offset >= heap->bytes()) return out;  // the device barrier; not a heap flag
  // The rank's work has stopped (the kernel that gave up ran to its end): a copy on its
  // stream reads what the flags hold now.
  const Context::WaitRead read = [this](const void* device, void* host, std::size_t bytes) {
    if (!in_heap(device, bytes)) return false;
    try {
      auto& bk = backend::active();
      bk.copy_async(host, device, bytes, stream);
      bk.stream_synchronize(stream);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  };
  for (const auto& x : explainers) {
    const std::string why = x(heap->local_base() + f.flag_offset, f.expected, read);
    if (!why.empty()) out += " (" + why + ")";
  }
  return out;
}

std::string Context::Impl::explain_recorded() const {
  const unsigned fault = __atomic_load_n(&control->fault, __ATOMIC_ACQUIRE);
  return fault == 4 ? explain(control->wait) : std::string();
}

void Context::Impl::mark_stuck(const std::string& why) {
  std::lock_guard<std::mutex> lock(job->mu);
  if (!job->stuck.load()) job->stuck_why = "rank " + std::to_string(boot->rank()) + ": " + why;
  job->stuck.store(true);
}

}  // namespace iris
