// What a device wait recorded, in words (see wait_fault.hpp).
#include "job/wait_fault.hpp"

#include <cstdio>
#include <cstring>

namespace iris {
namespace {

const char* cmp_text(int cmp) {
  switch (static_cast<device::Cmp>(cmp)) {
    case device::Cmp::eq: return "==";
    case device::Cmp::ne: return "!=";
    case device::Cmp::gt: return ">";
    case device::Cmp::ge: return ">=";
    case device::Cmp::lt: return "<";
    case device::Cmp::le: return "<=";
  }
  return "?";
}

std::string site_text(const device::WaitFault& f) {
  return f.site[0] ? std::string(f.site, strnlen(f.site, sizeof f.site)) : "a kernel's wait_until";
}

std::string flag_text(const device::WaitFault& f, std::size_t heap_bytes) {
  if (f.flag_offset >= heap_bytes) return "a flag outside the symmetric heap";
  char offset[32];
  std::snprintf(offset, sizeof offset, "0x%llx", static_cast<unsigned long long>(f.flag_offset));
  return std::string("the flag at heap offset ") + offset;
}

std::string setter_text(const device::WaitFault& f) {
  return f.peer >= 0 ? " (set by rank " + std::to_string(f.peer) + ")" : std::string();
}

}  // namespace

std::string seconds_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  return buf;
}

std::string describe_gave_up(int rank, const device::WaitFault& f, std::size_t heap_bytes, const std::string& note) {
  const std::string who = "rank " + std::to_string(rank);
  const std::string after = seconds_text(static_cast<double>(f.waited_ns) * 1e-9);
  if (f.kind == 1) {
    return who + ": the device barrier gave up after " + after + ": this rank is at device barrier #" +
           std::to_string(f.expected) + ", but rank " + std::to_string(f.peer) + " has reached only #" +
           std::to_string(f.seen) +
           ". Every rank must call device_barrier() the same number of times; check rank " + std::to_string(f.peer) +
           " (did it fail, return early, or skip a barrier?), or raise the timeout (Options::wait_timeout, "
           "IRIS_WAIT_TIMEOUT; 0 waits forever)";
  }
  std::string m = who + ": a device wait gave up after " + after + " in " + site_text(f) + ": block " +
                  std::to_string(f.block) + " thread " + std::to_string(f.thread) + " waited for " +
                  flag_text(f, heap_bytes) + " (" + std::to_string(f.width * 8) + "-bit) to be " + cmp_text(f.cmp) +
                  " " + std::to_string(f.expected) + setter_text(f);
  m += ", but it is " + std::to_string(f.seen) + note + ". Check that ";
  m += f.peer >= 0 ? "rank " + std::to_string(f.peer) : std::string("a peer");
  m += " signals this flag with a value that satisfies the wait, or raise the timeout (Options::wait_timeout, "
       "IRIS_WAIT_TIMEOUT; 0 waits forever)";
  return m;
}

std::string describe_ended(const device::WaitFault& f, std::size_t heap_bytes) {
  if (f.kind == 1) {
    return "; it was at device barrier #" + std::to_string(f.expected) + ", which rank " + std::to_string(f.peer) +
           " had not reached (it was at #" + std::to_string(f.seen) + ")";
  }
  return "; it was waiting in " + site_text(f) + " (block " + std::to_string(f.block) + " thread " +
         std::to_string(f.thread) + ") for " + flag_text(f, heap_bytes) + " to be " + cmp_text(f.cmp) + " " +
         std::to_string(f.expected) + setter_text(f) + ", and it was " + std::to_string(f.seen);
}

}  // namespace iris
