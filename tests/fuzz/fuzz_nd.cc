// libFuzzer target: parse_nd on arbitrary bytes must never crash or read past the frame; an
// accepted NS or NA goes through the neighbour table's rules, and is rebuilt and parsed again with
// the same fields (a rebuilt frame always passes the checksum and validity rules).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "protocols/nd/nd_frame.h"
#include "protocols/nd/neighbour_table.h"

using namespace droce::nd;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  // An exact-size heap copy so ASan sees any read past the end.
  const std::vector<std::uint8_t> frame(data, data + size);
  NdFrame f;
  if (parse_nd(frame.data(), static_cast<std::uint32_t>(frame.size()), f) != NdRefusal::kNone) return 0;
  if (is_multicast(f.target) || is_unspecified(f.target)) std::abort();  // never accepted (§7.1, §4.3)

  // The table's rules, for a local address that is the frame's target (a solicitation for us,
  // an advertisement claiming our address) and one that is not; then its clock.
  const Ipv6Address target = to_address(f.target);
  const Ipv6Address src = to_address(f.ip_src);
  for (const bool ours : {true, false}) {
    NeighbourConfig c;
    c.local_ip = target;
    if (!ours) c.local_ip[15] ^= 1;
    NeighbourTable t(c);
    (void)t.start_resolve(target, 1);
    const NdVerdict v = t.on_frame(f, ours, 2);
    if (v.learned) {
      const Ipv6Address& who = f.type == NdType::kSolicitation ? src : target;
      if (t.find(who, 2) == nullptr) std::abort();
      if (!f.has_link_addr) std::abort();  // learned only from a link-layer option
    }
    // Solicitations for other targets are neither answered nor learned.
    if (!ours && f.type == NdType::kSolicitation && (v.reply || v.learned)) std::abort();
    // Advertisements are never answered.
    if (f.type == NdType::kAdvertisement && v.reply) std::abort();
    Ipv6Address ips[kNeighbourCapacity];
    unsigned failed = 0;
    for (std::uint64_t now = 2; now < 5 * kNdRetryIntervalNs; now += kNdRetryIntervalNs)
      (void)t.due_queries(now, ips, kNeighbourCapacity, failed);
  }

  // Round trip through the builder of its kind (a DAD probe's source :: rebuilt with a
  // link-layer option would break §7.1.1, so it is rebuilt from another source).
  NdSender s;
  std::memcpy(s.mac, f.has_link_addr ? f.link_addr : f.eth_src, 6);
  std::memcpy(s.ip, f.type == NdType::kAdvertisement ? f.target : f.ip_src, 16);
  if (is_unspecified(s.ip)) s.ip[15] = 1;
  s.vlan_id = f.vlan_id;
  std::uint8_t out[kNdFrameBytes];
  const std::uint32_t n = f.type == NdType::kSolicitation
                              ? build_ns(s, f.target, out, sizeof(out))
                              : build_na(s, f.eth_src, is_multicast(f.ip_dst) ? kAllNodes : f.ip_dst,
                                         f.solicited && !is_multicast(f.ip_dst), out, sizeof(out));
  NdFrame g;
  if (n == 0 || parse_nd(out, n, g) != NdRefusal::kNone) std::abort();
  if (g.type != f.type || std::memcmp(g.target, f.target, 16) != 0 || !g.has_link_addr ||
      std::memcmp(g.link_addr, s.mac, 6) != 0 || g.vlan_id != f.vlan_id || g.has_vlan != (f.vlan_id != 0))
    std::abort();
  return 0;
}
