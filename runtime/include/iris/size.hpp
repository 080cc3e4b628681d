// Byte sizes as people write them: "64MiB", "1G", "4096" in, "1.5 GiB" out.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace iris {

// Parses a byte count with an optional unit: B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB (all
// binary, case-insensitive). Throws iris::Error on anything else, naming `what`
// (e.g. "--heap") in the message: negative or fractional byte counts, junk, overflow.
std::size_t parse_size(std::string_view text, std::string_view what = "size");

// "1.5 GiB", "256 B".
std::string format_bytes(std::size_t bytes);

}  // namespace iris
