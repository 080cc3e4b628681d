// What a device wait recorded in a rank's control block (device::WaitFault), in words:
// a wait that gave up, or where a wait stood when a peer's failure ended it.
#pragma once

#include <cstddef>
#include <string>

#include "iris/device/context.hpp"

namespace iris {

// "12.5 s".
std::string seconds_text(double seconds);

// The error for fault 2: rank `rank`'s wait gave up, what it waited for and what to check.
// `note`: what a library said of the flag (Context::explain_waits), " (...)" or "".
std::string describe_gave_up(int rank, const device::WaitFault& f, std::size_t heap_bytes,
                             const std::string& note = "");

// For fault 3: "; it was waiting in <site> ... for <flag> to be >= 2, and it was 1",
// appended to the error of a rank that a peer's failure stopped.
std::string describe_ended(const device::WaitFault& f, std::size_t heap_bytes);

}  // namespace iris
