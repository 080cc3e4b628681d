// Module metadata as JSON (see metadata.hpp).
#include "compiler/codegen/metadata.hpp"

#include <cstdio>

namespace irisc {
namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string kernel_symbol(const std::string& name) { return "iris_k_" + name; }

std::string metadata_json(const tir::Module& module, const std::vector<int>& threads) {
  std::string j = "{\"format\":\"irisc-metadata\",\"version\":1,\"kernels\":[";
  for (std::size_t i = 0; i < module.kernels.size(); ++i) {
    const tir::Kernel& k = module.kernels[i];
    if (i) j += ",";
    j += "{\"name\":" + quote(k.name) + ",\"symbol\":" + quote(kernel_symbol(k.name)) +
         ",\"threads\":" + std::to_string(threads[i]);
    j += ",\"grid\":" + quote(k.roles.empty() ? k.grid_expr : std::string());
    j += ",\"roles\":[";
    for (std::size_t r = 0; r < k.roles.size(); ++r) {
      j += std::string(r ? "," : "") + "{\"name\":" + quote(k.roles[r].name) + ",\"programs\":" +
           quote(k.roles[r].programs_expr) + "}";
    }
    j += "],\"constants\":{";
    for (std::size_t c = 0; c < k.constants.size(); ++c) {
      j += std::string(c ? "," : "") + quote(k.constants[c].first) + ":" + std::to_string(k.constants[c].second);
    }
    j += "},\"sizes\":[";
    for (std::size_t s = 0; s < k.size_symbols.size(); ++s) j += std::string(s ? "," : "") + quote(k.size_symbols[s]);
    j += "],\"params\":[";
    for (std::size_t p = 0; p < k.params.size(); ++p) {
      const tir::Param& prm = k.params[p];
      j += std::string(p ? "," : "") + "{\"name\":" + quote(prm.name) + ",\"kind\":" +
           (prm.is_tensor ? "\"tensor\"" : "\"scalar\"") + ",\"dtype\":" + quote(ast::scalar_type_name(prm.elem));
      if (prm.is_tensor) {
        j += std::string(",\"symmetric\":") + (prm.symmetric ? "true" : "false") + ",\"dims\":[";
        for (std::size_t d = 0; d < prm.dim_exprs.size(); ++d) j += std::string(d ? "," : "") + quote(prm.dim_exprs[d]);
        j += "]";
      }
      j += "}";
    }
    j += "]}";
  }
  return j + "]}";
}

std::string cuda_string_literal(const std::string& text) {
  std::string out = "\"";
  std::size_t col = 0;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
    if (++col % 100 == 0) out += "\"\n    \"";
  }
  return out + "\"";
}

}  // namespace irisc
