// Device waits on the host backend: the semantics of iris::device::wait_until(ctx, ...)
// (give up after ctx.wait_timeout_ns or when the job aborts, recording what was awaited
// in ctx.control) for code that runs on CPU threads.
#pragma once

#include "iris/device/context.hpp"
#include "iris/device/signal.hpp"

namespace iris::host {

// Waits until `*flag <cmp> value` (acquire), returns the value seen; a wait that gives
// up returns the last value seen, as on a GPU.
unsigned long long wait_until(const device::Context& ctx, const unsigned long long* flag, device::Cmp cmp,
                              unsigned long long value, const device::WaitSite& site);

}  // namespace iris::host
