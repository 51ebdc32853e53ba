// Catch2 v2's implementation, compiled once for every test binary (see catch_session.h).
#define CATCH_CONFIG_RUNNER
#include "tests/common/catch_session.h"

#include <catch2/catch.hpp>

namespace droce::test {

int run_catch_session(int argc, char** argv) { return Catch::Session().run(argc, argv); }

}  // namespace droce::test
