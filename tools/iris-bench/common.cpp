// iris-bench's batch timing (see timing.hpp).
#include "timing.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "iris/timing.hpp"

namespace iris::bench {

double batch_us(Context& ctx, const std::function<void()>& call, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) call();
  ctx.barrier();
  double ms = 0;
  if (ctx.on_host()) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) call();
    ctx.synchronize();
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  } else {
    EventTimer t(ctx.stream());
    t.start();
    for (int i = 0; i < iters; ++i) call();
    ms = t.stop();
  }
  const double mine = ms * 1e3 / iters;
  const std::vector<double> all = ctx.all_gather(mine);
  ctx.barrier();
  return *std::max_element(all.begin(), all.end());
}

}  // namespace iris::bench
