// Output files named on the command line: checked before anything runs, written in full at the end.
#pragma once

#include <string>
#include <string_view>

namespace droce::apps {

// Empty when `path` can be opened for writing, else one message naming `option`. Run at parse time
// so that a bad path is found before a long run rather than after it. Leaves no trace: an existing
// file is opened without truncation (a previous run's results survive a run that then fails), a new
// one is created and removed again.
[[nodiscard]] std::string check_output_path(std::string_view option, const std::string& path);

// Writes `text` to `path` (replacing it) and closes it; empty on success, else one message with the
// reason. A short write or a failing flush or close (disk full) is an error, not a silent truncation.
[[nodiscard]] std::string write_text_file(const std::string& path, const std::string& text);

}  // namespace droce::apps
