// Runs one of droce's Python scripts (the plots) with its arguments as they are: no shell between,
// so a path with quotes, spaces or $(...) is a path, never a command.
#pragma once

#include <droce/engine/core/status.h>

#include <string>
#include <vector>

namespace droce::apps {

// /usr/bin/python3 SCRIPT ARGS... and waits for it. Ok when it exited 0; otherwise kIo (not
// started, not waited for) or kError (killed by a signal, or its exit status) and a line saying so.
[[nodiscard]] engine::Status run_python(const std::string& script, const std::vector<std::string>& args);

}  // namespace droce::apps
