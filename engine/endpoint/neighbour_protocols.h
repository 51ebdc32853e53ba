// What differs between ARP (RFC 826, IPv4) and Neighbor Discovery (RFC 4861, IPv6) for the
// endpoint's one neighbour engine (endpoint_neighbours.h): each protocol's table (protocols/arp,
// protocols/nd, both over protocols/common/neighbour_cache.h), its address, its three frames
// (query, answer, announcement), what a received frame did, its counters and its words.
// Everything else (resolving, answering, announcing, failing) is the engine's, once.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "engine/endpoint/endpoint_config.h"
#include "engine/endpoint/endpoint_counters.h"
#include "protocols/arp/arp_frame.h"
#include "protocols/arp/neighbour_table.h"
#include "protocols/nd/nd_frame.h"
#include "protocols/nd/neighbour_table.h"
#include "protocols/wire/drop_reason.h"

namespace droce::engine {

// The counters a protocol's engine keeps, as members of EndpointCounters (arp_*, nd_*).
struct NeighbourCounterSet {
  std::uint64_t EndpointCounters::*answered;             // queries for our address that got an answer
  std::uint64_t EndpointCounters::*learned_from_query;   // queries for our address that taught the asker's MAC
  std::uint64_t EndpointCounters::*learned_from_answer;  // answers that resolved (or refreshed) a neighbour
  std::uint64_t EndpointCounters::*malformed;
  std::uint64_t EndpointCounters::*ignored;
  std::uint64_t EndpointCounters::*queries_sent;
  std::uint64_t EndpointCounters::*announcements_sent;
  std::uint64_t EndpointCounters::*resolve_failures;
  std::uint64_t EndpointCounters::*tx_failures;
};

// The words of the engine's statuses, per protocol.
struct NeighbourWords {
  const char* not_neighbours;   // the addresses start_resolve refuses, in brackets
  const char* table;            // "neighbour table"
  const char* queries;          // the queries by name ("ARP requests")
  const char* answer;           // one answer by name ("ARP reply")
  const char* queries_short;    // "requests"
  const char* announce_failed;  // the status text when the announcement could not be queued
};

// What a received frame was to a protocol.
enum class Heard : std::uint8_t {
  kNotOurs,    // not this protocol's frame at all: the caller counts its drop
  kMalformed,  // this protocol's, refused by its parser (counted as malformed)
  kTaken,      // checked by the table: see the verdict
};

struct ArpProtocol {
  using Table = arp::NeighbourTable;
  using Address = std::uint32_t;  // host order
  using Sender = arp::ArpSender;
  // What the table said about one frame, with the frame (an answer goes to its sender).
  struct Verdict {
    arp::ArpFrame frame;
    arp::ArpVerdict table;
    [[nodiscard]] bool learned_from_answer() const { return frame.op == arp::ArpOp::kReply; }
    [[nodiscard]] bool ignored() const { return table.ignored != arp::ArpIgnore::kNone; }
  };
  // The RoCE parser refuses ARP as not IP.
  static constexpr wire::DropReason kRefusedAs = wire::DropReason::kNotIp;
  static constexpr std::uint32_t kFrameBytes = arp::kArpFrameBytes;
  static constexpr std::uint32_t kCapacity = arp::kNeighbourCapacity;
  static constexpr NeighbourCounterSet kCounters = {
      &EndpointCounters::arp_requests_answered,
      &EndpointCounters::arp_requests_learned,
      &EndpointCounters::arp_replies_learned,
      &EndpointCounters::arp_malformed,
      &EndpointCounters::arp_ignored,
      &EndpointCounters::arp_requests_sent,
      &EndpointCounters::arp_announcements_sent,
      &EndpointCounters::arp_resolve_failures,
      &EndpointCounters::arp_tx_failures,
  };
  static constexpr NeighbourWords kWords = {
      "(ours, 0.0.0.0, loopback, multicast or broadcast)", "neighbour table", "ARP requests", "ARP reply", "requests",
      "no mbuf or TX room for the ARP announcement",
  };

  [[nodiscard]] static Table table(const EndpointConfig& cfg);
  [[nodiscard]] static Sender sender(const EndpointConfig& cfg);
  // `ip`: 4 bytes, network order.
  [[nodiscard]] static Address address(const std::uint8_t* ip) { return arp::load_ipv4(ip); }
  [[nodiscard]] static std::string text(const Address& ip);
  [[nodiscard]] static Heard hear(Table& t, const std::uint8_t* frame, std::uint32_t len, bool any_dst_mac,
                                  std::uint64_t now_ns, Verdict& out);
  [[nodiscard]] static std::uint32_t build_query(const Sender& self, const Address& ip, std::uint8_t* out,
                                                 std::uint32_t room) {
    return arp::build_arp_request(self, ip, out, room);
  }
  // The reply to the requester (our own 802.1Q tag: it belongs to the link we are on).
  [[nodiscard]] static std::uint32_t build_answer(const Sender& self, const Verdict& v, std::uint8_t* out,
                                                  std::uint32_t room) {
    return arp::build_arp_reply(self, v.frame.sender_mac, v.frame.sender_ip, out, room);
  }
  // A gratuitous ARP (RFC 5227 §3).
  [[nodiscard]] static std::uint32_t build_announcement(const Sender& self, std::uint8_t* out, std::uint32_t room) {
    return arp::build_gratuitous_arp(self, out, room);
  }
};

struct NdProtocol {
  using Table = nd::NeighbourTable;
  using Address = nd::Ipv6Address;
  using Sender = nd::NdSender;
  struct Verdict {
    nd::NdFrame frame;
    nd::NdVerdict table;
    [[nodiscard]] bool learned_from_answer() const { return frame.type == nd::NdType::kAdvertisement; }
    [[nodiscard]] bool ignored() const { return table.ignored != nd::NdIgnore::kNone; }
  };
  // ICMPv6 is IP but not UDP: the RoCE parser refuses NS and NA as not UDP.
  static constexpr wire::DropReason kRefusedAs = wire::DropReason::kNotUdp;
  static constexpr std::uint32_t kFrameBytes = nd::kNdFrameBytes;
  static constexpr std::uint32_t kCapacity = nd::kNeighbourCapacity;
  static constexpr NeighbourCounterSet kCounters = {
      &EndpointCounters::nd_solicitations_answered,
      &EndpointCounters::nd_solicitations_learned,
      &EndpointCounters::nd_advertisements_learned,
      &EndpointCounters::nd_malformed,
      &EndpointCounters::nd_ignored,
      &EndpointCounters::nd_solicitations_sent,
      &EndpointCounters::nd_announcements_sent,
      &EndpointCounters::nd_resolve_failures,
      &EndpointCounters::nd_tx_failures,
  };
  static constexpr NeighbourWords kWords = {
      "(ours, ::, ::1, multicast or IPv4-mapped)",
      "IPv6 neighbour table",
      "Neighbor Solicitations",
      "Neighbor Advertisement",
      "solicitations",
      "no mbuf or TX room for the unsolicited Neighbor Advertisement",
  };

  [[nodiscard]] static Table table(const EndpointConfig& cfg);
  [[nodiscard]] static Sender sender(const EndpointConfig& cfg);
  // `ip`: 16 bytes, network order.
  [[nodiscard]] static Address address(const std::uint8_t* ip) { return nd::to_address(ip); }
  [[nodiscard]] static std::string text(const Address& ip);
  // An ND message RFC 4861 §7.1 calls invalid is malformed (silently discarded there; counted here).
  [[nodiscard]] static Heard hear(Table& t, const std::uint8_t* frame, std::uint32_t len, bool any_dst_mac,
                                  std::uint64_t now_ns, Verdict& out);
  // A solicitation to the target's solicited-node group (§7.2.2).
  [[nodiscard]] static std::uint32_t build_query(const Sender& self, const Address& ip, std::uint8_t* out,
                                                 std::uint32_t room) {
    return nd::build_ns(self, ip.data(), out, room);
  }
  // The advertisement the table asked for (our own 802.1Q tag).
  [[nodiscard]] static std::uint32_t build_answer(const Sender& self, const Verdict& v, std::uint8_t* out,
                                                  std::uint32_t room) {
    return nd::build_na(self, v.table.reply_mac, v.table.reply_ip, v.table.reply_solicited, out, room);
  }
  // An unsolicited advertisement (§7.2.6).
  [[nodiscard]] static std::uint32_t build_announcement(const Sender& self, std::uint8_t* out, std::uint32_t room) {
    return nd::build_unsolicited_na(self, out, room);
  }
};

}  // namespace droce::engine
