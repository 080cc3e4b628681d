// 06_message_passing: every rank sends a message to the next rank (block_put, then a
// release signal) and waits for its acknowledgement (acquire wait), round after round;
// the receiver checks every word of every message on the GPU. Reports the round-trip
// time per message and the payload bandwidth.
#include "iris/embedded.hpp"
#include "sample.hpp"

#include <algorithm>

IRIS_DECLARE_EMBEDDED(sample_kernels)

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  SampleSpec spec{"06_message_passing", "producer/consumer messages over release/acquire flags", 64u << 10};
  return sample_main(argc, argv, spec, [](Context& ctx, const SampleArgs& args) {
    const std::size_t n = std::max<std::size_t>(1, args.bytes / sizeof(std::uint32_t));
    const unsigned rounds = 1000;
    auto inbox = ctx.zeros<std::uint32_t>(n);
    auto outbox = ctx.zeros<std::uint32_t>(n);
    auto errors = ctx.zeros<std::uint32_t>(1);
    Module mod = ctx.load_module(embedded::sample_kernels(), "06_message_passing kernels");
    Kernel k = mod.kernel("ping_pong");
    std::vector<float> times;
    for (int rep = 0; rep < args.warmup + args.iters; ++rep) {
      // Flags restart from zero each repetition; reset them while no kernel runs.
      auto ready = ctx.zeros<std::uint64_t>(1);
      auto ack = ctx.zeros<std::uint64_t>(1);
      ctx.barrier();
      EventTimer timer(ctx.stream());
      timer.start();
      ctx.launch(k, LaunchConfig{2, 256}, inbox.data(), outbox.data(), static_cast<unsigned long long>(n), ready.data(),
                 ack.data(), rounds, errors.data());
      float ms = timer.stop();
      if (rep >= args.warmup) times.push_back(ms);
      if (errors.to_host()[0] != 0) {
        throw Error("validation failed: rank " + std::to_string(ctx.rank()) + " saw " +
                    std::to_string(errors.to_host()[0]) + " wrong words");
      }
      ctx.barrier();  // nobody frees flags a peer still signals
    }
    std::sort(times.begin(), times.end());
    const double us = times[times.size() / 2] * 1e3 / rounds;
    auto all = ctx.all_gather(us);
    std::string line = "validated " + std::to_string(rounds) + " rounds; round trip per message (us):";
    for (double v : all) line += " " + std::to_string(v).substr(0, 6);
    report(ctx, line);
    report(ctx, "payload bandwidth per rank: " + std::to_string(n * 4 / (us * 1e-6) / 1e9).substr(0, 6) + " GB/s");
  });
}
