// Runs one of droce's Python scripts (the plots) with its arguments as they are: no shell between,
// so a path with quotes, spaces or $(...) is a path, never a command.
#pragma once

#include <droce/engine/core/status.h>

#include <string>
#include <vector>

namespace droce::apps {

// /usr/bin/python3 SCRIPT ARGS... and waits for it. Ok when it exited 0; otherwise a line with the
// real cause: kNotFound when python3 is not installed, kIo when it could not be started or waited
// for, kError when it was killed by a signal or exited non-zero, with its exit status and the last
// line it wrote on stderr (a missing matplotlib names itself there). What the script writes on
// stderr is passed on to ours as well.
[[nodiscard]] engine::Status run_python(const std::string& script, const std::vector<std::string>& args);

// Where droce's script `name` (plot_gen.py, ...) is: installed beside the binary (meson install
// puts the scripts in <datadir>/droce, found from <bindir> by the path compiled in), else in the
// source tree the binary was built from (a build tree). kNotFound names both places.
[[nodiscard]] engine::Status find_script(const std::string& name, std::string& path);

// find_script, then run_python.
[[nodiscard]] engine::Status run_script(const std::string& name, const std::vector<std::string>& args);

}  // namespace droce::apps
