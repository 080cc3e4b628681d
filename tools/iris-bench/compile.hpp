// iris-bench compile: options.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace iris::bench {

struct CompileBenchOptions {
  std::vector<std::filesystem::path> files;
  std::string target = "sm_90a";
  int reps = 20;       // front end, CUDA emission, cache hit
  int cold_reps = 5;   // full compiles to cubin
};

int run_compile(const CompileBenchOptions& options);

}  // namespace iris::bench
