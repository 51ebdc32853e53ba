// Why a received frame was not handed to a QP: one counter per reason, shared by parser and engine.
#pragma once

#include <cstdint>
#include <string_view>

namespace droce::wire {

#define DROCE_DROP_REASONS(X)                      \
  X(kNone, "none")                                 \
  X(kTruncatedEthernet, "truncated_ethernet")      \
  X(kStackedVlan, "stacked_vlan")                  \
  X(kNotIp, "not_ip")                              \
  X(kTruncatedIp, "truncated_ip")                  \
  X(kBadIpVersion, "bad_ip_version")               \
  X(kBadIpHeaderLength, "bad_ip_header_length")    \
  X(kBadIpTotalLength, "bad_ip_total_length")      \
  X(kBadIpChecksum, "bad_ip_checksum")             \
  X(kIpFragment, "ip_fragment")                    \
  X(kIpOptions, "ip_options")                      \
  X(kNotUdp, "not_udp")                            \
  X(kTruncatedUdp, "truncated_udp")                \
  X(kNotRocePort, "not_roce_port")                 \
  X(kBadUdpLength, "bad_udp_length")               \
  X(kTruncatedBth, "truncated_bth")                \
  X(kBadTver, "bad_tver")                          \
  X(kUnknownOpcode, "unknown_opcode")              \
  X(kTruncatedExtHeaders, "truncated_ext_headers") \
  X(kBadPadCount, "bad_pad_count")                 \
  X(kBadIcrc, "bad_icrc")                          \
  X(kWrongPkey, "wrong_pkey")                      \
  X(kUnknownQpn, "unknown_qpn")                    \
  X(kWrongSourceIp, "wrong_source_ip")             \
  X(kWrongDestIp, "wrong_dest_ip")                 \
  X(kWrongDestMac, "wrong_dest_mac")               \
  X(kQpNotReady, "qp_not_ready")                   \
  X(kPayloadOverPmtu, "payload_over_pmtu")         \
  X(kFrameTooLong, "frame_too_long")               \
  X(kUnexpectedOpcode, "unexpected_opcode")        \
  X(kInjectedLoss, "injected_loss")                \
  X(kNoRxBuffer, "no_rx_buffer")

enum class DropReason : std::uint8_t {
#define DROCE_DROP_ENUM(name, str) name,
  DROCE_DROP_REASONS(DROCE_DROP_ENUM)
#undef DROCE_DROP_ENUM
      kCount
};

inline constexpr std::size_t kDropReasonCount = static_cast<std::size_t>(DropReason::kCount);

[[nodiscard]] constexpr std::string_view drop_reason_name(DropReason r) {
  constexpr std::string_view kNames[] = {
#define DROCE_DROP_NAME(name, str) str,
      DROCE_DROP_REASONS(DROCE_DROP_NAME)
#undef DROCE_DROP_NAME
  };
  const auto i = static_cast<std::size_t>(r);
  return i < kDropReasonCount ? kNames[i] : std::string_view{"invalid"};
}

}  // namespace droce::wire
