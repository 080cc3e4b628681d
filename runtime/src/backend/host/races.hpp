// The host backend's race check (Options::check_races, IRIS_CHECK_RACES=1): conflicting
// plain accesses to one heap element from two ranks with nothing ordering them are an
// iris::Error naming both accesses (rank, tensor element, .iris line).
//
// Happens-before is tracked with a vector clock per rank (FastTrack-style epochs):
// - a release (a signal, an atomic with release or acq_rel order, the device barrier's
//   flag stores) joins the rank's clock into the flag's, then ticks the rank's own entry;
// - an acquire (a wait, an atomic with acquire or acq_rel order, the device barrier's
//   waits) joins the flag's clock into the rank's;
// - a release or acquire at block or device scope reaches only the same rank's
//   acquires and releases: between two GPUs only system scope orders anything;
// - a host collective (barrier, all_gather, broadcast, collective allocations) joins
//   every rank's clock into every rank's;
// - each plain load or store of an element checks the element's last write (and, for a
//   store, every rank's last read) against the rank's clock, then records itself;
// - atomics, signals and waits never conflict with one another, but they do with plain
//   accesses (a fill that zeroes a flag while a peer signals it loses the signal).
// Accesses within one rank are one agent (its programs are not checked against each
// other).
#pragma once

#include <atomic>
#include <string>

#include "iris/device/context.hpp"
#include "iris/error.hpp"

namespace iris::host::races {

class RaceError : public Error {
 public:
  using Error::Error;
};

// Turns the check on or off for the jobs that follow, forgetting what earlier jobs did.
void start(bool on);

// Whether accesses are checked (set per job from Options::check_races).
inline std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> on{false};
  return on;
}
inline bool enabled() { return enabled_flag().load(std::memory_order_relaxed); }

enum class Access { read, write, atomic_read, atomic_write };

// An access of rank ctx.rank to the element at `addr`, which is `tensor`[`index`]
// (`tensor` null: not known, as for libiris's fills),
// from the statement described by `site` (kept: the text must live as long as the
// process; intern() makes such texts). Throws RaceError on a conflict. An atomic write
// that releases is recorded before its release().
void access(const device::Context& ctx, const void* addr, Access kind, const char* site, const char* tensor,
            long long index);
// `system`: a release or acquire at system scope. One at block or device scope orders
// nothing for another GPU (docs/runtime.md): it pairs only with this rank's own.
void release(const device::Context& ctx, const void* flag, bool system = true);
void acquire(const device::Context& ctx, const void* flag, bool system = true);
// Around a host collective of rank ctx.rank: every rank enters before any leaves.
void collective(const device::Context& ctx, bool entering);

// A process-lifetime copy of `text` (the same pointer for the same text).
const char* intern(const std::string& text);

}  // namespace iris::host::races
