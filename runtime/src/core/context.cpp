// A rank's Context: its identity, copies, synchronization, host and device barriers,
// modules and launches. Its state is Context::Impl (core/context_impl.hpp); setting it
// up is core/context_impl.cpp, the heap heap/context_heap.cpp, the trace
// trace/context_trace.cpp, and iris::run job/run.cpp.
#include "iris/context.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "backend/backend.hpp"
#include "iris/error.hpp"
#include "launch/module_impl.hpp"
#include "core/context_impl.hpp"

namespace iris {

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

void Context::copy_async(void* dst, const void* src, std::size_t bytes, Stream stream) {
  if (bytes) backend::active().copy_device_async(dst, src, bytes, stream ? stream : impl_->stream);
}

void Context::zero_async(void* ptr, std::size_t bytes, Stream stream) { set_async(ptr, 0, bytes, stream); }

void Context::set_async(void* ptr, unsigned char value, std::size_t bytes, Stream stream) {
  if (bytes) backend::active().memset_async(ptr, value, 1, bytes, stream ? stream : impl_->stream);
}

void Context::copy_2d_async(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                            std::size_t height, Stream stream) {
  if (width > dst_pitch || width > src_pitch) {
    throw Error("copy_2d_async: rows of " + std::to_string(width) + " bytes do not fit pitches of " +
                std::to_string(dst_pitch) + " (destination) and " + std::to_string(src_pitch) + " (source) bytes");
  }
  if (width && height) {
    backend::active().copy_2d_async(dst, dst_pitch, src, src_pitch, width, height, stream ? stream : impl_->stream);
  }
}

void Context::wait_value(const std::uint64_t* word, std::uint64_t value, Stream stream) {
  backend::active().wait_value_async(word, value, stream ? stream : impl_->stream);
}

void Context::explain_waits(std::function<std::string(const void*, std::uint64_t, const WaitRead&)> explain) {
  impl_->explainers.push_back(std::move(explain));
}

Stream Context::side_stream(int i) {
  if (i < 0 || i >= kSideStreams) {
    throw Error("side_stream(" + std::to_string(i) + "): a rank has side streams 0 .. " + std::to_string(kSideStreams - 1));
  }
  auto& sides = impl_->sides;
  if (sides.size() <= static_cast<std::size_t>(i)) sides.resize(static_cast<std::size_t>(i) + 1, nullptr);
  if (!sides[static_cast<std::size_t>(i)]) sides[static_cast<std::size_t>(i)] = backend::active().stream_create();
  return sides[static_cast<std::size_t>(i)];
}

void Context::order(Stream before, Stream after) {
  auto& bk = backend::active();
  if (!impl_->order_event) impl_->order_event = bk.event_create();
  // The wait takes the event as recorded now: one event serves every order().
  bk.event_record(impl_->order_event, before ? before : impl_->stream);
  bk.stream_wait_event(after ? after : impl_->stream, impl_->order_event);
}

bool Context::capturing(Stream stream) const {
  return backend::active().stream_capturing(stream ? stream : impl_->stream);
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
  try {
    bk.launch(kernel.handle(), cfg.grid, cfg.block, cfg.shared_bytes, cfg.stream ? cfg.stream : impl_->stream, args,
              kernel.name());
  } catch (const Error& e) {
    // A backend that runs the kernel as it launches it (the host backend) ends a
    // deadlocked wait here, having recorded it (fault 4): say what the wait was part
    // of, as synchronize() does for a wait that gave up. Other launch errors carry
    // nothing of an earlier wait.
    const std::string why = impl_->explain_recorded();
    if (why.empty()) throw;
    throw Error(e.what() + why);
  }
  if (span.t) span.end("launch " + kernel.name());
}

}  // namespace iris
