// Runs one of droce's Python scripts (the plots) with its arguments as they are: no shell between,
// so a path with quotes, spaces or $(...) is a path, never a command.
#pragma once

#include <string>
#include <vector>

namespace droce::apps {

// /usr/bin/python3 SCRIPT ARGS... and waits for it. "" when it exited 0; otherwise a line saying
// what went wrong (not started, killed by a signal, or its exit status).
[[nodiscard]] std::string run_python(const std::string& script, const std::vector<std::string>& args);

}  // namespace droce::apps
