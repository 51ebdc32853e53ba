// An XDP program for net_af_xdp (its xdp_prog= devarg): RoCEv2 (UDP 4791, IPv4 or IPv6, tagged or
// not), ARP and IPv6 Neighbor Discovery go to the AF_XDP socket on the frame's queue; everything
// else stays with the kernel. The PMD's default program (libxdp's) takes every frame of the queue,
// the kernel's TCP included, so droce's TCP exchange on the same interface would never connect.
// The kernel then resolves its own neighbours by static entries (scripts/lab_veth.sh adds them):
// ARP and ND frames are droce's here. Built with clang's BPF target (scripts/lab_veth.sh xdp OUT):
//   clang -O2 -g -target bpf -I/usr/include/$(gcc -print-multiarch) -c roce_to_socket.c -o roce_to_socket.o
// The PMD needs a map named xsks_map (DPDK 22.11 doc/guides/nics/af_xdp.rst, "Custom program").
// clang-format off: linux/bpf.h (its __u32 and __u64) before libbpf's helpers.
#include <linux/bpf.h>
#include <linux/icmpv6.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
// clang-format on

#define ROCEV2_UDP_PORT 4791    // IANA
#define ND_NEIGHBOR_SOLICIT 135 // RFC 4861 §4.3
#define ND_NEIGHBOR_ADVERT 136  // RFC 4861 §4.4

struct {
  __uint(type, BPF_MAP_TYPE_XSKMAP);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, __u32);
} xsks_map SEC(".maps");

static __always_inline int udp_to_roce(void *l4, void *end) {
  struct udphdr *udp = l4;
  return (void *)(udp + 1) <= end && udp->dest == bpf_htons(ROCEV2_UDP_PORT);
}

SEC("xdp")
int roce_to_socket(struct xdp_md *ctx) {
  void *data = (void *)(long)ctx->data;
  void *end = (void *)(long)ctx->data_end;
  struct ethhdr *eth = data;
  if ((void *)(eth + 1) > end) return XDP_PASS;
  __u16 proto = eth->h_proto;
  void *l3 = eth + 1;
  if (proto == bpf_htons(ETH_P_8021Q)) {  // one 802.1Q tag (droce's --vlan)
    if (l3 + 4 > end) return XDP_PASS;
    proto = *(__u16 *)(l3 + 2);
    l3 += 4;
  }
  int take = 0;
  if (proto == bpf_htons(ETH_P_ARP)) {
    take = 1;
  } else if (proto == bpf_htons(ETH_P_IP)) {
    struct iphdr *ip = l3;
    if ((void *)(ip + 1) > end || ip->ihl < 5) return XDP_PASS;
    take = ip->protocol == IPPROTO_UDP && udp_to_roce(l3 + ip->ihl * 4, end);
  } else if (proto == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr *ip6 = l3;
    if ((void *)(ip6 + 1) > end) return XDP_PASS;
    if (ip6->nexthdr == IPPROTO_UDP) {
      take = udp_to_roce(ip6 + 1, end);
    } else if (ip6->nexthdr == IPPROTO_ICMPV6) {
      struct icmp6hdr *icmp = (void *)(ip6 + 1);
      if ((void *)(icmp + 1) > end) return XDP_PASS;
      take = icmp->icmp6_type == ND_NEIGHBOR_SOLICIT || icmp->icmp6_type == ND_NEIGHBOR_ADVERT;
    }
  }
  // No socket on this queue: the frame goes on to the kernel (the flags argument).
  return take ? bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS) : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
