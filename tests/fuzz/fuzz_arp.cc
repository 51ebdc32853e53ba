// libFuzzer target: parse_arp on arbitrary bytes must never crash or read past the frame; an
// accepted frame goes through the neighbour table's rules and is rebuilt and parsed again with
// the same fields.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "protocols/arp/arp_frame.h"
#include "protocols/arp/neighbour_table.h"

using namespace droce::arp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  // An exact-size heap copy so ASan sees any read past the end.
  const std::vector<std::uint8_t> frame(data, data + size);
  ArpFrame f;
  if (parse_arp(frame.data(), static_cast<std::uint32_t>(frame.size()), f) != ArpRefusal::kNone) return 0;

  // The table's rules on it, for a local address that is its target (so that it gets past the
  // "for us" rule) and one that is not; then its clock.
  for (const bool ours : {true, false}) {
    NeighbourConfig c;
    c.local_ip = ours ? f.target_ip : f.target_ip ^ 1u;
    NeighbourTable t(c);
    (void)t.start_resolve(f.sender_ip, 1);
    const ArpVerdict v = t.on_frame(f, ours, 2);
    if (v.learned && t.find(f.sender_ip, 2) == nullptr) std::abort();
    if (!ours && (v.reply || v.learned)) std::abort();  // nothing from frames for other IPs
    std::uint32_t ips[kNeighbourCapacity];
    unsigned failed = 0;
    for (std::uint64_t now = 2; now < 5 * kArpRetryIntervalNs; now += kArpRetryIntervalNs)
      (void)t.due_queries(now, ips, kNeighbourCapacity, failed);
  }

  // Round trip through the builder of its kind.
  ArpSender s;
  std::memcpy(s.mac, f.sender_mac, 6);
  s.ip = f.sender_ip;
  s.vlan_id = f.vlan_id;
  std::uint8_t out[kArpFrameBytes];
  const std::uint32_t n = f.op == ArpOp::kReply ? build_arp_reply(s, f.target_mac, f.target_ip, out, sizeof(out))
                                                : build_arp_request(s, f.target_ip, out, sizeof(out));
  ArpFrame g;
  if (n != kArpFrameBytes || parse_arp(out, n, g) != ArpRefusal::kNone) std::abort();
  if (g.op != f.op || g.sender_ip != f.sender_ip || g.target_ip != f.target_ip ||
      std::memcmp(g.sender_mac, f.sender_mac, 6) != 0 || g.vlan_id != f.vlan_id || g.has_vlan != (f.vlan_id != 0))
    std::abort();
  return 0;
}
