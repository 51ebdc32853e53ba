// Telemetry parameters (see telemetry_params.h).
#include "engine/core/telemetry_params.h"

#include <rte_telemetry.h>

#include <cerrno>
#include <cstdlib>

namespace droce::engine {
namespace {

// One field, "123" or "0x7b"; no sign, no spaces, no octal (a leading 0 stays decimal).
bool parse_one(const char* begin, const char* stop, std::uint32_t& value) {
  if (begin == stop) return false;
  int base = 10;
  if (stop - begin > 2 && begin[0] == '0' && (begin[1] == 'x' || begin[1] == 'X')) {
    base = 16;
    begin += 2;
  }
  for (const char* p = begin; p != stop; ++p)
    if (base == 10 ? !(*p >= '0' && *p <= '9')
                   : !((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')))
      return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(begin, &end, base);
  if (errno != 0 || end != stop || v > UINT32_MAX) return false;
  value = static_cast<std::uint32_t>(v);
  return true;
}

std::string expected(std::span<const char* const> names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i == 0 ? "" : ",") + std::string(names[i]);
  return s;
}

}  // namespace

bool parse_telemetry_ids(const char* params, std::span<std::uint32_t> out, std::span<const char* const> names,
                         std::string& reason) {
  const std::string usage = "parameters: " + expected(names) + " (each decimal or 0x hex)";
  if (params == nullptr || *params == '\0') {
    reason = "no parameters; " + usage;
    return false;
  }
  const char* p = params;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char* stop = p;
    while (*stop != '\0' && *stop != ',') ++stop;
    if (!parse_one(p, stop, out[i])) {
      reason = "bad " + std::string(names[i]) + " '" + std::string(p, stop) + "'; " + usage;
      return false;
    }
    if (*stop == '\0') {
      if (i + 1 != out.size()) {
        reason = "missing " + std::string(names[i + 1]) + "; " + usage;
        return false;
      }
      return true;
    }
    p = stop + 1;
  }
  reason = "too many parameters; " + usage;
  return false;
}

int telemetry_refuse(rte_tel_data* d, const std::string& reason) {
  const std::string text = "error: " + reason;
  rte_tel_data_string(d, text.c_str());
  return 0;
}

}  // namespace droce::engine
