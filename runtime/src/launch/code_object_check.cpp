// Structural checks of cubins, AMDGPU code objects, fatbins and PTX before the driver
// loads them (see code_object_check.hpp). Every offset and size is read little-endian from the bytes
// and every sum is overflow-checked: the checker itself must not read out of bounds.
#include "launch/code_object_check.hpp"

#include <cstdint>

#include "compiler/contract/host_code.hpp"
#include "iris/error.hpp"

namespace iris {
namespace {

using Bytes = std::span<const std::byte>;

// Callers check that [at, at + N) lies inside `b` before reading.
std::uint64_t le(Bytes b, std::uint64_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | static_cast<std::uint8_t>(b[static_cast<std::size_t>(at) + i]);
  return v;
}
std::uint16_t u16(Bytes b, std::uint64_t at) { return static_cast<std::uint16_t>(le(b, at, 2)); }
std::uint32_t u32(Bytes b, std::uint64_t at) { return static_cast<std::uint32_t>(le(b, at, 4)); }
std::uint64_t u64(Bytes b, std::uint64_t at) { return le(b, at, 8); }

// The end of `count` records of `size` bytes from `offset`; false when it does not fit
// in 64 bits (then *end is UINT64_MAX, which is past any buffer).
bool end_of(std::uint64_t offset, std::uint64_t count, std::uint64_t size, std::uint64_t* end) {
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, size, &bytes) || __builtin_add_overflow(offset, bytes, end)) {
    *end = UINT64_MAX;
    return false;
  }
  return true;
}

std::string end_text(std::uint64_t end) {
  return end == UINT64_MAX ? "past byte 2^64" : "at byte " + std::to_string(end);
}

// Who is being checked, and what its bytes are called in messages: a cubin inside a
// fatbin is checked against its entry's payload, not the whole buffer.
struct Subject {
  std::string who;
  const char* container = "the buffer";
};

[[noreturn]] void corrupt(const Subject& s, const std::string& why) { throw Error(s.who + " is corrupt: " + why); }

// "<who> is truncated: <what> at byte <end> but the buffer has <size> bytes".
void within(const Subject& s, const std::string& what, std::uint64_t end, std::uint64_t size) {
  if (end <= size) return;
  throw Error(s.who + " is truncated: " + what + " " + end_text(end) + " but " + s.container + " has " +
              std::to_string(size) + " bytes");
}

// ---- ELF (cubin, AMDGPU code object) ------------------------------------------------------
constexpr std::uint64_t kEhdrBytes = 64, kPhdrBytes = 56, kShdrBytes = 64;
constexpr std::uint32_t kShtNull = 0, kShtSymtab = 2, kShtStrtab = 3, kShtRela = 4, kShtNobits = 8, kShtRel = 9,
                        kShtDynsym = 11;

// The ELF machine a code object must be built for, and what messages call it.
struct Machine {
  std::uint16_t id;
  const char* what;
};
constexpr Machine kCubin{190, "a CUDA cubin"};           // EM_CUDA
constexpr Machine kAmdgpu{224, "an AMDGPU code object"};  // EM_AMDGPU

void check_elf(Bytes b, const Subject& s, const Machine& want) {
  const std::uint64_t n = b.size();
  within(s, "its ELF header ends", kEhdrBytes, n);
  const auto ident = [&](int i) { return static_cast<unsigned>(static_cast<std::uint8_t>(b[static_cast<std::size_t>(i)])); };
  if (ident(4) != 2) corrupt(s, "it is not a 64-bit ELF file (EI_CLASS is " + std::to_string(ident(4)) + ", not 2)");
  if (ident(5) != 1) corrupt(s, "it is not a little-endian ELF file (EI_DATA is " + std::to_string(ident(5)) + ", not 1)");
  const std::uint16_t machine = u16(b, 18);
  if (machine != want.id) {
    corrupt(s, "it is an ELF file for machine " + std::to_string(machine) + ", not " + want.what + " (machine " +
                   std::to_string(want.id) + ")");
  }
  const std::uint64_t phoff = u64(b, 32), shoff = u64(b, 40);
  const std::uint16_t ehsize = u16(b, 52), phentsize = u16(b, 54), phnum = u16(b, 56);
  const std::uint16_t shentsize = u16(b, 58), e_shnum = u16(b, 60), e_shstrndx = u16(b, 62);
  if (ehsize != kEhdrBytes) corrupt(s, "its ELF header size is " + std::to_string(ehsize) + ", not 64");

  std::uint64_t end = 0;
  if (phnum != 0) {
    if (phentsize < kPhdrBytes) corrupt(s, "its program header size is " + std::to_string(phentsize) + ", less than 56");
    end_of(phoff, phnum, phentsize, &end);
    within(s, "its program headers end", end, n);
    for (std::uint64_t i = 0; i < phnum; ++i) {
      const std::uint64_t ph = phoff + i * phentsize;
      const std::uint64_t offset = u64(b, ph + 8), filesz = u64(b, ph + 32);
      end_of(offset, 1, filesz, &end);
      within(s, "its program segment " + std::to_string(i) + ", from byte " + std::to_string(offset) + ", ends", end, n);
    }
  }

  // A code object always has sections: the driver finds kernels, their parameters and
  // resources through them (an AMDGPU one through .dynsym and its notes). Section 0 holds the counts that do not fit in the header
  // (ELF extended numbering: e_shnum 0, e_shstrndx 0xffff).
  if (shoff == 0) corrupt(s, "it has no section headers (e_shoff is 0)");
  if (shentsize < kShdrBytes) corrupt(s, "its section header size is " + std::to_string(shentsize) + ", less than 64");
  end_of(shoff, 1, shentsize, &end);
  within(s, "its section headers end", end, n);
  const std::uint64_t shnum = e_shnum != 0 ? e_shnum : u64(b, shoff + 32);
  const std::uint64_t shstrndx = e_shstrndx != 0xffff ? e_shstrndx : u32(b, shoff + 40);
  if (shnum == 0) corrupt(s, "its section count is 0");
  end_of(shoff, shnum, shentsize, &end);
  within(s, "its section headers end", end, n);
  const auto header = [&](std::uint64_t i) { return shoff + i * shentsize; };

  if (shstrndx == 0 || shstrndx >= shnum) {
    corrupt(s, "its section-name table index (e_shstrndx) is " + std::to_string(shstrndx) + " but it has " +
                   std::to_string(shnum) + " sections");
  }
  const std::uint64_t names_at = u64(b, header(shstrndx) + 24), names_size = u64(b, header(shstrndx) + 32);
  if (u32(b, header(shstrndx) + 4) != kShtStrtab) {
    corrupt(s, "its section-name table (section " + std::to_string(shstrndx) + ") is not a string table");
  }
  end_of(names_at, 1, names_size, &end);
  within(s, "its section-name table (section " + std::to_string(shstrndx) + ") ends", end, n);
  const auto section = [&](std::uint64_t i) {
    const std::uint64_t at = u32(b, header(i));
    std::string text = "section " + std::to_string(i);
    if (at >= names_size) return text;
    std::string name;
    for (std::uint64_t c = names_at + at; c < names_at + names_size && name.size() < 64; ++c) {
      const char ch = static_cast<char>(b[static_cast<std::size_t>(c)]);
      if (ch == '\0') break;
      name += ch;
    }
    return name.empty() ? text : text + " (" + name + ")";
  };

  for (std::uint64_t i = 1; i < shnum; ++i) {
    const std::uint64_t h = header(i);
    const std::uint32_t name = u32(b, h), type = u32(b, h + 4), link = u32(b, h + 40), info = u32(b, h + 44);
    const std::uint64_t offset = u64(b, h + 24), size = u64(b, h + 32), entsize = u64(b, h + 56);
    if (name >= names_size) {
      corrupt(s, "section " + std::to_string(i) + "'s name is at byte " + std::to_string(name) +
                     " of a section-name table of " + std::to_string(names_size) + " bytes");
    }
    if (type == kShtNull || type == kShtNobits) continue;
    end_of(offset, 1, size, &end);
    within(s, "its " + section(i) + ", from byte " + std::to_string(offset) + ", ends", end, n);
    const bool symbol_table = type == kShtSymtab || type == kShtDynsym;
    if (symbol_table || type == kShtRel || type == kShtRela) {
      const std::uint64_t entry = type == kShtRel ? 16 : 24;
      if (entsize != entry || size % entry != 0) {
        corrupt(s, section(i) + " holds " + std::to_string(size) + " bytes in entries of " + std::to_string(entsize) +
                       " bytes; its entries are " + std::to_string(entry) + " bytes each");
      }
      if (link == 0 || link >= shnum) {
        corrupt(s, section(i) + " links to section " + std::to_string(link) + " but it has " + std::to_string(shnum) +
                       " sections");
      }
      if (!symbol_table && info >= shnum) {
        corrupt(s, section(i) + " relocates section " + std::to_string(info) + " but it has " + std::to_string(shnum) +
                       " sections");
      }
    }
  }

  // The driver looks kernels up through the symbols: each one's name inside its string
  // table and its section a real one; each relocation's symbol inside its table. (All
  // section ranges are inside the buffer by now.)
  constexpr std::uint16_t kShnLoReserve = 0xff00;
  for (std::uint64_t i = 1; i < shnum; ++i) {
    const std::uint64_t h = header(i);
    const std::uint32_t type = u32(b, h + 4), link = u32(b, h + 40);
    const bool symbol_table = type == kShtSymtab || type == kShtDynsym;
    if (!symbol_table && type != kShtRel && type != kShtRela) continue;
    const std::uint64_t offset = u64(b, h + 24), size = u64(b, h + 32), entsize = u64(b, h + 56);
    const std::uint32_t link_type = u32(b, header(link) + 4);
    if (symbol_table) {
      if (link_type != kShtStrtab) corrupt(s, section(i) + " names its symbols in " + section(link) + ", not a string table");
      const std::uint64_t names = u64(b, header(link) + 32);
      for (std::uint64_t sym = 0; sym < size / entsize; ++sym) {
        const std::uint64_t at = offset + sym * entsize;
        const std::uint32_t name = u32(b, at);
        const std::uint16_t shndx = u16(b, at + 6);
        if (name >= names) {
          corrupt(s, "symbol " + std::to_string(sym) + " of " + section(i) + " has its name at byte " + std::to_string(name) +
                         " of a string table of " + std::to_string(names) + " bytes");
        }
        if (shndx < kShnLoReserve && shndx >= shnum) {
          corrupt(s, "symbol " + std::to_string(sym) + " of " + section(i) + " is in section " + std::to_string(shndx) +
                         " but it has " + std::to_string(shnum) + " sections");
        }
      }
      continue;
    }
    if (link_type != kShtSymtab && link_type != kShtDynsym) {
      corrupt(s, section(i) + " takes its symbols from " + section(link) + ", not a symbol table");
    }
    const std::uint64_t symbols = u64(b, header(link) + 32) / 24;
    for (std::uint64_t r = 0; r < size / entsize; ++r) {
      const std::uint64_t symbol = u64(b, offset + r * entsize + 8) >> 32;  // r_info
      if (symbol >= symbols) {
        corrupt(s, "relocation " + std::to_string(r) + " of " + section(i) + " uses symbol " + std::to_string(symbol) +
                       " but the symbol table has " + std::to_string(symbols));
      }
    }
  }
}

// ---- fatbin -------------------------------------------------------------------------------
// nvcc -fatbin output: a header {u32 magic 0xBA55ED50, u16 version 1, u16 header size,
// u64 size of the entries}, then entries, each {u16 kind (1 PTX, 2 cubin), u16 version,
// u32 header size, u64 payload size (padded), u32 stored size (compressed payloads),
// u32, u32 tool version, u32 arch (90 = sm_90), ...} followed by its payload.
constexpr std::uint16_t kFatbinVersion = 1;
constexpr std::uint64_t kFatbinHeaderBytes = 16, kEntryHeaderBytes = 64;

// Called once the entry's 64-byte header is known to be inside the fatbin.
std::string entry_text(Bytes b, std::uint64_t at, int index) {
  const std::uint16_t kind = u16(b, at);
  std::string text = "entry " + std::to_string(index) + " (";
  text += kind == 1 ? "PTX" : kind == 2 ? "cubin" : "kind " + std::to_string(kind);
  text += (kind == 1 ? " for compute_" : " for sm_") + std::to_string(u32(b, at + 28));
  return text + ", at byte " + std::to_string(at) + ")";
}

void check_fatbin(Bytes b, const Subject& s) {
  const std::uint64_t n = b.size();
  within(s, "its fatbin header ends", kFatbinHeaderBytes, n);
  const std::uint16_t version = u16(b, 4), header_size = u16(b, 6);
  const std::uint64_t fat_size = u64(b, 8);
  if (version != kFatbinVersion) corrupt(s, "its fatbin version is " + std::to_string(version) + ", not 1");
  if (header_size < kFatbinHeaderBytes) corrupt(s, "its fatbin header size is " + std::to_string(header_size) + ", less than 16");
  std::uint64_t last = 0;
  end_of(header_size, 1, fat_size, &last);
  within(s, "its entries end", last, n);
  if (fat_size == 0) corrupt(s, "the fatbin has no entries");

  int index = 0;
  for (std::uint64_t at = header_size; at < last;) {
    ++index;
    std::uint64_t end = 0;
    end_of(at, 1, kEntryHeaderBytes, &end);
    if (end > last) {
      corrupt(s, "entry " + std::to_string(index) + " at byte " + std::to_string(at) + " needs a " +
                     std::to_string(kEntryHeaderBytes) + "-byte header but the entries end at byte " + std::to_string(last));
    }
    const std::uint32_t entry_header = u32(b, at + 4);
    const std::uint64_t payload = u64(b, at + 8), stored = u32(b, at + 16);
    const std::string entry = entry_text(b, at, index);
    if (entry_header < kEntryHeaderBytes) {
      corrupt(s, entry + " has a header of " + std::to_string(entry_header) + " bytes, less than " +
                     std::to_string(kEntryHeaderBytes));
    }
    end_of(at + entry_header, 1, payload, &end);
    if (end > last) {
      corrupt(s, entry + " ends " + end_text(end) + " but the fatbin's entries end at byte " + std::to_string(last));
    }
    if (stored > payload) {
      corrupt(s, entry + " stores " + std::to_string(stored) + " bytes in a payload of " + std::to_string(payload));
    }
    const Bytes body = b.subspan(static_cast<std::size_t>(at + entry_header), static_cast<std::size_t>(payload));
    // Uncompressed cubins are parsed by the driver as they are: check them too.
    // (Compressed payloads start with their compressor's magic, not ELF's.)
    if (body.size() >= 4 && static_cast<std::uint8_t>(body[0]) == 0x7f && static_cast<char>(body[1]) == 'E' &&
        static_cast<char>(body[2]) == 'L' && static_cast<char>(body[3]) == 'F') {
      check_elf(body, {s.who + "'s " + entry, "the entry's payload"}, kCubin);
    }
    at = end;
  }
}

// ---- PTX ----------------------------------------------------------------------------------
void check_ptx(Bytes b, const Subject& s) {
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (b[i] == std::byte{0} && i + 1 != b.size()) {
      corrupt(s, "it is PTX text with a NUL byte at byte " + std::to_string(i) + " of " + std::to_string(b.size()) +
                     " (only the last byte may be NUL)");
    }
  }
}

// ---- host code ------------------------------------------------------------------------------
void check_host(Bytes b, const Subject& s) {
  irisc::HostCode code;
  std::string why;
  if (!irisc::read_host_code(b, &code, &why)) corrupt(s, "it is a malformed host code object: " + why);
  check_ptx(b, s);  // text: no NUL inside (the backend reads it NUL-terminated)
}

}  // namespace

void check_code_object(std::span<const std::byte> bytes, CodeObjectFormat format, const std::string& name) {
  const Subject s{name};
  switch (format) {
    case CodeObjectFormat::cubin: check_elf(bytes, s, kCubin); return;
    case CodeObjectFormat::amdgpu: check_elf(bytes, s, kAmdgpu); return;
    case CodeObjectFormat::fatbin: check_fatbin(bytes, s); return;
    case CodeObjectFormat::ptx: check_ptx(bytes, s); return;
    case CodeObjectFormat::host: check_host(bytes, s); return;
    case CodeObjectFormat::unknown: break;
  }
  throw Error(name + " is not a code object (expected a cubin, a fatbin, PTX text, an AMDGPU code object or host code; "
              "it is " +
              std::to_string(bytes.size()) + " bytes that look like none of them)");
}

}  // namespace iris
