// The default port of droce's client/server applications: with no EAL options given, the two
// processes of a run meet over net_memif on one machine, each polling on its own CPU.
#pragma once

#include <droce/engine/core/status.h>

#include <string>
#include <vector>

namespace droce::engine {

// EAL options for that default: no PCI scan and, for the server, the last CPU this process may
// use. Client and server both poll without pause: on one CPU each would wait out the other's
// scheduler time slice (milliseconds per round trip).
[[nodiscard]] std::vector<std::string> default_pair_eal_args(bool server);

// The devargs of the port to open: net_memif in our role on `socket` when the defaults are in
// use, else the first port EAL probed from the user's options (an error when there is none).
[[nodiscard]] Status pair_port_devargs(bool defaults, bool server, const std::string& socket, std::string& devargs);

}  // namespace droce::engine
