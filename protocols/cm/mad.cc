// MAD header: strict parse for the CM class and the header writer.
#include "protocols/cm/mad.h"

namespace droce::cm {

MadRefusal parse_mad(const std::uint8_t* mad, std::uint32_t len, MadHeader& out) {
  out = MadHeader{};
  // §13.4.1: a MAD is always 256 bytes; a UD payload of any other length is not one.
  if (len < kMadBytes) return MadRefusal::kTooShort;
  if (len > kMadBytes) return MadRefusal::kTooLong;
  const auto* h = reinterpret_cast<const MadHdr*>(mad);
  out.base_version = h->base_version;
  out.mgmt_class = h->mgmt_class;
  out.class_version = h->class_version;
  out.method = h->method;
  out.status = h->status.value();
  out.class_specific = h->class_specific.value();
  out.tid = h->tid.value();
  out.attr_id = h->attr_id.value();
  out.attr_mod = h->attr_mod.value();
  if (out.base_version != kMadBaseVersion) return MadRefusal::kBadBaseVersion;
  if (out.mgmt_class != kMgmtClassCm) return MadRefusal::kNotCm;
  if (out.class_version != kCmClassVersion) return MadRefusal::kBadClassVersion;
  if (out.method != kMadMethodSend) return MadRefusal::kBadMethod;
  switch (static_cast<CmAttr>(out.attr_id)) {
    case CmAttr::kReq:
    case CmAttr::kMra:
    case CmAttr::kRej:
    case CmAttr::kRep:
    case CmAttr::kRtu:
    case CmAttr::kDreq:
    case CmAttr::kDrep:
      return MadRefusal::kNone;
    case CmAttr::kClassPortInfo:
    case CmAttr::kSidrReq:
    case CmAttr::kSidrRep:
    case CmAttr::kLap:
    case CmAttr::kApr:
      return MadRefusal::kUnsupportedAttribute;
  }
  return MadRefusal::kUnknownAttribute;
}

void write_mad_header(const MadHeader& h, std::uint8_t* out) {
  auto* w = reinterpret_cast<MadHdr*>(out);
  w->base_version = h.base_version;
  w->mgmt_class = h.mgmt_class;
  w->class_version = h.class_version;
  w->method = h.method;
  w->status = wire::Be16(h.status);
  w->class_specific = wire::Be16(h.class_specific);
  w->tid = wire::Be64(h.tid);
  w->attr_id = wire::Be16(h.attr_id);
  w->reserved = wire::Be16(0);
  w->attr_mod = wire::Be32(h.attr_mod);
}

}  // namespace droce::cm
