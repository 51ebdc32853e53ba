// The one Catch2 v2 implementation every test binary links (catch_session.cc): each binary's own
// main (catch_main.cc, eal_test_main.cc, the workers' main.cc) calls run_catch_session after its
// set-up. Catch v2 declares Catch::Session only inside its implementation, so a main that named it
// compiled the whole implementation again (about 40 s of compile per binary kind at -O2).
#pragma once

namespace droce::test {

// Runs the test cases selected by argv (Catch's own command line) and returns Catch's exit status.
int run_catch_session(int argc, char** argv);

}  // namespace droce::test
