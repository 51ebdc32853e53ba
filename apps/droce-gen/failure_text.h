// droce-gen's one line for a failed completion: which QP, which verbs status, after how many retries.
#pragma once

#include <droce/protocols/rc/qp_attr.h>
#include <droce/protocols/rc/types.h>

#include <cstdint>
#include <string>

namespace droce::gen {

// verbs' enum name of a completion status (ibv_wc_status), as people search for it.
[[nodiscard]] const char* wc_status_enum_name(rc::WcStatus s);
[[nodiscard]] std::string failure_text(std::uint32_t index, std::uint32_t qpn, const rc::Completion& c,
                                       const rc::QpAttr& a);

}  // namespace droce::gen
