// Collectives on the symmetric heap, written in .iris (dsl/ccl/) and compiled through the
// JIT on first use (one compile shared by every rank of the process, then the on-disk
// cache). Every rank calls the same collectives in the same order, with tensors of the
// same sizes. Any world size and element count; called again and again without a
// reset; no host synchronization inside a call, so calls can be captured in a CUDA
// graph once each collective has run eagerly once (the first call of a collective on
// a context sets up its flags: a host barrier).
//
//   iris::ccl::all_reduce(ctx, x);                  // in place, sum
//   iris::ccl::all_reduce(ctx, x, y, {.op = iris::ccl::ReduceOp::max});
//   iris::ccl::all_gather(ctx, x, y);               // y has world * x.numel() elements
#pragma once

#include <cstddef>
#include <string>

#include "iris/context.hpp"
#include "iris/tensor.hpp"

namespace iris::ccl {

enum class ReduceOp { sum, max, min };

// How all_reduce moves data. one_shot: every rank reads every rank's input (fewest
// steps: small sizes); two_shot: each rank reduces 1/world of the blocks and writes the
// result to every rank (least traffic: large sizes); ring: reduce-scatter then
// all-gather around the ring of ranks, each rank storing only into its right
// neighbour's scratch (each link carries 2 (world - 1) / world of the data: for links
// that are not all-to-all);
// atomic: every rank adds its input into every rank's output (sums of 32- and 64-bit
// types only). one_shot_push and two_shot_push move the same data as one_shot and
// two_shot by stores alone (each rank stores into the receivers' scratch, receivers
// reduce from their own memory), with one flag round per step between the programs of
// equal number on every rank instead of grid-wide barriers. one_shot_ll is one_shot_push
// in data-and-flag words (each element beside the call's epoch in a 64-bit word: no
// fence, no separate flag; types of at most 4 bytes, inputs of at most kLlMostBytes).
// two_shot_ll is a reduce-scatter and an all-gather in those words: two trips over the
// links and no fence, each rank storing 2 (world - 1) / world of its input's words where
// one_shot_ll stores world - 1 times them (the same limits). one_shot_slots and
// two_shot_slots are one_shot_ll and two_shot_ll in slots (a .iris kernel's `send` and
// `receive`): each value travels alone at its own size and its arrival is its own
// signal (all bits set marks an empty slot), so a call is one trip over the link a step
// at the data's size, not twice it; f32, f16 and bf16 only, inputs of at most
// kSlotsMostBytes. automatic picks by size.
enum class Algorithm {
  automatic, one_shot, two_shot, ring, atomic, one_shot_push, two_shot_push, one_shot_ll, two_shot_ll,
  one_shot_slots, two_shot_slots
};

// Where all_gather, reduce_scatter, all_to_all and broadcast put what they receive.
// direct: into the output (a flag round when every rank has arrived, so its output is
// free, and one when the data has landed; broadcast: root scatters, the others
// all-gather each block as soon as root tells its owner it landed); reduce_scatter:
// into one scratch, which a rank writes only after hearing that its owner has read the
// last call's. staged: into a scratch of two parts that calls use in turn, then copied
// or reduced into the output: one flag round a call, for 2 world times the data in
// scratch (small sizes). ll: staged in data-and-flag words (all_reduce's one_shot_ll):
// no flag round, 2-4 times the bytes on the links; types of at most 4 bytes, outputs
// of at most kLlMostBytes. automatic picks by size, world and type: at 2 ranks ll (and
// one_shot_ll) for small calls of types of at most 4 bytes (one NVLink trip a call, no
// fence: 8 KiB calls 1.4-1.7x faster than staged on 2 x H100), staged above, direct for
// the largest (the sizes are in ccl_choices.cpp's tables, measured at 2 and 4 ranks). broadcast's
// ll route relays through the other ranks from a few hundred KiB at more than 2 ranks, so
// that root's link carries the words once. slots: the ll route in slots (all_reduce's
// one_shot_slots): each value alone at its own size, no flag round; f32, f16 and bf16,
// outputs of at most kSlotsMostBytes; broadcast's relays from a few hundred KiB at more
// than 2 ranks, as ll's does.
enum class Route { automatic, direct, staged, ll, slots };

// The most bytes one_shot_ll takes in and the ll route gives out in a call: their
// words take twice the data's bytes (a 4-byte flag beside every 4 bytes of data), in
// two halves of up to world rows each, and past a few MiB the doubled bytes on the links
// cost more than the fences they save.
inline constexpr std::size_t kLlMostBytes = std::size_t{4} << 20;
// The most bytes one_shot_slots and two_shot_slots take in and the slots route gives
// out in a call: their slots hold 2 world (one shot) or 4 (two shot) times the input, 2
// times the output (the route).
inline constexpr std::size_t kSlotsMostBytes = std::size_t{64} << 20;

struct Options {
  ReduceOp op = ReduceOp::sum;                 // all_reduce, reduce_scatter
  Algorithm algorithm = Algorithm::automatic;  // all_reduce
  Stream stream = nullptr;                     // default: the rank's stream
  // Programs (thread blocks) of the collectives whose programs pair up across ranks
  // (all but all_reduce's one_shot, two_shot, ring and atomic): 0 picks by size (the
  // power of two at or above the 4 KiB blocks each program walks, at most 2 per SM).
  // Every rank must pass the same.
  int programs = 0;
  Route route = Route::automatic;  // all_gather, reduce_scatter, all_to_all, broadcast
};

const char* name(ReduceOp op);
const char* name(Algorithm a);
const char* name(Route r);
// The route `collective` ("all_gather", "reduce_scatter", "all_to_all", "broadcast")
// takes for `bytes` bytes of output (broadcast: of x) of `dtype` at this world size.
Route choose_route(const char* collective, Route asked, std::size_t bytes, int world, DType dtype);
// Throws iris::Error naming `what` where `op` is not one of ReduceOp's values.
void require_op(const char* what, ReduceOp op);
// The algorithm all_reduce runs for `bytes` bytes at this world size.
Algorithm choose_all_reduce(Algorithm asked, std::size_t bytes, int world, DType dtype, ReduceOp op);

namespace detail {
void all_reduce(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, const Options& o);
void all_gather(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, const Options& o);
void reduce_scatter(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, const Options& o);
void all_to_all(Context& ctx, DType dt, const void* src, void* dst, std::size_t n, const Options& o);
void broadcast(Context& ctx, DType dt, void* x, std::size_t n, int root, const Options& o);
void check_sizes(const char* what, std::size_t src, std::size_t dst, std::size_t want_dst);
// elements / world, the elements of one rank's slice; iris::Error naming `what` where
// they do not split into world equal slices.
std::size_t slice_of(const char* what, std::size_t elements, int world);
}  // namespace detail

// dst = src combined over every rank; src and dst have the same size (may be one tensor).
template <class T>
void all_reduce(Context& ctx, const Tensor<T>& src, Tensor<T>& dst, const Options& o = {}) {
  detail::check_sizes("all_reduce", src.numel(), dst.numel(), src.numel());
  detail::all_reduce(ctx, dtype_of_v<T>, src.data(), dst.data(), src.numel(), o);
}
template <class T>
void all_reduce(Context& ctx, Tensor<T>& x, const Options& o = {}) {
  detail::all_reduce(ctx, dtype_of_v<T>, x.data(), x.data(), x.numel(), o);
}
// dst (world * src.numel() elements) gets rank r's src at r * src.numel().
template <class T>
void all_gather(Context& ctx, const Tensor<T>& src, Tensor<T>& dst, const Options& o = {}) {
  detail::check_sizes("all_gather", src.numel(), dst.numel(), src.numel() * static_cast<std::size_t>(ctx.world()));
  detail::all_gather(ctx, dtype_of_v<T>, src.data(), dst.data(), src.numel(), o);
}
// In place, as NCCL's in-place all_gather: x holds world slices of x.numel() / world
// elements, slice `rank` is this rank's input, and every slice ends up filled.
template <class T>
void all_gather(Context& ctx, Tensor<T>& x, const Options& o = {}) {
  const std::size_t n = detail::slice_of("all_gather (in place)", x.numel(), ctx.world());
  detail::all_gather(ctx, dtype_of_v<T>, x.data() + n * static_cast<std::size_t>(ctx.rank()), x.data(), n, o);
}
// dst (src.numel() / world elements) gets slice `rank` of src combined over every rank.
template <class T>
void reduce_scatter(Context& ctx, const Tensor<T>& src, Tensor<T>& dst, const Options& o = {}) {
  const auto w = static_cast<std::size_t>(ctx.world());
  if (dst.numel() != detail::slice_of("reduce_scatter", src.numel(), ctx.world())) {
    throw Error("reduce_scatter: the output has " + std::to_string(dst.numel()) + " elements, but an input of " +
                std::to_string(src.numel()) + " on " + std::to_string(w) + " ranks needs " +
                std::to_string(src.numel() / w) + " (the input / world)");
  }
  detail::reduce_scatter(ctx, dtype_of_v<T>, src.data(), dst.data(), dst.numel(), o);
}
// In place, as NCCL's in-place reduce_scatter: x (world slices) is the input, and slice
// `rank` of x receives that slice combined over every rank (the other slices keep what
// they held).
template <class T>
void reduce_scatter(Context& ctx, Tensor<T>& x, const Options& o = {}) {
  const std::size_t n = detail::slice_of("reduce_scatter (in place)", x.numel(), ctx.world());
  detail::reduce_scatter(ctx, dtype_of_v<T>, x.data(), x.data() + n * static_cast<std::size_t>(ctx.rank()), n, o);
}
// Slice q of rank r's src (world slices of n) becomes slice r of rank q's dst.
template <class T>
void all_to_all(Context& ctx, const Tensor<T>& src, Tensor<T>& dst, const Options& o = {}) {
  detail::check_sizes("all_to_all", src.numel(), dst.numel(), src.numel());
  detail::all_to_all(ctx, dtype_of_v<T>, src.data(), dst.data(), detail::slice_of("all_to_all", src.numel(), ctx.world()), o);
}
// Every rank's x becomes root's x.
template <class T>
void broadcast(Context& ctx, Tensor<T>& x, int root, const Options& o = {}) {
  detail::broadcast(ctx, dtype_of_v<T>, x.data(), x.numel(), root, o);
}

}  // namespace iris::ccl
