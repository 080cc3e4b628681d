// Tracing (see trace.hpp): the device ring, host spans, and Chrome trace-event JSON.
#include "trace/trace.hpp"

#include <algorithm>
#include <cstdio>

#include "backend/backend.hpp"
#include "iris/error.hpp"

namespace iris {
namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string us_text(double us) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f", us);
  return buf;
}

const char* kind_name(unsigned kind) {
  switch (static_cast<device::TraceKind>(kind)) {
    case device::TraceKind::program_begin: return "program begin";
    case device::TraceKind::program_end: return "program end";
    case device::TraceKind::put: return "put";
    case device::TraceKind::get: return "get";
    case device::TraceKind::atomic: return "atomic";
    case device::TraceKind::signal: return "signal";
    case device::TraceKind::wait_begin: return "wait begin";
    case device::TraceKind::wait_end: return "wait end";
    case device::TraceKind::barrier_begin: return "barrier begin";
    case device::TraceKind::barrier_end: return "barrier end";
  }
  return "?";
}

// Device events go on one track per program, after the host's track 0.
constexpr int kFirstProgramTrack = 1;

}  // namespace

Tracer::Tracer(int rank, int device, std::size_t capacity) : rank_(rank), device_(device), capacity_(capacity) {
  if (capacity == 0 || (capacity & (capacity - 1)) != 0) throw Error("trace capacity must be a power of two");
  auto& bk = backend::active();
  const std::size_t bytes = offsetof(device::TraceBuffer, events) + capacity * sizeof(device::TraceEvent) + 8;
  void* p = bk.mem_alloc(bytes);
  if (!p) throw Error("rank " + std::to_string(rank) + ": no GPU memory for a trace ring of " + std::to_string(bytes) + " bytes");
  ring_ = static_cast<device::TraceBuffer*>(p);
  clock_slot_ = reinterpret_cast<unsigned long long*>(static_cast<char*>(p) + bytes - 8);
  bk.memset(p, 0, bytes);
  const unsigned long long header[2] = {capacity, 0};
  bk.copy_from_host(ring_, header, sizeof header);
}

Tracer::~Tracer() {
  if (ring_) backend::active().mem_free(ring_);
}

void Tracer::calibrate(std::int64_t before_ns, std::int64_t after_ns) {
  unsigned long long gpu = 0;
  backend::active().copy_to_host(&gpu, clock_slot_, sizeof gpu);
  offset_ns_ = before_ns + (after_ns - before_ns) / 2 - static_cast<std::int64_t>(gpu);
}

void Tracer::span(std::string_view name, std::int64_t begin_ns, std::int64_t end_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  spans_.push_back({std::string(name), begin_ns, end_ns});
}

void Tracer::name_kernel(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  kernels_[device::trace_kernel_id(name.c_str())] = name;
}

std::string Tracer::kernel_name(unsigned id) const {
  auto it = kernels_.find(id);
  if (it != kernels_.end()) return it->second;
  char buf[32];
  std::snprintf(buf, sizeof buf, "kernel #%08x", id);
  return buf;
}

double Tracer::device_us(unsigned long long t) const {
  return static_cast<double>(static_cast<std::int64_t>(t) + offset_ns_) * 1e-3;
}

void Tracer::collect() {
  auto& bk = backend::active();
  unsigned long long header[2] = {0, 0};
  bk.copy_to_host(header, ring_, sizeof header);
  const unsigned long long written = header[1];
  const std::size_t n = static_cast<std::size_t>(std::min<unsigned long long>(written, capacity_));
  std::vector<device::TraceEvent> raw(capacity_);
  bk.copy_to_host(raw.data(), ring_->events, capacity_ * sizeof(device::TraceEvent));
  events_.clear();
  // Oldest first: once the ring has wrapped, the oldest event is the next to overwrite.
  const std::size_t start = written > capacity_ ? static_cast<std::size_t>(written % capacity_) : 0;
  for (std::size_t i = 0; i < n; ++i) {
    const device::TraceEvent& e = raw[(start + i) % capacity_];
    if (e.time_ns != 0) events_.push_back(e);  // slots a thread's chunk left unused
  }
  std::stable_sort(events_.begin(), events_.end(),
                   [](const device::TraceEvent& a, const device::TraceEvent& b) { return a.time_ns < b.time_ns; });
  dropped_ = written > capacity_ ? written - capacity_ : 0;
}

std::string Tracer::events_json() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  auto add = [&](const std::string& e) {
    if (!out.empty()) out += ",\n";
    out += e;
  };
  const std::string pid = std::to_string(rank_);
  add("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"args\":{\"name\":" +
      json_string("rank " + std::to_string(rank_) + " (GPU " + std::to_string(device_) + ")") + "}}");
  add("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + pid + ",\"args\":{\"sort_index\":" + pid + "}}");
  add("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":0,\"args\":{\"name\":\"host\"}}");
  for (const Span& s : spans_) {
    add("{\"name\":" + json_string(s.name) + ",\"cat\":\"host\",\"ph\":\"X\",\"pid\":" + pid + ",\"tid\":0,\"ts\":" +
        us_text(static_cast<double>(s.begin_ns) * 1e-3) + ",\"dur\":" +
        us_text(static_cast<double>(s.end_ns - s.begin_ns) * 1e-3) + "}");
  }
  std::vector<int> named_tracks;
  for (const device::TraceEvent& e : events_) {
    const int tid = kFirstProgramTrack + e.program;
    if (std::find(named_tracks.begin(), named_tracks.end(), tid) == named_tracks.end()) {
      named_tracks.push_back(tid);
      add("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":" + std::to_string(tid) +
          ",\"args\":{\"name\":\"program " + std::to_string(e.program) + "\"}}");
    }
    const std::string kernel = kernel_name(e.kernel);
    const std::string where = "\"pid\":" + pid + ",\"tid\":" + std::to_string(tid) + ",\"ts\":" + us_text(device_us(e.time_ns));
    const std::string line = "\"line\":" + std::to_string(e.line);
    switch (static_cast<device::TraceKind>(e.kind)) {
      case device::TraceKind::program_begin:
      case device::TraceKind::program_end:
        add("{\"name\":" + json_string(kernel) + ",\"cat\":\"device\",\"ph\":\"" +
            (e.kind == static_cast<unsigned>(device::TraceKind::program_begin) ? "B" : "E") + "\"," + where +
            ",\"args\":{" + line + "}}");
        break;
      case device::TraceKind::wait_begin:
      case device::TraceKind::barrier_begin:
        add("{\"name\":" + json_string(std::string(e.kind == static_cast<unsigned>(device::TraceKind::wait_begin) ? "wait" : "barrier") +
                                       " (line " + std::to_string(e.line) + ")") +
            ",\"cat\":\"device\",\"ph\":\"B\"," + where + ",\"args\":{\"kernel\":" + json_string(kernel) + "," + line +
            ",\"expected\":" + std::to_string(e.value) + "}}");
        break;
      case device::TraceKind::wait_end:
      case device::TraceKind::barrier_end:
        add("{\"ph\":\"E\",\"cat\":\"device\"," + where + ",\"args\":{\"seen\":" + std::to_string(e.value) + "}}");
        break;
      default:
        add("{\"name\":" + json_string(std::string(kind_name(e.kind)) + (e.peer >= 0 ? " -> rank " + std::to_string(e.peer) : "")) +
            ",\"cat\":\"device\",\"ph\":\"i\",\"s\":\"t\"," + where + ",\"args\":{\"kernel\":" + json_string(kernel) + "," +
            line + ",\"peer\":" + std::to_string(e.peer) + ",\"value\":" + std::to_string(e.value) + "}}");
    }
  }
  if (dropped_) {
    add("{\"name\":\"trace ring overwrote " + std::to_string(dropped_) + " older device events\",\"ph\":\"i\",\"s\":\"p\",\"pid\":" +
        pid + ",\"tid\":0,\"ts\":" + us_text(events_.empty() ? 0.0 : device_us(events_.front().time_ns)) + "}");
  }
  return out;
}

std::string Tracer::last_events(std::size_t n) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  const std::size_t first = events_.size() > n ? events_.size() - n : 0;
  for (std::size_t i = first; i < events_.size(); ++i) {
    const device::TraceEvent& e = events_[i];
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f us", device_us(e.time_ns) - device_us(events_.back().time_ns));
    out += "  " + std::string(buf) + " " + kernel_name(e.kernel) + " line " + std::to_string(e.line) + " program " +
           std::to_string(e.program) + ": " + kind_name(e.kind);
    if (e.peer >= 0) out += " (rank " + std::to_string(e.peer) + ")";
    out += " value " + std::to_string(e.value) + "\n";
  }
  const std::size_t s0 = spans_.size() > n ? spans_.size() - n : 0;
  for (std::size_t i = s0; i < spans_.size(); ++i) {
    out += "  host: " + spans_[i].name + " (" + us_text(static_cast<double>(spans_[i].end_ns - spans_[i].begin_ns) * 1e-3) + " us)\n";
  }
  return out;
}

std::string merge_trace(std::span<const std::string> parts) {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  for (const std::string& p : parts) {
    if (p.empty()) continue;
    if (!first) out += ",\n";
    out += p;
    first = false;
  }
  return out + "\n]}\n";
}

}  // namespace iris
