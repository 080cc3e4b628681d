// SHA-256 (FIPS 180-4), for JIT cache keys and the integrity check of cache entries.
// Written here rather than taken from OpenSSL so libiris keeps no extra run-time
// dependency; speed hardly matters (keys and code objects are small).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace iris {

class Sha256 {
 public:
  using Digest = std::array<std::byte, 32>;

  Sha256();
  void update(std::span<const std::byte> data);
  void update(std::string_view text);
  // The digest of everything updated so far. The object must not be used afterwards.
  Digest finish();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

Sha256::Digest sha256(std::span<const std::byte> data);
// Lower-case hex of the digest of `text`.
std::string sha256_hex(std::string_view text);
// Lower-case hex of any bytes.
std::string to_hex(std::span<const std::byte> bytes);

}  // namespace iris
