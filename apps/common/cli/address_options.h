// Address options (they parse with apps/common/address_text, in the apps' DPDK-side library).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace droce::apps::cli {

// An IPv4 dotted quad; a MAC (xx:xx:xx:xx:xx:xx).
CLI::Option* add_ipv4(CLI::App& app, const std::string& group, const std::string& name, std::string& field,
                      const std::string& help);
CLI::Option* add_mac(CLI::App& app, const std::string& group, const std::string& name, std::string& field,
                     const std::string& help);

}  // namespace droce::apps::cli
