// A small, well-formed ELF64 code object built byte by byte, for the code-object tests:
// a header, a section-name table, .dynstr, .dynsym with one exported symbol
// (`iris_metadata`, default visibility) and the .rodata section holding its bytes, as an
// AMDGPU code object lays out its launch contract. No program headers: the checks need
// none, and no driver ever loads it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace iris::test {

constexpr std::uint16_t kEmCuda = 190;
constexpr std::uint16_t kEmAmdgpu = 224;

// Offsets of the parts of what minimal_elf builds, for tests that corrupt them.
struct ElfLayout {
  std::size_t dynstr = 0, dynsym = 0, rodata = 0, section_headers = 0;
  static constexpr std::size_t kDynsymIndex = 3;
};

inline std::vector<std::byte> minimal_elf(std::uint16_t machine, std::string_view metadata, ElfLayout* layout = nullptr) {
  std::vector<std::byte> b;
  auto put = [&](std::size_t at, int n, std::uint64_t v) {
    if (b.size() < at + static_cast<std::size_t>(n)) b.resize(at + static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<std::byte>(v >> (8 * i));
  };
  auto append = [&](std::string_view text) {
    const std::size_t at = b.size();
    for (char c : text) b.push_back(static_cast<std::byte>(c));
    return at;
  };
  auto align8 = [&] { b.resize((b.size() + 7) / 8 * 8); };

  b.resize(64);
  const std::string shstrtab("\0.shstrtab\0.dynstr\0.dynsym\0.rodata\0", 35);
  const std::string dynstr("\0iris_metadata\0", 15);
  const std::size_t shstrtab_at = append(shstrtab);
  const std::size_t dynstr_at = append(dynstr);
  align8();
  const std::size_t dynsym_at = b.size();
  b.resize(dynsym_at + 2 * 24);  // the null symbol, then iris_metadata
  const std::size_t rodata_at = append(metadata);
  b.push_back(std::byte{0});
  const std::size_t rodata_size = metadata.size() + 1;
  put(dynsym_at + 24, 4, 1);              // st_name: "iris_metadata"
  put(dynsym_at + 24 + 4, 1, 0x11);       // st_info: STB_GLOBAL, STT_OBJECT
  put(dynsym_at + 24 + 5, 1, 0);          // st_other: STV_DEFAULT
  put(dynsym_at + 24 + 6, 2, 4);          // st_shndx: .rodata
  put(dynsym_at + 24 + 16, 8, rodata_size);
  align8();
  const std::size_t shoff = b.size();
  b.resize(shoff + 5 * 64);
  // name, type, offset, size, link, info, entsize
  auto section = [&](std::size_t i, std::uint32_t name, std::uint32_t type, std::size_t offset, std::size_t size,
                     std::uint32_t link, std::uint32_t info, std::uint64_t entsize) {
    const std::size_t h = shoff + i * 64;
    put(h, 4, name);
    put(h + 4, 4, type);
    put(h + 24, 8, offset);
    put(h + 32, 8, size);
    put(h + 40, 4, link);
    put(h + 44, 4, info);
    put(h + 48, 8, 1);
    put(h + 56, 8, entsize);
  };
  section(1, 1, 3, shstrtab_at, shstrtab.size(), 0, 0, 0);   // .shstrtab: SHT_STRTAB
  section(2, 11, 3, dynstr_at, dynstr.size(), 0, 0, 0);      // .dynstr: SHT_STRTAB
  section(3, 19, 11, dynsym_at, 2 * 24, 2, 1, 24);           // .dynsym: SHT_DYNSYM
  section(4, 27, 1, rodata_at, rodata_size, 0, 0, 0);        // .rodata: SHT_PROGBITS

  const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  for (std::size_t i = 0; i < sizeof ident; ++i) b[i] = static_cast<std::byte>(ident[i]);
  put(16, 2, 3);        // e_type: ET_DYN
  put(18, 2, machine);  // e_machine
  put(20, 4, 1);        // e_version
  put(40, 8, shoff);    // e_shoff
  put(52, 2, 64);       // e_ehsize
  put(58, 2, 64);       // e_shentsize
  put(60, 2, 5);        // e_shnum
  put(62, 2, 1);        // e_shstrndx
  if (layout) *layout = {dynstr_at, dynsym_at, rodata_at, shoff};
  return b;
}

}  // namespace iris::test
