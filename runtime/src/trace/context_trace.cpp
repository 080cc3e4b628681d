// A Context's trace (Options::trace, IRIS_TRACE): starting it, writing it at the end,
// and the Context members that feed it.
#include "core/context_impl.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "backend/backend.hpp"
#include "iris/log.hpp"
#include "trace/trace.hpp"

namespace iris {

void Context::Impl::start_trace(const std::string& path) {
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

void Context::Impl::finish_trace() {
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

}  // namespace iris
