// A set of AMDGPU code objects of one source, one per GPU architecture: how libiris
// embeds its own kernels for AMD GPUs (written at build time by tools/amdgpu_kernels,
// read by the hip backend, which loads the one for the device's architecture).
//
// Layout: the line "iris-amdgpu-images 1", one line "<gfx name> <offset> <bytes>" per
// image, an empty line, then the images from the first multiple of 64 on, each at its
// offset from there (a multiple of 64, as ELF loaders like). An empty set (no bytes at
// all) means libiris was built without the AMD toolchain.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace iris::amdgpu_images {

inline constexpr std::string_view kMagic = "iris-amdgpu-images 1\n";

inline constexpr std::size_t align64(std::size_t n) { return (n + 63) / 64 * 64; }

inline std::string write(const std::vector<std::pair<std::string, std::string>>& images) {
  std::string index(kMagic), data;
  for (const auto& [arch, bytes] : images) {
    data.resize(align64(data.size()), '\0');
    index += arch + " " + std::to_string(data.size()) + " " + std::to_string(bytes.size()) + "\n";
    data += bytes;
  }
  index += "\n";
  index.resize(align64(index.size()), '\0');
  return index + data;
}

// Every image as (architecture, bytes); empty for an empty or malformed set.
inline std::vector<std::pair<std::string, std::span<const std::byte>>> read(std::span<const std::byte> set) {
  std::vector<std::pair<std::string, std::span<const std::byte>>> out;
  const std::string_view text(reinterpret_cast<const char*>(set.data()), set.size());
  if (!text.starts_with(kMagic)) return {};
  const auto number = [](std::string_view s, std::size_t* v) {
    *v = 0;
    if (s.empty() || s.size() > 18) return false;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      *v = *v * 10 + static_cast<std::size_t>(c - '0');
    }
    return true;
  };
  std::size_t at = kMagic.size();
  std::vector<std::pair<std::string, std::pair<std::size_t, std::size_t>>> index;
  for (;;) {
    const std::size_t eol = text.find('\n', at);
    if (eol == std::string_view::npos) return {};
    if (eol == at) {  // the empty line ends the index; the images start at the next multiple of 64
      const std::size_t data = align64(eol + 1);
      for (const auto& [arch, where] : index) {
        const auto [offset, size] = where;
        if (data > set.size() || offset > set.size() - data || size > set.size() - data - offset) return {};
        out.emplace_back(arch, set.subspan(data + offset, size));
      }
      return out;
    }
    const std::string_view line = text.substr(at, eol - at);
    const std::size_t a = line.find(' '), b = line.rfind(' ');
    std::size_t offset = 0, size = 0;
    if (a == std::string_view::npos || a == 0 || a == b || !number(line.substr(a + 1, b - a - 1), &offset) ||
        !number(line.substr(b + 1), &size)) {
      return {};
    }
    index.push_back({std::string(line.substr(0, a)), {offset, size}});
    at = eol + 1;
  }
}

}  // namespace iris::amdgpu_images
