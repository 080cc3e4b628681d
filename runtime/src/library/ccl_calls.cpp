// Call descriptors and the collectives' words for a wait on their flags (ccl_calls.hpp).
#include "library/ccl_calls.hpp"

#include <cstdio>
#include <vector>

#include "iris/ccl.hpp"

namespace iris::ccl {

const char* name(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::all_gather: return "all_gather";
    case Collective::all_to_all: return "all_to_all";
    case Collective::broadcast: return "broadcast";
  }
  return "?";
}

namespace {

std::uint32_t count_fold(std::size_t n) {
  std::uint32_t h = 0;
  for (; n; n >>= 12) h ^= static_cast<std::uint32_t>(n & 0xfff);
  return h;
}

// A descriptor's fields (call_descriptor says where each lies).
struct Call {
  unsigned collective, how, dtype, fold;
  int op, root;
};

Call fields_of(std::uint32_t d) {
  return {d >> 29, (d >> 24) & 31u, (d >> 20) & 15u, d & 0xfffu, static_cast<int>((d >> 18) & 3u) - 1,
          static_cast<int>((d >> 12) & 63u) - 1};
}

std::string hex(unsigned v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", digits, v);
  return buf;
}

// "all_reduce of 1000 f32 elements (max, one_shot_push)"; without `count` (0), "of f32
// elements". A descriptor no call of this library makes (a word of something else) is
// said as such.
std::string call_text(std::uint32_t d, std::size_t count) {
  const Call c = fields_of(d);
  const bool known = c.collective <= static_cast<unsigned>(Collective::broadcast) && c.dtype <= static_cast<unsigned>(DType::u64) &&
                     c.how <= (c.collective == 0 ? static_cast<unsigned>(Algorithm::two_shot_slots)
                                                 : static_cast<unsigned>(Route::slots));
  if (!known) return "a call this library does not make (descriptor " + hex(d, 8) + ")";
  const auto coll = static_cast<Collective>(c.collective);
  std::string s = std::string(name(coll)) + " of " + (count ? std::to_string(count) + " " : std::string()) +
                  std::string(dtype_name(static_cast<DType>(c.dtype))) + " elements (";
  if (c.op >= 0) s += std::string(name(static_cast<ReduceOp>(c.op))) + ", ";
  if (c.root >= 0) s += "root " + std::to_string(c.root) + ", ";
  s += coll == Collective::all_reduce ? name(static_cast<Algorithm>(c.how)) : name(static_cast<Route>(c.how));
  return s + ")";
}

// The peers' calls beside this rank's, as program p's call words of its current epoch
// show them: "; rank 1 called ... where this rank called ..." for each peer whose word
// differs (`differ`), and the peers with no word of this epoch (`absent`: they called
// something whose flags lie elsewhere, or nothing yet). Both empty where every word read
// matches.
struct Differences {
  std::string differ, absent;
};

// `epoch`: the call's epoch where the wait says it (a wait for a call word), else 0 and
// it is read from the channel's counters (a grid kernel's programs that went on past
// a wait that gave up may have closed the call there already).
Differences calls_that_differ(const ChannelNotes& n, int world, int rank, std::size_t p, const Context::WaitRead& read,
                              std::uint64_t epoch) {
  const std::size_t W = static_cast<std::size_t>(world);
  std::uint64_t e = epoch;
  if (e == 0) {
    if (!n.state || !read(n.state + (n.grid ? 0 : p), &e, sizeof e)) return {};
    if (n.grid) ++e;
  }
  std::vector<std::uint64_t> words(W);
  const std::uint64_t* at = n.flags + (kCallPoint + e % kCallPoints) * n.pmax * W + p * W;
  if (!read(at, words.data(), W * sizeof(std::uint64_t))) return {};
  const auto epoch_of = [](std::uint64_t w) { return w >> 32; };
  // This rank's own word, where it announced it already; else the call it noted last.
  const std::uint64_t own = words[static_cast<std::size_t>(rank)];
  const std::uint32_t mine = epoch_of(own) == e ? static_cast<std::uint32_t>(own) : n.call;
  // broadcast's other ranks wait for root's word alone; its root waits for everyone's.
  const int root = fields_of(mine).root;
  std::string out, absent;
  for (std::size_t r = 0; r < W; ++r) {
    if (static_cast<int>(r) == rank || (n.root_only && rank != root && static_cast<int>(r) != root)) continue;
    if (epoch_of(words[r]) != e) {
      absent += (absent.empty() ? "" : ", ") + std::to_string(r);
      continue;
    }
    const auto theirs = static_cast<std::uint32_t>(words[r]);
    if (theirs == mine) continue;
    out += "; rank " + std::to_string(r) + " called " + call_text(theirs, 0);
    if (fields_of(theirs).fold != fields_of(mine).fold && (theirs & ~0xfffu) == (mine & ~0xfffu)) {
      out += " of another element count (folded into 12 bits: " + hex(fields_of(theirs).fold, 3) + ", this rank's " +
             hex(fields_of(mine).fold, 3) + ")";
    }
    out += " where this rank called " + call_text(mine, mine == n.call ? n.count : 0);
  }
  if (!absent.empty()) {
    absent = "; " + std::string(absent.find(',') == std::string::npos ? "rank " : "ranks ") + absent +
             " had not come to this call here (a different collective call, or none)";
  }
  return {out, absent};
}

}  // namespace

std::uint32_t call_descriptor(Collective c, unsigned how, DType dt, std::size_t count, int op, int root) {
  return static_cast<std::uint32_t>(c) << 29 | (how & 31u) << 24 | (static_cast<unsigned>(dt) & 15u) << 20 |
         (static_cast<unsigned>(op + 1) & 3u) << 18 | (static_cast<unsigned>(root + 1) & 63u) << 12 | count_fold(count);
}

std::string CallBook::explain(const void* where, std::uint64_t expected, const Context::WaitRead& read) const {
  const auto* w = static_cast<const std::uint64_t*>(where);
  const std::size_t W = static_cast<std::size_t>(world);
  for (const auto& [channel, n] : channels) {
    std::string peer;
    std::size_t program = 0;
    // The call's epoch and descriptor where the wait says them (a call word holds both;
    // a grid kernel's arrival and departure flags the epoch): the call that waited,
    // where the channel's notes may already hold later calls queued behind it.
    std::uint64_t epoch = 0;
    std::uint32_t call = n.call;
    if (n.flags && w >= n.flags && w < n.flags + kPairedPoints * n.pmax * W) {
      const std::size_t i = static_cast<std::size_t>(w - n.flags);
      program = i % (n.pmax * W) / W;
      peer = "rank " + std::to_string(i % W) + (n.grid ? "" : "'s program " + std::to_string(program));
      if (i / (n.pmax * W) >= kCallPoint) {
        peer += "'s call word";
        epoch = expected >> 32;
        call = static_cast<std::uint32_t>(expected);
      } else {
        if (n.grid) epoch = expected;
        // The same point's flags of every rank: who had come this far.
        std::vector<std::uint64_t> seen(W);
        if (read(n.flags + (i - i % W), seen.data(), W * sizeof(std::uint64_t))) {
          std::string came, not_yet;
          for (std::size_t r = 0; r < W; ++r) {
            std::string& list = seen[r] >= expected ? came : not_yet;
            list += (list.empty() ? "" : ", ") + std::to_string(r);
          }
          peer += " (ranks that had: " + (came.empty() ? std::string("none") : came) + "; had not: " +
                  (not_yet.empty() ? std::string("none") : not_yet) + ")";
        }
      }
    } else if (n.words && w >= n.words && w < n.words + n.words_count && n.row_words && n.rows_per_program) {
      const std::size_t row = static_cast<std::size_t>(w - n.words) / n.row_words;
      program = row / n.rows_per_program;
      // Rows a program: 2 world (one shot, the gathers), 4 world (two shot: each half's
      // second world rows hold the owners' reduced blocks), 2 (broadcast).
      const std::size_t r = row % n.rows_per_program;
      if (n.rows_per_program == 2 * W) {
        peer = "rank " + std::to_string(r % W) + "'s words";
      } else if (n.rows_per_program == 4 * W) {
        peer = "rank " + std::to_string(r % W) + (r % (2 * W) < W ? "'s words" : "'s reduced words");
      } else {
        peer = "the root's words (or, from kBroadcastRelayFrom at more than 2 ranks, their relay's)";
      }
    } else {
      continue;
    }
    // Program 0 runs in every call; the program that waited may not have a peer of
    // its number where the calls differ in size.
    Differences d = calls_that_differ(n, world, rank, 0, read, program == 0 ? epoch : 0);  // epochs are per program
    if (d.differ.empty() && program != 0) {
      Differences mine = calls_that_differ(n, world, rank, program, read, epoch);
      if (!mine.differ.empty() || d.absent.empty()) d = mine;
    }
    // Program 0's (and a grid kernel's) epoch counts the channel's calls.
    const std::uint64_t number = epoch && program == 0 ? epoch : n.calls;
    return "in iris::ccl::" + call_text(call, call == n.call ? n.count : 0) + ", this rank's call " + std::to_string(number) +
           " of its kernel '" + channel + "': it waited for " + peer + d.differ + d.absent +
           "; every rank must make the same collective calls, in the same order";
  }
  return "";
}

}  // namespace iris::ccl
