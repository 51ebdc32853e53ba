// Output files named on the command line: checked before anything runs, written in full at the end.
#pragma once

#include <droce/engine/core/status.h>

#include <cstdio>
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
// "-" writes it to the standard output set aside by claim_stdout() (else to stdout) and flushes it.
[[nodiscard]] engine::Status write_text_file(const std::string& path, const std::string& text);

// An output option given "-" (--json -, --stats-json -) takes the process's standard output for one
// machine-readable document: the real stdout is kept on a new descriptor, and descriptor 1 then
// points at stderr, so that the text report, live lines and EAL's own lines never mix into it.
// Called by cli::parse() once the options are read, before anything else prints. One option only:
// a second one is kInvalidArgument naming both ("--stats-json -: stdout already carries --json -").
[[nodiscard]] engine::Status claim_stdout(std::string_view option);

// The standard output claim_stdout() set aside, or nullptr when no option claimed it.
[[nodiscard]] std::FILE* claimed_stdout();

}  // namespace droce::apps
