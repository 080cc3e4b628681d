// What iris-bench ccl and ops share (see common.hpp).
#include "common.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <vector>

#include "iris/error.hpp"
#include "iris/timing.hpp"

namespace iris::bench {

double batch_us(Context& ctx, const std::function<void()>& call, int warmup, int iters, double* host_us) {
  for (int i = 0; i < warmup; ++i) call();
  ctx.barrier();
  // On the device too: a rank whose host thread reaches its batch late would otherwise
  // show in every other rank's first call, which waits for it.
  if (!ctx.on_host()) ctx.device_barrier();
  double ms = 0;
  if (ctx.on_host()) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) call();
    ctx.synchronize();
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  } else {
    EventTimer t(ctx.stream());
    t.start();
    const auto h0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) call();
    const double host = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count() / iters;
    ms = t.stop();
    if (host_us) {
      const std::vector<double> hosts = ctx.all_gather(host);
      *host_us = *std::max_element(hosts.begin(), hosts.end());
    }
  }
  const double mine = ms * 1e3 / iters;
  const std::vector<double> all = ctx.all_gather(mine);
  ctx.barrier();
  return *std::max_element(all.begin(), all.end());
}

double graph_batch_us(Context& ctx, const std::function<void()>& call, int warmup, int iters) {
  Graph graph(ctx.stream(), [&] {
    for (int i = 0; i < iters; ++i) call();
  });
  for (int i = 0; i < std::max(1, warmup); ++i) graph.launch(ctx.stream());
  ctx.synchronize();
  ctx.barrier();
  ctx.device_barrier();  // see batch_us
  EventTimer t(ctx.stream());
  t.start();
  graph.launch(ctx.stream());
  const double mine = t.stop() * 1e3 / iters;
  const std::vector<double> all = ctx.all_gather(mine);
  ctx.barrier();
  return *std::max_element(all.begin(), all.end());
}

std::string utc_now() {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return date;
}

void write_json(const std::string& path, const nlohmann::json& js) {
  std::ofstream f(path);
  f << js.dump(2) << "\n";
  if (!f) throw Error("cannot write " + path);
  std::printf("# JSON written to %s\n", path.c_str());
}

}  // namespace iris::bench
