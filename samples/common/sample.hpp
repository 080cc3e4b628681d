// What every sample shares: command-line options (--ranks, --heap, --size, ...),
// "no GPU found" handling, result printing on rank 0, and timing with a median.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "iris/iris.hpp"

namespace iris::samples {

struct SampleArgs;

// A sample-specific integer option, e.g. {"--m", "rows of A and C", 4096}.
struct IntOption {
  std::string flag;
  std::string help;
  std::int64_t value;
  std::int64_t host_value = 0;  // the default on the host backend (0: `value`)
};

struct SampleSpec {
  const char* name;         // "00_load"
  const char* summary;      // one line for --help
  std::size_t default_bytes;
  int min_ranks = 1;
  std::vector<IntOption> int_options = {};
  // The versions the sample has (what --path takes, besides all), with a line of help
  // for each; and those that run on the host backend when --path is not given.
  const char* paths = "cuda,cli,jit,embedded,baseline";
  const char* paths_help =
      "cuda (kernels.cu), cli (irisc's cubin), jit\n"
      "                  (.iris compiled at run time), embedded (irisc's header), baseline\n"
      "                  (the vendor libraries, where the sample has them)";
  const char* host_paths = "cli,jit,embedded";
  // The heap each rank needs, from the parsed options (empty: from the buffer size).
  std::function<std::size_t(const SampleArgs&)> heap_bytes = {};
};

struct SampleArgs {
  Options options;
  // The job runs on the host backend (--backend host, IRIS_BACKEND=host): CPU threads
  // interpret the .iris kernels; the hand-written CUDA and vendor baselines cannot run,
  // and the defaults shrink (buffers of at most kHostBytes, 3 + 1 iterations).
  bool host = false;
  static constexpr std::size_t kHostBytes = 1u << 20;
  std::size_t bytes = 0;  // bytes per buffer per rank
  int iters = 20;
  int warmup = 3;
  // Which versions to run: "cuda" (hand-written kernels.cu), "cli" (the cubin irisc made
  // at build time), "jit" (the .iris compiled at run time), "embedded" (the header
  // irisc made), "baseline" (a vendor library, where the sample has one), or "all".
  // A comma-separated list selects several, e.g. "cuda,jit".
  std::string path = "all";
  // The cubin the cli path loads instead of the one built with the sample (--cubin).
  std::string cubin;
  // Compile-time parameters the jit path passes to irisc (-D NAME=VALUE).
  std::map<std::string, std::int64_t> defines;
  // The sample's own integer options (SampleSpec::int_options) by flag, e.g. "--m".
  std::map<std::string, std::int64_t> ints;
  bool runs(const std::string& p) const;
  std::int64_t get(const std::string& flag) const;
};

// One version of a sample's kernel: how to launch it once.
struct Variant {
  std::string path;
  std::function<void()> launch;
  std::string label = {};  // printed instead of `path` when set (e.g. "cublas+nccl")
};

// What a sample checks and how it counts work.
struct Measure {
  std::function<void()> reset;                // before a version runs (e.g. clear outputs)
  std::function<void()> prepare;              // before every launch, untimed (may be empty)
  std::function<void(int launches)> validate; // after a version ran `launches` times; throws on mismatch
  double work_per_launch = 0;                 // bytes or operations per launch, per rank
  std::string unit = "GB/s";                  // of work_per_launch / 1e9 per second
  // The variant (by path) the others' rates are given as a percentage of; it must run
  // first. "cuda": the hand-written kernels.
  std::string reference = "cuda";
};

// The hand-written CUDA kernel `kernel` of the sample's embedded fatbin, or an empty
// Kernel when the "cuda" version does not run (not selected, or the host backend).
Kernel cuda_kernel(Context& ctx, const SampleArgs& args, std::span<const std::byte> fatbin, const std::string& module,
                   const std::string& kernel);

// Runs each variant (reset, warm-up + timed launches, validate), then prints one line per
// variant with the per-rank rates and the ratio to the reference variant.
void run_variants(Context& ctx, const SampleArgs& args, const std::vector<Variant>& variants, const Measure& m);

// The .iris programs of a sample, loaded the three irisc ways. `stem` is the .iris file
// name without extension; the cubin (the host code object on the host backend) and the
// source sit next to the executable.
Program load_cli_program(Context& ctx, const SampleArgs& args, const std::string& stem);
Program load_jit_program(Context& ctx, const SampleArgs& args, const std::string& stem);

// A sample's .iris kernels through each irisc path that `args` selects. `Embedded` is
// the Kernels class of the header iris_add_kernels generated for the same file.
template <class Embedded>
struct IrisPaths {
  std::optional<Program> cli, jit;
  std::optional<Embedded> embedded;
  IrisPaths(Context& ctx, const SampleArgs& args, const std::string& stem) {
    if (args.runs("cli")) cli = load_cli_program(ctx, args, stem);
    if (args.runs("jit")) jit = load_jit_program(ctx, args, stem);
    if (args.runs("embedded")) embedded.emplace(ctx);
  }
};

// Parses argv, runs `body` on every rank, returns the exit code: 0 ok, 1 failure
// (validation or runtime error), 2 bad usage, 77 no GPU (reported, not a failure).
int sample_main(int argc, char** argv, const SampleSpec& spec,
                const std::function<void(Context&, const SampleArgs&)>& body);

// Runs `launch` warmup + iters times (host barrier before each, so ranks start
// together), timing each with events; returns the median in milliseconds.
float median_ms(Context& ctx, const SampleArgs& args, const std::function<void()>& launch);

// Prints on rank 0 only.
void report(Context& ctx, const std::string& line);

// Throws iris::Error("validation failed ...") listing the first mismatches.
template <class T>
void expect_equal(const std::vector<T>& got, const std::vector<T>& want, const std::string& what);

// Grid size for memory-bound kernels: a few blocks per SM.
unsigned grid_for(const Context& ctx, std::size_t work_items, unsigned threads);

}  // namespace iris::samples
