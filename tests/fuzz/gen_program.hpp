// A seeded generator of random, well-typed .iris programs, for fuzzing stages that need
// programs which get past sema (irisc_fuzz_nvrtc: every program sema accepts must give
// CUDA that NVRTC accepts). The generator models sema's typing rules (literal and index
// type adaptation, tile shapes, ranges, views, RMA and memory-model rules, constant
// folding, role program counts) so that most programs check cleanly, and covers the
// whole language: compile-time parameters (with and without defaults, -D overrides),
// scalar and tensor parameters (local and symmetric, 1-D and 2-D, every element type),
// size symbols and extent expressions, blocks / tiles / ranks / peers / range loops,
// if/else, lets (also ones used only in odd places: an index, a view bound, a rank, a
// wait index, a loop bound, a matmul operand), assignments, tile arithmetic, casts,
// reductions, fills, index(), loads with other:/from:, stores, get, atomics with every
// op/order/scope, signals and waits, slots (send / receive), data-and-flag words
// (store / load<T> with flag:), roles, matmul, and f16/bf16 in unusual positions.
//
// Deterministic: the same seed gives the same program (own integer helpers on
// std::mt19937_64, no std distributions). Programs are kept small (depth-limited).
//
// A program is a tree of removable items (kernels, parameters, statements, else
// branches) so a minimizer can drop them one at a time and render the rest.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace irisc_fuzz {

// One statement: a leaf ("store(x[i], 1.0);") or a block ("for i in blocks(N, 64)",
// rendered with its braces), optionally with an else branch.
struct GenNode {
  std::string head;
  bool is_block = false;
  std::vector<GenNode> body;
  bool has_else = false;
  bool else_is_if = false;  // else_body is one `if` node, rendered as `} else if ...`
  std::vector<GenNode> else_body;
};

struct GenKernel {
  std::string name;
  std::vector<std::string> consts;  // "B: int = 64"
  std::vector<std::string> params;  // "x: symmetric tensor<f32>[N]"
  std::vector<GenNode> body;
};

struct GenProgram {
  std::uint64_t seed = 0;
  std::map<std::string, std::int64_t> defines;  // -DNAME=VALUE the program needs
  std::vector<GenKernel> kernels;
  // The .iris text (no header comment).
  std::string render() const;
  // "-DB=64 -DN=3" (empty when there are none).
  std::string define_args() const;
};

struct GenOptions {
  int max_block_depth = 3;   // nested blocks (loops, ifs, roles)
  int max_expr_depth = 3;    // operator nesting in one expression
  int max_stmts = 22;        // statements per kernel (hoisted lets included)
};

GenProgram generate_program(std::uint64_t seed, const GenOptions& options = {});

// ---- minimization support -------------------------------------------------------------
// Every removable item of a program, in a fixed order; remove_item(p, k) returns p
// without item k (k < count_items(p)). Items: whole kernels (when there are several),
// parameters, compile-time parameters, statements at any depth, else branches, and
// "unwrap" of a block (its body replaces it).
std::size_t count_items(const GenProgram& p);
GenProgram remove_item(const GenProgram& p, std::size_t k);

}  // namespace irisc_fuzz
