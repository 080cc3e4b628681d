// Check (sema): ast::Module -> tir::Module. Resolves names, binds compile-time
// parameters (defaults, overridden by -D), infers types and tile shapes, checks the
// RMA and memory-model rules, folds constants. Every rule violation is a diagnostic;
// the returned module is only meaningful when no error was emitted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "compiler/ast/ast.hpp"
#include "compiler/diagnostics/diagnostics.hpp"
#include "compiler/tir/tir.hpp"

namespace irisc {

struct SemaOptions {
  // -DNAME=VALUE: compile-time parameter overrides (any kernel that declares NAME).
  std::map<std::string, std::int64_t> defines;
  // Range of multiprocessor counts of the target family, for "may get zero programs"
  // (the driver sets them from the Target).
  int min_sms = 78, max_sms = 160;
  int max_world = 8;
};

tir::Module check(const ast::Module& module, const SemaOptions& options, Diagnostics& diags);

// -D values of type parameters: `-DT=bf16` defines T as kTypeDefineBase + the type's
// number, so integer and type defines travel in one map (CLI, JIT options, cache keys,
// host code objects). No integer a user writes comes near it.
inline constexpr std::int64_t kTypeDefineBase = 0x7479'7065'0000'0000;  // "type"
inline std::int64_t type_define(tir::ScalarType t) { return kTypeDefineBase + static_cast<std::int64_t>(t); }
// The type a define names, or nullopt for an integer define.
std::optional<tir::ScalarType> defined_type(std::int64_t define_value);

}  // namespace irisc
