// main of the test binaries that need no EAL (protocol suites); Catch's implementation is in
// catch_session.cc.
#include "tests/common/catch_session.h"

int main(int argc, char** argv) { return droce::test::run_catch_session(argc, argv); }
