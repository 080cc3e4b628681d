// Evaluates the small integer expressions irisc writes into kernel metadata: tensor
// extents ("(N * world)"), grid sizes ("sms * 4"), role program counts
// ("iris_max(sms - 16, 1)"). Names are looked up in `vars`; + - * / % ( ) and
// iris_min/iris_max(a, b). Throws iris::Error on anything else.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace iris {

std::int64_t eval_launch_expr(const std::string& expr, const std::map<std::string, std::int64_t>& vars);

}  // namespace iris
