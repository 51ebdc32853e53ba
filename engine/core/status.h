// The engine's Status is the one the protocol core returns (protocols/common/status.h): a code
// plus a line of text.
#pragma once

#include "protocols/common/status.h"

namespace droce::engine {

using droce::Status;
using droce::StatusCode;

}  // namespace droce::engine
