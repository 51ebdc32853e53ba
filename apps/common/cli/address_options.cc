// Address and frame-mark options: the value is checked when given; addresses are kept as typed.
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

CLI::Option* add_ip(CLI::App& app, const std::string& group, const std::string& name, std::string& field,
                    const std::string& help) {
  return add_value(app, group, name, "ADDR", help, [&field, name](const std::string& v) {
    engine::IpAddress ip;
    if (!engine::parse_ip(v, ip)) return name + ": " + apps::quoted(v) + " is not an IPv4 or IPv6 address";
    if (const char* why = engine::unusable_ip(ip)) return name + ": " + apps::quoted(v) + " " + why;
    field = v;
    return std::string();
  });
}

CLI::Option* add_dscp(CLI::App& app, const std::string& group, std::uint8_t& field) {
  return add_uint(app, group, "--dscp", "N", field, 0, 63,
                  "DSCP of our frames, 0..63 (default " + std::to_string(field) + "; ECN stays ECT(0) for DCQCN)");
}

CLI::Option* add_vlan(CLI::App& app, const std::string& group, std::uint16_t& field) {
  return add_uint(app, group, "--vlan", "ID", field, 1, 4094,
                  "an 802.1Q tag on our frames (ARP and ND too), 1..4094 (default: untagged);\n"
                  "a tagged peer's frames are taken either way (the tag belongs to the link)");
}

CLI::Option* add_pcp(CLI::App& app, const std::string& group, std::uint8_t& field) {
  return add_uint(app, group, "--pcp", "N", field, 0, 7,
                  "the tag's priority, 0..7 (default " + std::to_string(field) +
                      "; needs --vlan): match it to the\nfabric's lossless class");
}

}  // namespace droce::apps::cli
