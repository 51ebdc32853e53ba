// Address options (they parse with apps/common/address_text, in the apps' DPDK-side library), and
// the marks our frames carry: DSCP and the 802.1Q tag. Each bad value is one line naming the option.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace droce::apps::cli {

// An IPv4 dotted quad; a MAC (xx:xx:xx:xx:xx:xx).
CLI::Option* add_ipv4(CLI::App& app, const std::string& group, const std::string& name, std::string& field,
                      const std::string& help);
CLI::Option* add_mac(CLI::App& app, const std::string& group, const std::string& name, std::string& field,
                     const std::string& help);
// An IPv4 dotted quad or an IPv6 address (engine::parse_ip), kept as typed; an IPv6 address no
// host can own (engine::unusable_ip: ::, ::1, multicast, IPv4-mapped) is refused, naming why.
CLI::Option* add_ip(CLI::App& app, const std::string& group, const std::string& name, std::string& field,
                    const std::string& help);

// --dscp N, 0..63: the DSCP of our frames (IPv4 TOS or IPv6 Traffic Class, upper six bits; the
// ECN bits stay the engine's, ECT(0) for DCQCN).
CLI::Option* add_dscp(CLI::App& app, const std::string& group, std::uint8_t& field);
// --vlan ID, 1..4094: an 802.1Q tag on our frames (0, the default, is untagged; 4095 is reserved,
// IEEE 802.1Q §9.6).
CLI::Option* add_vlan(CLI::App& app, const std::string& group, std::uint16_t& field);
// --pcp N, 0..7: the tag's priority (the app checks that --vlan is given too).
CLI::Option* add_pcp(CLI::App& app, const std::string& group, std::uint8_t& field);

}  // namespace droce::apps::cli
