// Output files named on the command line: checked before anything runs, written in full at the end.
#pragma once

#include <droce/engine/core/status.h>

#include <string>
#include <string_view>

namespace droce::apps {

// Ok when `path` can be opened for writing, else kInvalidArgument (no name) or kIo and one message
// naming `option`. Run at parse time
// so that a bad path is found before a long run rather than after it. Leaves no trace: an existing
// file is opened without truncation (a previous run's results survive a run that then fails), a new
// one is created and removed again.
[[nodiscard]] engine::Status check_output_path(std::string_view option, const std::string& path);

// Writes `text` to `path` (replacing it) and closes it; ok, or kIo and one message with the reason.
// A short write or a failing flush or close (disk full) is an error, not a silent truncation.
[[nodiscard]] engine::Status write_text_file(const std::string& path, const std::string& text);

}  // namespace droce::apps
