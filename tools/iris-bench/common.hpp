// How iris-bench ccl and ops time a call the way nccl-tests does.
#pragma once

#include <functional>

#include "iris/context.hpp"

namespace iris::bench {

// Microseconds per call: `warmup` calls, then every rank starts a batch of `iters`
// back-to-back calls after a host barrier; the batch's time (CUDA events on the rank's
// stream; std::chrono on the host backend, whose streams run work as it is enqueued)
// over iters, the slowest rank's. Collective.
double batch_us(Context& ctx, const std::function<void()>& call, int warmup, int iters);

}  // namespace iris::bench
