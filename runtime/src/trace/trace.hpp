// One rank's trace (Options::trace): the ring irisc kernels write device events into
// (iris/device/trace.hpp), the host spans libiris records, and their rendering as
// Chrome trace-event JSON, the format Perfetto and chrome://tracing open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "iris/device/trace.hpp"

namespace iris {

class Tracer {
 public:
  // A ring of `capacity` events (a power of two) in the current device's memory.
  Tracer(int rank, int device, std::size_t capacity);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  device::TraceBuffer* ring() const { return ring_; }
  // A device word the clock kernel writes %globaltimer into.
  unsigned long long* clock_slot() const { return clock_slot_; }
  // Reads clock_slot() (written between host times before_ns and after_ns) and
  // aligns device time to the host's.
  void calibrate(std::int64_t before_ns, std::int64_t after_ns);

  void span(std::string_view name, std::int64_t begin_ns, std::int64_t end_ns);
  void name_kernel(const std::string& name);

  // Copies the ring to the host (the rank's GPU work must be finished).
  void collect();
  // This rank's events as comma-separated JSON objects (after collect()).
  std::string events_json() const;
  // The last `n` device events and host spans, a line each, oldest first.
  std::string last_events(std::size_t n) const;

 private:
  struct Span {
    std::string name;
    std::int64_t begin_ns, end_ns;
  };
  std::string kernel_name(unsigned id) const;
  double device_us(unsigned long long t) const;

  int rank_, device_;
  std::size_t capacity_;
  device::TraceBuffer* ring_ = nullptr;
  unsigned long long* clock_slot_ = nullptr;
  std::int64_t offset_ns_ = 0;  // host time - device time
  mutable std::mutex mu_;
  std::vector<Span> spans_;
  std::unordered_map<unsigned, std::string> kernels_;
  std::vector<device::TraceEvent> events_;  // collected, oldest first
  unsigned long long dropped_ = 0;
};

// The whole trace file from every rank's events_json().
std::string merge_trace(std::span<const std::string> parts);

}  // namespace iris
