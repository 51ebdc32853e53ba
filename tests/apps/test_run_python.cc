// The plot scripts' runner (apps/common/run_python.h): arguments passed as they are, no shell;
// a failure named by the script's exit status and its last stderr line; scripts found installed
// or in the source tree. No EAL.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "apps/common/run_python.h"

using droce::apps::find_script;
using droce::apps::run_python;
using droce::engine::StatusCode;

namespace {

// A temporary directory of this run, removed with its files.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/droce-test-run-python-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

void write(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

std::string read(const std::string& path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("run_python passes arguments as they are: $(...) in a name is never executed", "[apps][plot]") {
  REQUIRE(::access("/usr/bin/python3", X_OK) == 0);  // scripts/setup.sh installs it
  TempDir d;
  const std::string script = d.path + "/echo_arg.py";
  write(script, "import sys\nopen(sys.argv[2], 'w').write(sys.argv[1])\n");
  const std::string odd = "a $(touch " + d.path + "/pwned) `touch " + d.path + "/pwned2` 'q\" ; rm -rf /nothing";
  const std::string out = d.path + "/out $(touch pwned3);`touch pwned4`.txt";  // a name holds no '/'
  const std::string cwd = std::filesystem::current_path().string();
  const auto s = run_python(script, {odd, out});
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(read(out) == odd);
  CHECK_FALSE(exists(d.path + "/pwned"));
  CHECK_FALSE(exists(d.path + "/pwned2"));
  CHECK_FALSE(exists(cwd + "/pwned3"));
  CHECK_FALSE(exists(cwd + "/pwned4"));
}

TEST_CASE("run_python names a failure by its exit status and the script's last stderr line", "[apps][plot]") {
  REQUIRE(::access("/usr/bin/python3", X_OK) == 0);  // scripts/setup.sh installs it
  TempDir d;
  const std::string script = d.path + "/fails.py";
  write(script,
        "import sys\nsys.stderr.write('Traceback (most recent call last):\\n  line 1\\n"
        "ModuleNotFoundError: No module named \\'matplotlib\\'\\n\\n')\nsys.exit(3)\n");
  const auto s = run_python(script, {});
  CHECK(s.code() == StatusCode::kError);
  CHECK(s.message() == script +
                           " exited 3: ModuleNotFoundError: No module named 'matplotlib' (Debian: apt install "
                           "python3-matplotlib)");
  write(script, "import os\nos.kill(os.getpid(), 9)\n");
  const auto k = run_python(script, {});
  CHECK(k.code() == StatusCode::kError);
  CHECK(k.message() == script + " was killed by signal 9");
}

TEST_CASE("find_script finds the plot scripts (the source tree's, from a build tree) and names both places when not",
          "[apps][plot]") {
  std::string path;
  REQUIRE(find_script("plot_switch_lab.py", path).ok());
  CHECK(path.size() > std::string("/scripts/plot_switch_lab.py").size());
  CHECK(path.substr(path.size() - std::string("plot_switch_lab.py").size()) == "plot_switch_lab.py");
  CHECK(exists(path));
  const auto s = find_script("no_such_plot.py", path);
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK(s.message().find("(installed) nor") != std::string::npos);
  CHECK(s.message().find("/scripts/no_such_plot.py (source tree)") != std::string::npos);
}
