// What the fused ops' two files share (internal to library/): ops.cpp holds every op's
// schedules and their choice; ops_copy_engines.cpp the forms whose data the GPU's copy
// engines move beside the GEMM (docs/decisions/0007).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "iris/ops.hpp"

namespace iris::ops {

namespace internal {

using detail::Gemm;

// The call's stream: Options::stream, else the rank's.
Stream stream_of(Context& ctx, const Options& o);
// `count` u64 flags at `flags` on the heap, as a kernel argument.
Arg flags_arg(void* flags, std::int64_t count);
// T, BM and BN of the GEMM kernels.
std::map<std::string, std::int64_t> gemm_defines(const Gemm& g, const Options& o);
// C = A x B into `c` of shape [m, n] (a local or heap buffer).
void plain_matmul(Context& ctx, const Gemm& g, const void* a, std::int64_t m, void* c, const Options& o, Stream s);

}  // namespace internal

namespace detail {

// The tile of the forms that store each GEMM tile to the rank owning its rows (ops.cpp).
Options push_tile(Context& ctx, const char* what, const Gemm& g, const Options& asked, Options o);

// The copy-engine forms (ops_copy_engines.cpp).
void all_gather_matmul_copies(Context& ctx, const Gemm& g, const Options& o, void* gathered);
void matmul_all_scatter_copies(Context& ctx, const Gemm& g, const Options& o);
void matmul_reduce_scatter_copies(Context& ctx, const Gemm& g, const Options& asked, const Options& o);
void matmul_all_reduce_copies(Context& ctx, const Gemm& g, const Options& asked, const Options& o);

}  // namespace detail
}  // namespace iris::ops
