// IPv4 and MAC options: the value is checked when given and kept as typed.
#include "apps/common/cli/address_options.h"

#include <cstdint>

#include "apps/common/address_text.h"
#include "apps/common/cli/values.h"

namespace droce::apps::cli {

CLI::Option* add_ipv4(CLI::App& app, const std::string& group, const std::string& name, std::string& field,
                      const std::string& help) {
  return add_value(app, group, name, "A.B.C.D", help, [&field, name](const std::string& v) {
    std::uint8_t scratch[4];
    if (!engine::parse_ipv4(v, scratch)) return name + ": " + apps::quoted(v) + " is not an IPv4 address";
    field = v;
    return std::string();
  });
}

CLI::Option* add_mac(CLI::App& app, const std::string& group, const std::string& name, std::string& field,
                     const std::string& help) {
  return add_value(app, group, name, "XX:..:XX", help, [&field, name](const std::string& v) {
    std::uint8_t scratch[6];
    if (!engine::parse_mac(v, scratch)) return name + ": " + apps::quoted(v) + " is not a MAC (xx:xx:xx:xx:xx:xx)";
    field = v;
    return std::string();
  });
}

}  // namespace droce::apps::cli
