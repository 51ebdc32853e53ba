// The capture's report line and JSON (capture_report.h).
#include "apps/common/capture_report.h"

namespace droce::apps {

engine::CaptureLimits capture_limits(const CaptureOptions& o) { return {o.max_mb << 20, o.files}; }

std::string capture_line(const CaptureOptions& o, const engine::PcapngCapture& c) {
  // A ring's count covers the files it removed too: say which files are left.
  const std::string where = o.files == 0 ? " frames in " + c.first_file()
                                         : " frames written, the files kept " + c.first_file() + " .. " + c.last_file();
  std::string line = "capture: " + std::to_string(c.captured()) + where + "; " + std::to_string(c.cut()) + " cut to " +
                     std::to_string(o.snaplen) + " bytes (--pcap-snaplen: headers kept; CM, ARP and ND frames whole)";
  if (o.max_mb != 0 && o.files == 0)
    line += "; " + std::to_string(c.not_written()) + " not written (--pcap-max-mb " + std::to_string(o.max_mb) +
            (c.not_written() != 0 ? ": writing stopped at the cap)" : ": under the cap)");
  if (o.files != 0)
    line += "; ring of " + std::to_string(o.files) + " files of " + std::to_string(o.max_mb) +
            " MiB: " + std::to_string(c.files_rotated()) + " rotated, " + std::to_string(c.files_removed()) +
            " removed with their frames";
  if (c.dropped() != 0) line += "; " + std::to_string(c.dropped()) + " not captured (no copy buffer)";
  return line;
}

nlohmann::json capture_json(const CaptureOptions& o, const engine::PcapngCapture& c) {
  return {{"file", o.path},
          {"files", {c.first_file(), c.last_file()}},
          {"frames", c.captured()},
          {"snaplen", o.snaplen},
          {"cut", c.cut()},
          {"max_mb", o.max_mb},
          {"ring_files", o.files},
          {"not_written", c.not_written()},
          {"files_rotated", c.files_rotated()},
          {"files_removed", c.files_removed()},
          {"not_captured", c.dropped()}};
}

}  // namespace droce::apps
