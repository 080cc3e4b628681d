// iris-bench p2p: options and result rows.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "iris/options.hpp"

namespace iris::bench {

struct P2pOptions {
  Options options;
  std::vector<std::size_t> sizes;
  int iters = 10;
  int warmup = 3;
  unsigned blocks = 0;  // 0: 2 per SM
  unsigned threads = 512;
  bool all_peers_at_two = true;
  bool sweep = false;  // first try bulk put/get grid shapes at the largest size
  std::string json_path;
};

struct P2pRow {
  std::string op, ranks;
  std::size_t bytes;
  double iris, baseline;
  std::string baseline_name;
  std::string unit = "GB/s";  // or "Gop/s", "us"
};

int run_p2p(const P2pOptions& options);

}  // namespace iris::bench
