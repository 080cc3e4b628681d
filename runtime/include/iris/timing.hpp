// Timing device work with events, and graphs of enqueued work (for launch-overhead-free
// replay, e.g. of device barriers and RMA kernels), on the device backend (CUDA events
// and graphs).
#pragma once

#include <functional>

#include "iris/module.hpp"

namespace iris {

// Opaque backend handles (CUevent and CUgraphExec on CUDA; see iris/module.hpp).
struct EventHandle;
struct GraphExecHandle;

// Brackets work on one stream with two events.
class EventTimer {
 public:
  explicit EventTimer(Stream stream);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start();
  // Records the stop event, waits for it, returns milliseconds since start().
  float stop();

 private:
  Stream stream_;
  EventHandle* begin_ = nullptr;
  EventHandle* end_ = nullptr;
};

// A captured, instantiated graph (a CUDA graph).
class Graph {
 public:
  // Captures what `enqueue` puts on `stream` (nothing runs during capture).
  Graph(Stream stream, const std::function<void()>& enqueue);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  void launch(Stream stream);

 private:
  GraphExecHandle* exec_ = nullptr;
};

}  // namespace iris
