// 06_message_passing: every rank sends a message to the next rank (a put, then a
// release signal) and waits for its acknowledgement (acquire wait), round after round;
// the receiver checks every word of every message on the GPU. Reports the round trip
// per message for the hand-written CUDA kernel and for message_passing.iris (two roles
// in one kernel) through the irisc CLI, the JIT and the embedded header.
#include <algorithm>

#include "iris/embedded.hpp"
#include "message_passing.iris.hpp"
#include "sample.hpp"

IRIS_DECLARE_EMBEDDED(sample_kernels)

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  SampleSpec spec{"06_message_passing", "producer/consumer messages over release/acquire flags", 64u << 10};
  return sample_main(argc, argv, spec, [](Context& ctx, const SampleArgs& args) {
    const std::size_t n = std::max<std::size_t>(1024, args.bytes / sizeof(std::uint32_t) / 1024 * 1024);
    // Interpreted on the host backend, a round trip takes about 100 us, not 1 us.
    const unsigned rounds = ctx.on_host() ? 100 : 1000;
    auto inbox = ctx.zeros<std::uint32_t>(n);
    auto outbox = ctx.zeros<std::uint32_t>(n);
    auto errors = ctx.zeros<std::uint32_t>(1);
    auto ready = ctx.zeros<std::uint64_t>(1);
    auto ack = ctx.zeros<std::uint64_t>(1);
    Kernel k = cuda_kernel(ctx, args, embedded::sample_kernels(), "06_message_passing kernels", "ping_pong");
    IrisPaths<iris_kernels::message_passing::Kernels> paths(ctx, args, "message_passing");
    const std::int64_t r64 = rounds;
    std::vector<Variant> variants{
        {"cuda", [&] { ctx.launch(k, LaunchConfig{2, 256}, inbox.data(), outbox.data(), static_cast<unsigned long long>(n),
                                  ready.data(), ack.data(), rounds, errors.data()); }},
        {"cli", [&] { paths.cli->launch("ping_pong", {inbox, ready, ack, errors, r64}); }},
        {"jit", [&] { paths.jit->launch("ping_pong", {inbox, ready, ack, errors, r64}); }},
        {"embedded", [&] { paths.embedded->ping_pong(inbox, ready, ack, errors, r64); }},
    };
    Measure m;
    // Flags count rounds from 1 in every launch: clear them (and the error count)
    // before each launch, while no kernel runs anywhere.
    m.prepare = [&] {
      ctx.barrier();
      ready = ctx.zeros<std::uint64_t>(1);
      ack = ctx.zeros<std::uint64_t>(1);
      errors = ctx.zeros<std::uint32_t>(1);
      ctx.barrier();
    };
    m.validate = [&](int) {
      const std::uint32_t bad = errors.to_host()[0];
      if (bad) throw Error("validation failed: rank " + std::to_string(ctx.rank()) + " saw " + std::to_string(bad) + " wrong words");
    };
    // Rates are work / 1e9 per second: rounds x 1e6 reads as thousands of round trips/s.
    m.work_per_launch = static_cast<double>(rounds) * 1e6;
    m.unit = "k round trips/s";
    run_variants(ctx, args, variants, m);
    report(ctx, "  (a round trip is " + std::to_string(n * 4 / 1024) + " KiB put + signal, then the ack; 1000 k/s = 1 us)");
  });
}
