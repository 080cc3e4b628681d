// Errors libiris reports to its users. Every failure the user can cause (bad sizes,
// a missing driver, a wrong kernel name) is an iris::Error with a message that says
// what was asked, what was found, and what to do; internal invariants are asserts.
#pragma once

#include <stdexcept>
#include <string>

namespace iris {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// No usable GPU: the driver library is missing, or it reports no device. Programs that
// can do something useful without a GPU (print "no GPU found", run CPU tests) catch it.
class NoDeviceError : public Error {
 public:
  using Error::Error;
};

}  // namespace iris
