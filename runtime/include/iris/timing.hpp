// Timing device work with CUDA events, and CUDA graphs of enqueued work (for
// launch-overhead-free replay, e.g. of device barriers and RMA kernels).
#pragma once

#include <functional>

#include "iris/module.hpp"

struct CUevent_st;
struct CUgraphExec_st;

namespace iris {

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
  CUevent_st* begin_ = nullptr;
  CUevent_st* end_ = nullptr;
};

// A captured, instantiated CUDA graph.
class Graph {
 public:
  // Captures what `enqueue` puts on `stream` (nothing runs during capture).
  Graph(Stream stream, const std::function<void()>& enqueue);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  void launch(Stream stream);

 private:
  CUgraphExec_st* exec_ = nullptr;
};

}  // namespace iris
