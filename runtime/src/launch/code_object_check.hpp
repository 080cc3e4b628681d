// Structural checks of a code object before the driver sees it. The driver trusts the
// offsets and sizes written inside a cubin, an AMDGPU code object or a fatbin and reads
// wherever they point: a truncated or corrupt image kills the process (SIGSEGV inside
// libcuda) instead of failing the load. Every range the driver would follow is checked against the buffer
// here, without touching the GPU, so a bad image is an iris::Error naming the problem.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "iris/module.hpp"

namespace iris {

// Throws iris::Error naming `name` and saying exactly what is wrong when `bytes` is not
// a well-formed code object of `format` (as detect_code_object_format sniffed it):
//   cubin:  a 64-bit little-endian CUDA ELF whose header tables, sections (but
//           SHT_NOBITS) and program segments all lie inside the buffer;
//   amdgpu: the same checks for an AMDGPU ELF (e_machine 224), its .dynsym included;
//   fatbin: a fatbin header whose entries fit in the buffer, each entry's header and
//           payload inside the fatbin, and each uncompressed cubin entry a valid cubin;
//   PTX:    text, with a NUL byte at most as its last byte.
// `unknown` is an error too (the bytes look like no code object).
void check_code_object(std::span<const std::byte> bytes, CodeObjectFormat format, const std::string& name);

}  // namespace iris
