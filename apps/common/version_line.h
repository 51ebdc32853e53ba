// What every app prints for --version: "droce-gen 0.1.0 (DPDK 22.11.11)".
#pragma once

#include <string>
#include <string_view>

namespace droce::apps {

// `app`, droce's version and the DPDK version it was built with (before EAL starts, so that
// --version works on a machine where EAL could not).
[[nodiscard]] std::string version_line(std::string_view app);
// Prints version_line(app) and a newline on stdout.
void print_version(std::string_view app);

}  // namespace droce::apps
