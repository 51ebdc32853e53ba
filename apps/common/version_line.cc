// The --version line of every app.
#include "apps/common/version_line.h"

#include <droce/engine/core/version.h>

#include <cstdio>

namespace droce::apps {

std::string version_line(std::string_view app) {
  // DROCE_DPDK_VERSION: libdpdk's pkg-config version at configure time (apps/common/meson.build),
  // so that droce-sim, which links no DPDK, prints it too.
  return std::string(app) + " " + DROCE_VERSION_STRING + " (DPDK " + DROCE_DPDK_VERSION + ")";
}

void print_version(std::string_view app) { std::printf("%s\n", version_line(app).c_str()); }

}  // namespace droce::apps
