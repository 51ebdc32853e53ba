// The words for a REJ's reason code (IBTA vol. 1 §12.6.7.2, table 112), for the one-line error a
// rejected connection ends with.
#pragma once

#include <cstdint>

namespace droce::rping {

[[nodiscard]] const char* reject_reason_text(std::uint16_t reason);

}  // namespace droce::rping
