// The "droce" rte_log type, registered at load time at INFO (DPDK's RTE_LOG_REGISTER).
#include "engine/core/log.h"

RTE_LOG_REGISTER(droce_logtype, droce, INFO);

namespace droce::engine {

int log_type() { return droce_logtype; }

const char* log_level_word(unsigned level) {
  switch (level) {
    case RTE_LOG_EMERG:
      return "emergency";
    case RTE_LOG_ALERT:
      return "alert";
    case RTE_LOG_CRIT:
      return "critical";
    case RTE_LOG_ERR:
      return "error";
    case RTE_LOG_WARNING:
      return "warning";
    case RTE_LOG_NOTICE:
      return "notice";
    case RTE_LOG_INFO:
      return "info";
    default:
      return "debug";
  }
}

}  // namespace droce::engine
