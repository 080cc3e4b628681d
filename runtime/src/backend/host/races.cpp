// The race check (see races.hpp).
#include "backend/host/races.hpp"

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>

#include "backend/host/job_table.hpp"

namespace iris::host::races {
namespace {

constexpr int kRanks = device::kMaxRanks;
using Clock = std::array<std::uint32_t, kRanks>;

void join(Clock& into, const Clock& from) {
  for (int i = 0; i < kRanks; ++i) into[static_cast<std::size_t>(i)] = std::max(into[static_cast<std::size_t>(i)], from[static_cast<std::size_t>(i)]);
}

// What an element saw last: its last write (rank, epoch, site) and each rank's last read.
struct Shadow {
  int writer = -1;
  std::uint32_t write_epoch = 0;
  const char* write_site = nullptr;
  std::array<std::uint32_t, kRanks> read_epoch{};
  std::array<const char*, kRanks> read_site{};
  // Atomic accesses per rank (0: none): they conflict with plain ones only.
  std::array<std::uint32_t, kRanks> atomic_write_epoch{}, atomic_read_epoch{};
  std::array<const char*, kRanks> atomic_write_site{}, atomic_read_site{};
  const char* name = nullptr;  // the tensor, once an access that knows it came by
};

constexpr std::size_t kShards = 256;

struct Job {
  // Each rank's clock: entries only grow. Read lock-free by accesses, joined under mu.
  std::array<std::array<std::atomic<std::uint32_t>, kRanks>, kRanks> clocks{};
  std::mutex mu;
  std::unordered_map<const void*, Clock> flags;  // system-scope releases
  // Every release, by the rank that made it: what a narrower-scope acquire of that rank
  // sees (a system-scope release orders its own rank's device-scope acquires too).
  std::map<std::pair<const void*, int>, Clock> own_flags;
  // Collectives by their number (every rank makes the same ones in the same order): the
  // join of the clocks the ranks entered it with, and how many have left it.
  struct Collective {
    Clock entered{};
    int left = 0;
  };
  std::map<std::uint64_t, Collective> collectives;
  std::array<std::uint64_t, kRanks> next_collective{};
  struct Shard {
    std::mutex mu;
    std::unordered_map<const void*, Shadow> elements;
  };
  std::array<Shard, kShards> shards;

  Job() {
    for (int r = 0; r < kRanks; ++r) clocks[static_cast<std::size_t>(r)][static_cast<std::size_t>(r)].store(1);
  }
  std::uint32_t at(int rank, int of) const {
    return clocks[static_cast<std::size_t>(rank)][static_cast<std::size_t>(of)].load(std::memory_order_acquire);
  }
  Clock clock(int rank) const {
    Clock c{};
    for (int i = 0; i < kRanks; ++i) c[static_cast<std::size_t>(i)] = at(rank, i);
    return c;
  }
  void raise(int rank, const Clock& c) {
    for (int i = 0; i < kRanks; ++i) {
      auto& e = clocks[static_cast<std::size_t>(rank)][static_cast<std::size_t>(i)];
      std::uint32_t v = e.load(std::memory_order_relaxed);
      while (v < c[static_cast<std::size_t>(i)] && !e.compare_exchange_weak(v, c[static_cast<std::size_t>(i)])) {
      }
    }
  }
  void tick(int rank) { clocks[static_cast<std::size_t>(rank)][static_cast<std::size_t>(rank)].fetch_add(1); }
};

Job& job_of(const device::Context& ctx) { return JobTable<Job>::of(ctx); }

// The rank whose heap holds `addr`: the one with the highest base at or below it.
int owner(const device::Context& ctx, const void* addr) {
  int best = -1;
  for (int r = 0; r < ctx.world; ++r) {
    if (ctx.heap_bases[r] <= static_cast<const char*>(addr) && (best < 0 || ctx.heap_bases[r] > ctx.heap_bases[best])) best = r;
  }
  return best;
}

const char* verb(Access a) {
  switch (a) {
    case Access::read: return " reads ";
    case Access::write: return " writes ";
    case Access::atomic_read: return " waits on ";
    case Access::atomic_write: return " atomically updates ";
  }
  return " touches ";
}

std::string describe(int rank, Access kind, const char* tensor, long long index, const char* site) {
  return "rank " + std::to_string(rank) + verb(kind) + tensor + "[" + std::to_string(index) + "] (" +
         (site ? site : "?") + ")";
}

}  // namespace

void start(bool on) {
  JobTable<Job>::forget();
  enabled_flag().store(on);
}

const char* intern(const std::string& text) {
  static std::mutex mu;
  static std::set<std::string> texts;
  std::lock_guard<std::mutex> lock(mu);
  return texts.insert(text).first->c_str();
}

void access(const device::Context& ctx, const void* addr, Access kind, const char* site, const char* tensor,
            long long index) {
  Job& job = job_of(ctx);
  const int r = ctx.rank;
  Job::Shard& shard = job.shards[(reinterpret_cast<std::uintptr_t>(addr) >> 2) % kShards];
  std::lock_guard<std::mutex> lock(shard.mu);
  Shadow& s = shard.elements[addr];
  if (tensor) s.name = tensor;
  const char* shown = s.name ? s.name : "an element";
  const auto unordered = [&](int other, std::uint32_t epoch) { return epoch && other != r && epoch > job.at(r, other); };
  auto fail = [&](int other, Access other_kind, const char* other_site) {
    const int on = owner(ctx, addr);
    throw RaceError("race on rank " + std::to_string(on) + "'s " + shown + "[" + std::to_string(index) + "]: " +
                    describe(r, kind, shown, index, site) + " and " + describe(other, other_kind, shown, index, other_site) +
                    " touch the same element with nothing ordering them (no signal/wait, barrier or host "
                    "collective between): order them, or let one rank own the element");
  };
  const bool plain = kind == Access::read || kind == Access::write;
  const bool writes = kind == Access::write || kind == Access::atomic_write;
  // Plain writes conflict with everything; plain reads with writes of any kind; atomics
  // with plain accesses only.
  if (s.writer >= 0 && unordered(s.writer, s.write_epoch)) fail(s.writer, Access::write, s.write_site);
  for (int q = 0; q < kRanks; ++q) {
    const auto i = static_cast<std::size_t>(q);
    if (writes && unordered(q, s.read_epoch[i])) fail(q, Access::read, s.read_site[i]);
    if (plain && unordered(q, s.atomic_write_epoch[i])) fail(q, Access::atomic_write, s.atomic_write_site[i]);
    if (kind == Access::write && unordered(q, s.atomic_read_epoch[i])) fail(q, Access::atomic_read, s.atomic_read_site[i]);
  }
  const std::uint32_t now = job.at(r, r);
  const auto me = static_cast<std::size_t>(r);
  switch (kind) {
    case Access::write:
      s.writer = r;
      s.write_epoch = now;
      s.write_site = site;
      s.read_epoch.fill(0);
      s.atomic_write_epoch.fill(0);
      s.atomic_read_epoch.fill(0);
      break;
    case Access::read:
      s.read_epoch[me] = now;
      s.read_site[me] = site;
      break;
    case Access::atomic_write:
      s.atomic_write_epoch[me] = now;
      s.atomic_write_site[me] = site;
      break;
    case Access::atomic_read:
      s.atomic_read_epoch[me] = now;
      s.atomic_read_site[me] = site;
      break;
  }
}

void release(const device::Context& ctx, const void* flag, bool system) {
  Job& job = job_of(ctx);
  std::lock_guard<std::mutex> lock(job.mu);
  const Clock mine = job.clock(ctx.rank);
  if (system) join(job.flags[flag], mine);
  join(job.own_flags[{flag, ctx.rank}], mine);
  job.tick(ctx.rank);
}

void acquire(const device::Context& ctx, const void* flag, bool system) {
  Job& job = job_of(ctx);
  std::lock_guard<std::mutex> lock(job.mu);
  if (system) {
    if (const auto it = job.flags.find(flag); it != job.flags.end()) job.raise(ctx.rank, it->second);
  }
  if (const auto it = job.own_flags.find({flag, ctx.rank}); it != job.own_flags.end()) job.raise(ctx.rank, it->second);
}

void collective(const device::Context& ctx, bool entering) {
  Job& job = job_of(ctx);
  std::lock_guard<std::mutex> lock(job.mu);
  const auto r = static_cast<std::size_t>(ctx.rank);
  if (entering) {
    join(job.collectives[job.next_collective[r]].entered, job.clock(ctx.rank));
    job.tick(ctx.rank);
    return;
  }
  // Every rank entered this collective before any leaves it: its join is complete. A
  // later one's is not, so a slow rank must not take it (it would order accesses that
  // are not).
  const std::uint64_t n = job.next_collective[r]++;
  Job::Collective& c = job.collectives[n];
  job.raise(ctx.rank, c.entered);
  if (++c.left == ctx.world) job.collectives.erase(n);
}

}  // namespace iris::host::races
