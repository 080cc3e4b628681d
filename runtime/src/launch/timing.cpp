// EventTimer and Graph on the device backend (see iris/timing.hpp).
#include "iris/timing.hpp"

#include "backend/backend.hpp"

namespace iris {

EventTimer::EventTimer(Stream stream) : stream_(stream) {
  auto& bk = backend::active();
  begin_ = bk.event_create();
  end_ = bk.event_create();
}

EventTimer::~EventTimer() {
  auto& bk = backend::active();
  if (begin_) bk.event_destroy(begin_);
  if (end_) bk.event_destroy(end_);
}

void EventTimer::start() { backend::active().event_record(begin_, stream_); }

float EventTimer::stop() {
  auto& bk = backend::active();
  bk.event_record(end_, stream_);
  bk.event_synchronize(end_);
  return bk.event_elapsed_ms(begin_, end_);
}

Graph::Graph(Stream stream, const std::function<void()>& enqueue) {
  auto& bk = backend::active();
  bk.capture_begin(stream);
  try {
    enqueue();
  } catch (...) {
    bk.capture_abort(stream);
    throw;
  }
  GraphHandle* graph = bk.capture_end(stream);
  try {
    exec_ = bk.graph_instantiate(graph);
  } catch (...) {
    bk.graph_destroy(graph);
    throw;
  }
  bk.graph_destroy(graph);
}

Graph::~Graph() {
  if (exec_) backend::active().graph_exec_destroy(exec_);
}

void Graph::launch(Stream stream) { backend::active().graph_launch(exec_, stream); }

}  // namespace iris
