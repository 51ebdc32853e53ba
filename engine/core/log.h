// The library's own rte_log type, "droce": everything the engine says (never the apps' reports)
// goes through it, so an embedder routes it (rte_openlog_stream), silences it
// (rte_log_set_level_pattern("droce", RTE_LOG_ERR) before Eal::init, or EAL's
// --log-level=droce:error for what follows EAL's start) or raises it like any DPDK component's.
#pragma once

#include <rte_log.h>

namespace droce::engine {

// The type's id (registered when the library is loaded, before main).
[[nodiscard]] int log_type();
// The word a line carries for its level ("error", "warning", ...).
[[nodiscard]] const char* log_level_word(unsigned level);

}  // namespace droce::engine

// DROCE_LOG(WARNING, "no port %u", id): one line, prefixed "droce: <level>: ". Control path only.
#define DROCE_LOG(level, fmt, ...)                                              \
  rte_log(RTE_LOG_##level, ::droce::engine::log_type(), "droce: %s: " fmt "\n", \
          ::droce::engine::log_level_word(RTE_LOG_##level), ##__VA_ARGS__)
