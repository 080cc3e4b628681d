// What iris-bench ccl and ops share: timing a call the way nccl-tests does, the date
// they stamp their results with, and writing their JSON.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "iris/context.hpp"

namespace iris::bench {

// Microseconds per call: `warmup` calls, then every rank starts a batch of `iters`
// back-to-back calls after a host barrier and a device barrier on its stream (so the
// batch starts together on every GPU, however late a rank's host thread got there);
// the batch's time (CUDA events on the rank's
// stream; std::chrono on the host backend, whose streams run work as it is enqueued)
// over iters, the slowest rank's. Collective.
// `host_us`, where given: the host's time per call to enqueue the batch (slowest rank):
// where it exceeds the device's, back-to-back calls wait for the host.
double batch_us(Context& ctx, const std::function<void()>& call, int warmup, int iters, double* host_us = nullptr);

// The same batch captured once in a CUDA graph and replayed (nccl-tests' -G): one
// launch for the whole batch, so what remains is the device's time per call. The graph
// is replayed `warmup` times (at least once) untimed, then once timed. Collective;
// device backends only.
double graph_batch_us(Context& ctx, const std::function<void()>& call, int warmup, int iters);

// Now, as "2026-11-25 02:42 UTC".
std::string utc_now();

// Writes `js` (indented) to `path` and says so; throws iris::Error when it cannot.
void write_json(const std::string& path, const nlohmann::json& js);

}  // namespace iris::bench
