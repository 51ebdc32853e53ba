// What a --pcap capture kept, said the same way by every app: the report's line and its JSON.
#pragma once

#include <droce/engine/core/capture.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace droce::apps {

// The capture options as the apps parse them (apps/common/cli OutputFields).
struct CaptureOptions {
  std::string path;           // --pcap; empty: no capture
  std::uint32_t snaplen = 0;  // --pcap-snaplen
  std::uint64_t max_mb = 0;   // --pcap-max-mb; 0: no cap
  std::uint32_t files = 0;    // --pcap-files; 0: no ring
};

// The engine's limits for `o` (MiB to bytes).
[[nodiscard]] engine::CaptureLimits capture_limits(const CaptureOptions& o);

// One line, without a newline: "capture: N frames in FILE; C cut to S bytes (headers kept)",
// then whatever else happened: frames not written at the cap, files rotated and removed by the
// ring, frames with no copy buffer. Read once the capture is closed.
[[nodiscard]] std::string capture_line(const CaptureOptions& o, const engine::PcapngCapture& c);

// {"file", "files": [first, last], "frames", "snaplen", "cut", "max_mb", "ring_files",
//  "not_written", "files_rotated", "files_removed", "not_captured"}.
[[nodiscard]] nlohmann::json capture_json(const CaptureOptions& o, const engine::PcapngCapture& c);

}  // namespace droce::apps
