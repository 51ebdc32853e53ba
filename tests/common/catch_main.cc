// Catch2 v2 runner for test binaries that need no EAL (protocol suites).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
