// EventTimer and Graph over the dlopen'd driver (see iris/timing.hpp).
#include "iris/timing.hpp"

#include <cuda.h>

#include "backend/cuda/cuda_driver.hpp"

namespace iris {

EventTimer::EventTimer(Stream stream) : stream_(stream) {
  IRIS_CU(cuEventCreate(&begin_, CU_EVENT_DEFAULT));
  IRIS_CU(cuEventCreate(&end_, CU_EVENT_DEFAULT));
}

EventTimer::~EventTimer() {
  const auto& cu = cuda::driver();
  if (begin_) cu.cuEventDestroy(begin_);
  if (end_) cu.cuEventDestroy(end_);
}

void EventTimer::start() { IRIS_CU(cuEventRecord(begin_, stream_)); }

float EventTimer::stop() {
  IRIS_CU(cuEventRecord(end_, stream_));
  IRIS_CU(cuEventSynchronize(end_));
  float ms = 0;
  IRIS_CU(cuEventElapsedTime(&ms, begin_, end_));
  return ms;
}

Graph::Graph(Stream stream, const std::function<void()>& enqueue) {
  IRIS_CU(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  try {
    enqueue();
  } catch (...) {
    CUgraph g = nullptr;
    cuda::driver().cuStreamEndCapture(stream, &g);
    if (g) cuda::driver().cuGraphDestroy(g);
    throw;
  }
  CUgraph graph = nullptr;
  IRIS_CU(cuStreamEndCapture(stream, &graph));
  CUresult rc = cuda::driver().cuGraphInstantiate(&exec_, graph, 0);
  cuda::driver().cuGraphDestroy(graph);
  cuda::check(rc, "cuGraphInstantiate");
}

Graph::~Graph() {
  if (exec_) cuda::driver().cuGraphExecDestroy(exec_);
}

void Graph::launch(Stream stream) { IRIS_CU(cuGraphLaunch(exec_, stream)); }

}  // namespace iris
