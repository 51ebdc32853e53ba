// droce-gen's one line for a failed completion (see failure_text.h).
#include "apps/droce-gen/failure_text.h"

#include <algorithm>
#include <cstdio>

namespace droce::gen {

const char* wc_status_enum_name(rc::WcStatus s) {
  switch (s) {
    case rc::WcStatus::kSuccess:
      return "IBV_WC_SUCCESS";
    case rc::WcStatus::kLocLenErr:
      return "IBV_WC_LOC_LEN_ERR";
    case rc::WcStatus::kLocQpOpErr:
      return "IBV_WC_LOC_QP_OP_ERR";
    case rc::WcStatus::kLocProtErr:
      return "IBV_WC_LOC_PROT_ERR";
    case rc::WcStatus::kWrFlushErr:
      return "IBV_WC_WR_FLUSH_ERR";
    case rc::WcStatus::kRemInvReqErr:
      return "IBV_WC_REM_INV_REQ_ERR";
    case rc::WcStatus::kRemAccessErr:
      return "IBV_WC_REM_ACCESS_ERR";
    case rc::WcStatus::kRemOpErr:
      return "IBV_WC_REM_OP_ERR";
    case rc::WcStatus::kRetryExcErr:
      return "IBV_WC_RETRY_EXC_ERR";
    case rc::WcStatus::kRnrRetryExcErr:
      return "IBV_WC_RNR_RETRY_EXC_ERR";
  }
  return "IBV_WC_GENERAL_ERR";
}

std::string failure_text(std::uint32_t index, std::uint32_t qpn, const rc::Completion& c, const rc::QpAttr& a) {
  char b[224];
  const int n =
      std::snprintf(b, sizeof(b), "QP %u (QPN %#08x): %s completion %s (%s)", index, qpn,
                    c.is_recv ? "receive" : "send", wc_status_enum_name(c.status), rc::wc_status_name(c.status));
  std::string t(b, static_cast<std::size_t>(std::max(n, 0)) < sizeof(b) ? static_cast<std::size_t>(std::max(n, 0))
                                                                        : sizeof(b) - 1);
  if (c.status == rc::WcStatus::kRetryExcErr)
    t += " after " + std::to_string(a.retry_cnt) + " retries (local ACK timeout " + std::to_string(a.timeout) +
         ", --qp-timeout/--retry-cnt)";
  else if (c.status == rc::WcStatus::kRnrRetryExcErr)
    t += " after " + std::to_string(a.rnr_retry) + " RNR retries";
  return t;
}

}  // namespace droce::gen
