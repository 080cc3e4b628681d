// Options: environment overrides and validation (see iris/options.hpp).
#include "iris/options.hpp"

#include <cstdlib>
#include <string>

#include "iris/device/context.hpp"
#include "iris/error.hpp"
#include "iris/size.hpp"

namespace iris {
namespace {

int parse_int(const char* text, const char* what) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < -1000000 || v > 1000000) {
    throw Error(std::string(what) + ": '" + text + "' is not an integer");
  }
  return static_cast<int>(v);
}

double parse_seconds(const char* text, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= 0) || v > 1e9) {
    throw Error(std::string(what) + ": '" + text + "' is not a number of seconds (0 means forever)");
  }
  return v;
}

}  // namespace

Options Options::from_env() {
  Options o;
  if (const char* v = secure_getenv("IRIS_HEAP_SIZE"); v && *v) o.heap_bytes = parse_size(v, "IRIS_HEAP_SIZE");
  if (const char* v = secure_getenv("IRIS_RANKS"); v && *v) o.ranks = parse_int(v, "IRIS_RANKS");
  if (const char* v = secure_getenv("IRIS_SHARE_GPUS"); v && *v) o.share_gpus = parse_int(v, "IRIS_SHARE_GPUS") != 0;
  if (const char* v = secure_getenv("IRIS_WAIT_TIMEOUT"); v && *v) o.wait_timeout = parse_seconds(v, "IRIS_WAIT_TIMEOUT");
  if (const char* v = secure_getenv("IRIS_HOST_TIMEOUT"); v && *v) o.host_timeout = parse_seconds(v, "IRIS_HOST_TIMEOUT");
  if (const char* v = secure_getenv("IRIS_TRACE"); v && *v) o.trace = v;
  if (const char* v = secure_getenv("IRIS_BACKEND"); v && *v) o.backend = v;
  if (const char* v = secure_getenv("IRIS_CHECK_RACES"); v && *v) o.check_races = parse_int(v, "IRIS_CHECK_RACES") != 0;
  return o;
}

void Options::validate() const {
  if (heap_bytes == 0) throw Error("heap size must be positive (got 0 bytes)");
  if (heap_bytes % kHeapGranularity != 0) {
    throw Error("heap size " + std::to_string(heap_bytes) + " bytes (" + format_bytes(heap_bytes) +
                ") is not a multiple of " + format_bytes(kHeapGranularity) + "; try " +
                format_bytes((heap_bytes / kHeapGranularity + 1) * kHeapGranularity));
  }
  if (!(wait_timeout >= 0) || wait_timeout > 1e9) {
    throw Error("wait timeout must be a number of seconds >= 0 (0: forever), got " + std::to_string(wait_timeout));
  }
  if (!(host_timeout >= 0) || host_timeout > 1e9) {
    throw Error("host timeout must be a number of seconds >= 0 (0: forever), got " + std::to_string(host_timeout));
  }
  if (!backend.empty() && backend != "cuda" && backend != "hip" && backend != "host") {
    throw Error("unknown backend '" + backend + "' (choose cuda, hip or host)");
  }
  if (ranks < 0) throw Error("rank count must be positive (got " + std::to_string(ranks) + ")");
  if (ranks > device::kMaxRanks) {
    throw Error("at most " + std::to_string(device::kMaxRanks) + " ranks are supported (got " +
                std::to_string(ranks) + ")");
  }
}

}  // namespace iris
