// 05_atomic_xchg: (1) every rank swaps its id into one slot on rank 0; the old values
// plus the final slot value must be exactly {0, 1, ..., world}: each exchange saw the
// previous one. (2) every rank swaps tags into all slots of the next rank; the next
// rank finds the tags, the old values are the ones before. Reports throughput.
#include <algorithm>

#include "iris/embedded.hpp"
#include "sample.hpp"

IRIS_DECLARE_EMBEDDED(sample_kernels)

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  SampleSpec spec{"05_atomic_xchg", "remote atomic exchange: a token chain and slot swaps", 4u << 20};
  return sample_main(argc, argv, spec, [](Context& ctx, const SampleArgs& args) {
    Module mod = ctx.load_module(embedded::sample_kernels(), "05_atomic_xchg kernels");
    // (1) token chain through rank 0's slot
    auto slot = ctx.zeros<std::uint32_t>(1);
    auto old = ctx.zeros<std::uint32_t>(1);
    ctx.barrier();
    ctx.launch(mod.kernel("xchg_token"), LaunchConfig{1, 32}, slot.data(), old.data());
    ctx.barrier();
    auto olds = ctx.all_gather(old.to_host()[0]);
    std::uint32_t final_value = 0;
    ctx.copy_to_host(&final_value, slot.on_rank(0), sizeof final_value);
    olds.push_back(final_value);
    std::sort(olds.begin(), olds.end());
    std::vector<std::uint32_t> chain(olds.size());
    for (std::size_t i = 0; i < chain.size(); ++i) chain[i] = static_cast<std::uint32_t>(i);
    expect_equal(olds, chain, "token chain (old values + final value)");

    // (2) slot swaps into the next rank
    const std::size_t n = args.bytes / sizeof(std::uint32_t);
    const int to = (ctx.rank() + 1) % ctx.world();
    const int from = (ctx.rank() + ctx.world() - 1) % ctx.world();
    auto slots = ctx.full<std::uint32_t>(n, 0xFFFFFFFFu);
    auto prev = ctx.zeros<std::uint32_t>(n);
    Kernel k = mod.kernel("xchg_slots");
    const unsigned long long nn = n;
    const std::uint32_t tag = static_cast<std::uint32_t>(ctx.rank()) << 24;
    LaunchConfig cfg{grid_for(ctx, n, 256), 256};
    ctx.barrier();
    ctx.launch(k, cfg, slots.data(), prev.data(), nn, to, tag);
    ctx.barrier();
    expect_equal(prev.to_host(), std::vector<std::uint32_t>(n, 0xFFFFFFFFu), "old values of the first swap");
    std::vector<std::uint32_t> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = (static_cast<std::uint32_t>(from) << 24) + static_cast<std::uint32_t>(i);
    expect_equal(slots.to_host(), want, "slots written by rank " + std::to_string(from));

    float ms = median_ms(ctx, args, [&] { ctx.launch(k, cfg, slots.data(), prev.data(), nn, to, tag); });
    auto all = ctx.all_gather(static_cast<double>(n) / (ms * 1e-3) / 1e9);
    std::string line = "validated; remote atomic exchanges per rank (G ops/s):";
    for (double v : all) line += " " + std::to_string(v).substr(0, 6);
    report(ctx, line);
  });
}
