// iris-bench p2p: RMA bandwidth, atomic throughput and signal latency between GPUs,
// measured side by side with cudaMemcpyPeerAsync on the same buffers, in one run.
#include "p2p.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "iris/embedded.hpp"
#include "iris/iris.hpp"

IRIS_DECLARE_EMBEDDED(p2p_kernels)

namespace iris::bench {
namespace {

void cuda_rt(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Median of `iters` timed runs after `warmup` untimed ones; `run` enqueues on `stream`.
float median(Stream stream, int warmup, int iters, const std::function<void()>& run) {
  EventTimer t(stream);
  std::vector<float> ms;
  for (int i = 0; i < warmup + iters; ++i) {
    t.start();
    run();
    float x = t.stop();
    if (i >= warmup) ms.push_back(x);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// cudaMemcpyPeerAsync from this rank to several destinations at once, one stream each;
// returns the median time of the whole batch.
struct PeerCopier {
  std::vector<cudaStream_t> streams;
  cudaEvent_t start{}, stop{};
  std::vector<cudaEvent_t> done;
  explicit PeerCopier(int device, int n) {
    cuda_rt(cudaSetDevice(device), "cudaSetDevice");
    streams.resize(static_cast<std::size_t>(n));
    done.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      cuda_rt(cudaStreamCreateWithFlags(&streams[static_cast<std::size_t>(i)], cudaStreamNonBlocking), "stream");
      cuda_rt(cudaEventCreate(&done[static_cast<std::size_t>(i)]), "event");
    }
    cuda_rt(cudaEventCreate(&start), "event");
    cuda_rt(cudaEventCreate(&stop), "event");
  }
  ~PeerCopier() {
    for (auto s : streams) cudaStreamDestroy(s);
    for (auto e : done) cudaEventDestroy(e);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  struct Copy {
    void* dst;
    int dst_dev;
    const void* src;
    int src_dev;
    std::size_t bytes;
  };
  float time(const std::vector<Copy>& copies, int warmup, int iters) {
    std::vector<float> ms;
    for (int it = 0; it < warmup + iters; ++it) {
      cuda_rt(cudaEventRecord(start, streams[0]), "record");
      for (std::size_t i = 0; i < copies.size(); ++i) {
        cuda_rt(cudaStreamWaitEvent(streams[i], start, 0), "wait");
        const Copy& c = copies[i];
        cuda_rt(cudaMemcpyPeerAsync(c.dst, c.dst_dev, c.src, c.src_dev, c.bytes, streams[i]), "cudaMemcpyPeerAsync");
        cuda_rt(cudaEventRecord(done[i], streams[i]), "record");
      }
      for (std::size_t i = 1; i < copies.size(); ++i) cuda_rt(cudaStreamWaitEvent(streams[0], done[i], 0), "wait");
      cuda_rt(cudaEventRecord(stop, streams[0]), "record");
      cuda_rt(cudaEventSynchronize(stop), "sync");
      float x = 0;
      cuda_rt(cudaEventElapsedTime(&x, start, stop), "elapsed");
      if (it >= warmup) ms.push_back(x);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  }
};

double gbps(double bytes, float ms) { return bytes / (ms * 1e-3) / 1e9; }

// Every rank runs `launch` warmup + iters times, all starting together after a host
// barrier each time; returns this rank's median in milliseconds.
float lockstep_median(Context& ctx, int warmup, int iters, const std::function<void()>& launch) {
  std::vector<float> ms;
  EventTimer t(ctx.stream());
  for (int i = 0; i < warmup + iters; ++i) {
    ctx.barrier();
    t.start();
    launch();
    const float x = t.stop();
    if (i >= warmup) ms.push_back(x);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// The slowest rank's value.
float slowest(Context& ctx, float mine) {
  auto all = ctx.all_gather(mine);
  return *std::max_element(all.begin(), all.end());
}

}  // namespace

int run_p2p(const P2pOptions& o) {
  std::mutex mu;
  std::vector<P2pRow> rows;
  std::string device_name;
  int world = 0;
  auto add = [&](P2pRow r) {
    std::lock_guard<std::mutex> lock(mu);
    rows.push_back(std::move(r));
  };
  std::size_t largest = *std::max_element(o.sizes.begin(), o.sizes.end());
  Options opt = o.options;
  if (opt.heap_bytes == Options{}.heap_bytes) {
    const std::size_t g = Options::kHeapGranularity;
    opt.heap_bytes = ((largest * (device::kMaxRanks + 2) + (256u << 20)) + g - 1) / g * g;
  }
  const int rc = run(opt, [&](Context& ctx) {
    if (ctx.world() < 2) throw Error("p2p needs at least 2 ranks (GPUs)");
    if (ctx.rank() == 0) {
      device_name = ctx.device_name();
      world = ctx.world();
    }
    Module mod = ctx.load_module(embedded::p2p_kernels(), "p2p kernels");
    Kernel put = mod.kernel("bulk_put"), get = mod.kernel("bulk_get"), st = mod.kernel("elem_store"),
           ld = mod.kernel("elem_load"), put_all = mod.kernel("bulk_put_all"), get_all = mod.kernel("bulk_get_all"),
           atom = mod.kernel("scattered_add"), red = mod.kernel("scattered_red"), ping = mod.kernel("ping_pong"), put_fused = mod.kernel("bulk_put_all_fused");
    const int me = ctx.rank(), W = ctx.world();
    const unsigned blocks = o.blocks ? o.blocks : static_cast<unsigned>(ctx.multiprocessors()) * 2;
    const unsigned threads = o.threads;
    auto devices = ctx.all_gather(ctx.device());
    PeerCopier copier(ctx.device(), W);
    auto src = ctx.randint<std::uint32_t>(largest / 4, 0, 1 << 30, 1);
    auto dst = ctx.zeros<std::uint32_t>(largest / 4 * static_cast<std::size_t>(W));
    if (o.sweep && me == 0) {
      char* d = reinterpret_cast<char*>(dst.data());
      const char* s = reinterpret_cast<const char*>(src.data());
      const unsigned long long b = largest;
      float base = copier.time({{dst.on_rank(1), devices[1], src.data(), devices[0], largest}}, o.warmup, o.iters);
      std::printf("sweep: put 0->1 %s, cudaMemcpyPeerAsync %.1f GB/s\n", format_bytes(largest).c_str(),
                  gbps(static_cast<double>(largest), base));
      for (unsigned bl : {16u, 32u, 64u, 132u, 264u, 528u}) {
        for (unsigned th : {256u, 512u, 1024u}) {
          float t = median(ctx.stream(), o.warmup, o.iters, [&] { ctx.launch(put, LaunchConfig{bl, th}, d, s, b, 1); });
          float tg = median(ctx.stream(), o.warmup, o.iters, [&] { ctx.launch(get, LaunchConfig{bl, th}, d, s, b, 1); });
          std::printf("sweep: blocks %4u threads %4u  put %6.1f GB/s (%5.1f%%)  get %6.1f GB/s\n", bl, th,
                      gbps(static_cast<double>(largest), t), 100.0 * base / t, gbps(static_cast<double>(largest), tg));
        }
      }
      std::fflush(stdout);
    }
    ctx.barrier();
    if (o.sweep && W > 2) {
      // All ranks put to all peers at once: grouped (a block group per peer) and fused
      // (every block stores each chunk to every peer), over grid shapes.
      char* d = reinterpret_cast<char*>(dst.data());
      const char* s = reinterpret_cast<const char*>(src.data());
      const unsigned long long b = largest, n = largest / 16;
      auto lockstep_ms = [&](const std::function<void()>& launch) {
        return slowest(ctx, lockstep_median(ctx, o.warmup, o.iters, launch));
      };
      const double B = static_cast<double>(largest) * W * (W - 1);
      for (unsigned bl : {132u, 264u, 528u, 1056u}) {
        for (unsigned th : {512u, 1024u}) {
          const unsigned g = bl / static_cast<unsigned>(W - 1) * static_cast<unsigned>(W - 1);
          float tg = lockstep_ms([&] { ctx.launch(put_all, LaunchConfig{g, th}, d, s, b); });
          float tf = lockstep_ms([&] { ctx.launch(put_fused, LaunchConfig{bl, th}, dst.data(), src.data(), n); });
          if (me == 0) {
            std::printf("sweep: all-peers put blocks %4u threads %4u  grouped %7.1f GB/s  fused %7.1f GB/s\n", bl, th,
                        gbps(B, tg), gbps(B, tf));
          }
        }
      }
      std::fflush(stdout);
    }
    for (std::size_t bytes : o.sizes) {
      const std::size_t n16 = bytes / 16;
      const int iters = bytes >= (256u << 20) ? o.iters : o.iters * 4;
      // --- one pair: rank 0 <-> rank 1 -------------------------------------------------
      if (me == 0) {
        char* d = reinterpret_cast<char*>(dst.data());
        const char* s = reinterpret_cast<const char*>(src.data());
        const unsigned long long b = bytes, n = n16;
        const unsigned eblocks = static_cast<unsigned>(ctx.multiprocessors()) * 4;
        float t_put = median(ctx.stream(), o.warmup, iters, [&] { ctx.launch(put, LaunchConfig{blocks, threads}, d, s, b, 1); });
        float t_store = median(ctx.stream(), o.warmup, iters,
                               [&] { ctx.launch(st, LaunchConfig{eblocks, 512}, d, s, n, 1); });
        float t_get = median(ctx.stream(), o.warmup, iters, [&] { ctx.launch(get, LaunchConfig{blocks, threads}, d, s, b, 1); });
        float t_load = median(ctx.stream(), o.warmup, iters,
                              [&] { ctx.launch(ld, LaunchConfig{eblocks, 512}, d, s, n, 1); });
        float t_out = copier.time({{dst.on_rank(1), devices[1], src.data(), devices[0], bytes}}, o.warmup, iters);
        float t_in = copier.time({{dst.data(), devices[0], src.on_rank(1), devices[1], bytes}}, o.warmup, iters);
        const double B = static_cast<double>(bytes);
        add({"put", "0->1", bytes, gbps(B, t_put), gbps(B, t_out), "cudaMemcpyPeerAsync 0->1"});
        add({"store", "0->1", bytes, gbps(B, t_store), gbps(B, t_out), "cudaMemcpyPeerAsync 0->1"});
        add({"get", "0<-1", bytes, gbps(B, t_get), gbps(B, t_in), "cudaMemcpyPeerAsync 1->0"});
        add({"load", "0<-1", bytes, gbps(B, t_load), gbps(B, t_in), "cudaMemcpyPeerAsync 1->0"});
      }
      ctx.barrier();
      // --- all peers at once, every rank ----------------------------------------------
      if (W > 2 || o.all_peers_at_two) {
        // 8 blocks per SM: the best shape of the all-peers sweep on 4 x H200 (92% of
        // concurrent cudaMemcpyPeerAsync, against 88-90% at 1-2 per SM).
        const unsigned all_blocks = o.blocks ? o.blocks : static_cast<unsigned>(ctx.multiprocessors()) * 8;
        const unsigned ab = (all_blocks / static_cast<unsigned>(W - 1)) * static_cast<unsigned>(W - 1);
        char* d = reinterpret_cast<char*>(dst.data());
        const char* s = reinterpret_cast<const char*>(src.data());
        const unsigned long long b = bytes;
        std::vector<PeerCopier::Copy> out, in;
        for (int k = 1; k < W; ++k) {
          const int p = (me + k) % W;
          out.push_back({static_cast<char*>(static_cast<void*>(dst.on_rank(p))) + me * bytes, devices[static_cast<std::size_t>(p)],
                         src.data(), devices[static_cast<std::size_t>(me)], bytes});
          in.push_back({reinterpret_cast<char*>(dst.data()) + p * bytes, devices[static_cast<std::size_t>(me)],
                        src.on_rank(p), devices[static_cast<std::size_t>(p)], bytes});
        }
        auto timed = [&](const std::function<float()>& f) {
          ctx.barrier();
          return f();
        };
        auto lockstep = [&](const std::function<void()>& launch) {
          return lockstep_median(ctx, o.warmup, iters, launch);
        };
        float t_put = lockstep([&] { ctx.launch(put_all, LaunchConfig{ab, threads}, d, s, b); });
        float t_get = lockstep([&] { ctx.launch(get_all, LaunchConfig{ab, threads}, d, s, b); });
        std::vector<float> t_out_v, t_in_v;
        for (int i = 0; i < o.warmup + iters; ++i) {
          t_out_v.push_back(timed([&] { return copier.time(out, 0, 1); }));
        }
        for (int i = 0; i < o.warmup + iters; ++i) {
          t_in_v.push_back(timed([&] { return copier.time(in, 0, 1); }));
        }
        auto med = [&](std::vector<float> v) {
          v.erase(v.begin(), v.begin() + o.warmup);
          std::sort(v.begin(), v.end());
          return v[v.size() / 2];
        };
        const float t_out = med(t_out_v), t_in = med(t_in_v);
        const float wp = slowest(ctx, t_put), wg = slowest(ctx, t_get), wo = slowest(ctx, t_out),
                    wi = slowest(ctx, t_in);
        if (me == 0) {
          const double B = static_cast<double>(bytes) * W * (W - 1);  // all ranks, all peers
          const std::string who = "all " + std::to_string(W) + " ranks -> all peers";
          add({"put all-peers", who, bytes, gbps(B, wp), gbps(B, wo), "concurrent cudaMemcpyPeerAsync"});
          add({"get all-peers", who, bytes, gbps(B, wg), gbps(B, wi), "concurrent cudaMemcpyPeerAsync"});
        }
      }
      ctx.barrier();
    }
    // --- atomics: scattered relaxed adds, remote (0 -> 1) vs local ---------------------------
    {
      const unsigned long long slots = 1ull << 24, ops = 1ull << 28;
      auto counters = ctx.zeros<std::uint32_t>(slots);
      ctx.barrier();
      if (me == 0) {
        const unsigned ab = static_cast<unsigned>(ctx.multiprocessors()) * 8;
        float t_remote = median(ctx.stream(), o.warmup, o.iters,
                                [&] { ctx.launch(atom, LaunchConfig{ab, 256}, counters.data(), slots, ops, 1); });
        float t_local = median(ctx.stream(), o.warmup, o.iters,
                               [&] { ctx.launch(atom, LaunchConfig{ab, 256}, counters.data(), slots, ops, 0); });
        add({"atomic_add (scattered, relaxed)", "0->1", 4 * ops, ops / (t_remote * 1e-3) / 1e9,
             ops / (t_local * 1e-3) / 1e9, "same kernel on local memory", "Gop/s"});
        float r_remote = median(ctx.stream(), o.warmup, o.iters,
                                [&] { ctx.launch(red, LaunchConfig{ab, 256}, counters.data(), slots, ops, 1); });
        float r_local = median(ctx.stream(), o.warmup, o.iters,
                               [&] { ctx.launch(red, LaunchConfig{ab, 256}, counters.data(), slots, ops, 0); });
        add({"red_add (scattered, no fetch)", "0->1", 4 * ops, ops / (r_remote * 1e-3) / 1e9,
             ops / (r_local * 1e-3) / 1e9, "same kernel on local memory", "Gop/s"});
      }
      ctx.barrier();
    }
    // --- signal ping-pong 0 <-> 1 ---------------------------------------------------------
    {
      const unsigned rounds = 20000;
      std::vector<float> us;
      for (int rep = 0; rep < o.warmup + o.iters; ++rep) {
        auto flag = ctx.zeros<std::uint64_t>(1);
        ctx.barrier();
        if (me <= 1) {
          EventTimer t(ctx.stream());
          t.start();
          ctx.launch(ping, LaunchConfig{1, 32}, flag.data(), 0, 1, rounds);
          float ms = t.stop();
          if (rep >= o.warmup) us.push_back(ms * 1e3f / rounds);
        }
        ctx.barrier();
      }
      if (me == 0) {
        std::sort(us.begin(), us.end());
        add({"signal ping-pong round trip", "0<->1", 8, us[us.size() / 2], 0, "target <= 4 us", "us"});
      }
    }
  });
  if (rc != 0) return rc;

  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::printf("\niris-bench p2p: %d x %s, %s, %u threads/block\n", world, device_name.c_str(), date, o.threads);
  std::printf("%-34s %-26s %10s %12s %12s %7s  %s\n", "op", "ranks", "size", "iris", "baseline", "ratio", "baseline is");
  nlohmann::json js;
  js["date"] = date;
  js["device"] = device_name;
  js["world"] = world;
  for (const P2pRow& r : rows) {
    const bool latency = r.unit == "us";
    const double ratio = r.baseline > 0 ? r.iris / r.baseline : 0;
    std::printf("%-34s %-26s %10s %9.2f %-5s %9.2f %-5s %6.1f%%  %s\n", r.op.c_str(), r.ranks.c_str(),
                latency ? "-" : format_bytes(r.bytes).c_str(), r.iris, r.unit.c_str(), r.baseline,
                r.baseline > 0 ? r.unit.c_str() : "", ratio * 100, r.baseline_name.c_str());
    js["rows"].push_back({{"op", r.op},
                          {"ranks", r.ranks},
                          {"bytes", r.bytes},
                          {"iris", r.iris},
                          {"baseline", r.baseline},
                          {"baseline_name", r.baseline_name},
                          {"unit", r.unit}});
  }
  if (!o.json_path.empty()) {
    std::ofstream(o.json_path) << js.dump(2) << "\n";
    std::printf("JSON written to %s\n", o.json_path.c_str());
  }
  return 0;
}

}  // namespace iris::bench
