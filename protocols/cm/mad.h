// The common MAD header of a General Management Packet (IBTA vol. 1 §13.4.2-13.4.5) and its
// strict parser for the Communication Management class (ch. 12, class 0x07, version 2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "protocols/common/status.h"
#include "protocols/wire/be.h"

namespace droce::cm {

// Every MAD is 256 bytes (§13.4.1): a 24-byte common header and 232 bytes of class data.
inline constexpr std::uint32_t kMadBytes = 256;
inline constexpr std::uint32_t kMadHeaderBytes = 24;
inline constexpr std::uint32_t kMadDataBytes = kMadBytes - kMadHeaderBytes;

// The common MAD header, §13.4.2, in wire order.
struct MadHdr {
  std::uint8_t base_version;   // 1
  std::uint8_t mgmt_class;     // 0x07: CommMgt
  std::uint8_t class_version;  // 2 for CM
  std::uint8_t method;         // R(7): response, Method(6:0)
  wire::Be16 status;
  wire::Be16 class_specific;
  wire::Be64 tid;
  wire::Be16 attr_id;
  wire::Be16 reserved;
  wire::Be32 attr_mod;
};
static_assert(sizeof(MadHdr) == kMadHeaderBytes);

inline constexpr std::uint8_t kMadBaseVersion = 1;
inline constexpr std::uint8_t kMgmtClassCm = 0x07;
inline constexpr std::uint8_t kCmClassVersion = 2;

// Methods, §13.4.5. CM messages all travel as ComMgtSend (§12.6.1); Get/Set/GetResp
// only ever carry ClassPortInfo, which droce does not serve.
inline constexpr std::uint8_t kMadMethodGet = 0x01;
inline constexpr std::uint8_t kMadMethodSet = 0x02;
inline constexpr std::uint8_t kMadMethodSend = 0x03;
inline constexpr std::uint8_t kMadMethodResponseBit = 0x80;

// CM attribute IDs, §12.6.
enum class CmAttr : std::uint16_t {
  kClassPortInfo = 0x0001,
  kReq = 0x0010,
  kMra = 0x0011,
  kRej = 0x0012,
  kRep = 0x0013,
  kRtu = 0x0014,
  kDreq = 0x0015,
  kDrep = 0x0016,
  kSidrReq = 0x0017,
  kSidrRep = 0x0018,
  kLap = 0x0019,
  kApr = 0x001A,
};

// The header in host order.
struct MadHeader {
  std::uint8_t base_version = kMadBaseVersion;
  std::uint8_t mgmt_class = kMgmtClassCm;
  std::uint8_t class_version = kCmClassVersion;
  std::uint8_t method = kMadMethodSend;
  std::uint16_t status = 0;
  std::uint16_t class_specific = 0;
  std::uint64_t tid = 0;
  std::uint16_t attr_id = 0;
  std::uint32_t attr_mod = 0;
};

// Why a MAD was refused: code, counter name, and the sentence a log gets.
#define DROCE_MAD_REFUSALS(X)                                               \
  X(kNone, "none", "accepted")                                              \
  X(kTooShort, "too_short", "shorter than a MAD (256 bytes)")               \
  X(kTooLong, "too_long", "longer than a MAD (256 bytes)")                  \
  X(kBadBaseVersion, "bad_base_version", "MAD base version is not 1")       \
  X(kNotCm, "not_cm", "management class is not CommMgt (0x07)")             \
  X(kBadClassVersion, "bad_class_version", "CM class version is not 2")     \
  X(kBadMethod, "bad_method", "method is not ComMgtSend, or is a response") \
  X(kUnsupportedAttribute, "unsupported_attribute",                         \
    "CM attribute droce does not serve (ClassPortInfo, SIDR, LAP, APR)")    \
  X(kUnknownAttribute, "unknown_attribute", "attribute ID is not a CM attribute")

enum class MadRefusal : std::uint8_t {
#define DROCE_MAD_ENUM(name, str, text) name,
  DROCE_MAD_REFUSALS(DROCE_MAD_ENUM)
#undef DROCE_MAD_ENUM
      kCount
};
inline constexpr std::size_t kMadRefusalCount = static_cast<std::size_t>(MadRefusal::kCount);

[[nodiscard]] constexpr std::string_view mad_refusal_name(MadRefusal r) {
  constexpr std::string_view kNames[] = {
#define DROCE_MAD_NAME(name, str, text) str,
      DROCE_MAD_REFUSALS(DROCE_MAD_NAME)
#undef DROCE_MAD_NAME
  };
  const auto i = static_cast<std::size_t>(r);
  return i < kMadRefusalCount ? kNames[i] : std::string_view{"invalid"};
}

// The sentence (static text, so a Status can keep it without allocating).
[[nodiscard]] constexpr const char* mad_refusal_text(MadRefusal r) {
  constexpr const char* kTexts[] = {
#define DROCE_MAD_TEXT(name, str, text) text,
      DROCE_MAD_REFUSALS(DROCE_MAD_TEXT)
#undef DROCE_MAD_TEXT
  };
  const auto i = static_cast<std::size_t>(r);
  return i < kMadRefusalCount ? kTexts[i] : "invalid refusal";
}

// kOk for kNone, else a kPeer Status with the refusal's sentence.
[[nodiscard]] inline Status mad_status(MadRefusal r) {
  return r == MadRefusal::kNone ? Status{} : Status::fail(StatusCode::kPeer, mad_refusal_text(r));
}

// Parses the `len` bytes of a UD payload as a CM MAD: exactly 256 bytes, base version 1, class
// CommMgt version 2, method ComMgtSend (a request: R clear), attribute REQ..DREP. The status and
// class-specific fields and the attribute modifier are kept but not judged (CM defines none of
// them for Send), nor the reserved bytes (receivers ignore reserved fields, §13.4.2). On a
// refusal, `out` holds what was read before the broken rule.
[[nodiscard]] MadRefusal parse_mad(const std::uint8_t* mad, std::uint32_t len, MadHeader& out);

// Writes the 24-byte header at `out` (the reserved field zero).
void write_mad_header(const MadHeader& h, std::uint8_t* out);

}  // namespace droce::cm
