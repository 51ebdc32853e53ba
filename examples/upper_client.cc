// upper-client: sends requests of many sizes to upper-service one at a time and checks that each
// reply is its request in upper case; exit 0 only when every reply matched.
//
//   upper-client [EAL options] -- [--socket PATH] [--count N] [--seconds N]
#include <droce/engine/core/version.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "upper_link.h"

namespace {

int fail(const std::string& why) {
  std::fprintf(stderr, "upper-client: %s\n", why.c_str());
  return 1;
}

// Request i: "request <i>: " then lower-case letters and digits up to a size that varies from
// 16 bytes to kMaxMessage, so that some messages take several packets (PMTU 1024).
std::uint32_t make_request(std::uint64_t i, std::uint8_t* out) {
  const int head =
      std::snprintf(reinterpret_cast<char*>(out), 32, "request %llu: ", static_cast<unsigned long long>(i));
  const std::uint32_t len = 16 + static_cast<std::uint32_t>((i * 997) % (upper::kMaxMessage - 16));
  for (std::uint32_t k = static_cast<std::uint32_t>(head); k < len; ++k)
    out[k] = static_cast<std::uint8_t>(k % 3 == 0 ? '0' + (k + i) % 10 : 'a' + (k + i) % 26);
  return len;
}

bool is_upper_of(const std::uint8_t* reply, std::uint32_t reply_len, const std::uint8_t* request, std::uint32_t len) {
  if (reply_len != len) return false;
  for (std::uint32_t k = 0; k < len; ++k)
    if (reply[k] != std::toupper(request[k])) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  droce::engine::SplitArgs args = droce::engine::split_args(argc, argv);
  std::string socket = "/tmp/upper.sock";
  std::uint64_t count = 1000;
  int seconds = 30;
  for (std::size_t i = 0; i + 1 < args.app.size(); i += 2) {
    if (args.app[i] == "--socket")
      socket = args.app[i + 1];
    else if (args.app[i] == "--count")
      count = std::strtoull(args.app[i + 1].c_str(), nullptr, 10);  // 0: BYE only
    else if (args.app[i] == "--seconds")
      seconds = std::atoi(args.app[i + 1].c_str());
    else
      return fail("unknown option " + args.app[i]);
  }
  if (seconds < 1 || seconds > 3600) return fail("--seconds: give 1..3600");
  if (count > 1'000'000'000) return fail("--count: give at most 1e9");

  upper::Link link;
  if (droce::engine::Status s = upper::open_link(false, args.eal, socket, seconds * 1000u, link); !s.ok())
    return fail(s.message());
  // The request leaves from registered memory, untouched until its send completes.
  std::vector<std::uint8_t> request(upper::kMaxMessage);
  droce::rc::MemoryRegion mr;
  if (droce::engine::Status s =
          link.memory.register_memory(request.data(), request.size(), droce::rc::kAccessLocalWrite, mr);
      !s.ok())
    return fail(s.message());

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::uint64_t mismatches = 0;
  // Requests 0..count-1, then BYE (request `count`).
  for (std::uint64_t i = 0; i <= count; ++i) {
    const bool last = i == count;
    std::uint32_t len = 0;
    if (last)
      std::memcpy(request.data(), upper::kBye, len = static_cast<std::uint32_t>(std::strlen(upper::kBye)));
    else
      len = make_request(i, request.data());
    if (droce::engine::Status s = link.endpoint->send_message(link.qpn, request.data(), len, i); !s.ok())
      return fail("request " + std::to_string(i) + ": " + s.message());
    // Wait for both: the send's completion (the buffer is ours again) and the reply.
    bool sent = false, answered = false;
    while (!(sent && answered)) {
      if (std::chrono::steady_clock::now() > deadline)
        return fail("no reply to request " + std::to_string(i) + " in time");
      link.poll();
      droce::rc::Completion c;
      if (link.endpoint->poll_cq(link.qpn, &c, 1) == 1) {
        if (c.status != droce::rc::WcStatus::kSuccess)
          return fail("request " + std::to_string(c.wr_id) + ": " + droce::rc::wc_status_name(c.status));
        sent = true;
      }
      droce::engine::MessageView reply;
      if (link.endpoint->receive_message(link.qpn, reply)) {
        std::uint8_t text[upper::kMaxMessage];
        const std::uint32_t got = reply.copy_to(text, sizeof text);
        link.endpoint->release(reply);
        if (!is_upper_of(text, got, request.data(), len) && mismatches++ == 0)
          std::fprintf(stderr, "upper-client: reply %llu (%u bytes) is not request %llu (%u bytes) in upper case\n",
                       static_cast<unsigned long long>(i), got, static_cast<unsigned long long>(i), len);
        answered = true;
      }
    }
  }
  upper::linger(link, 200);
  link.close();
  std::printf("upper-client: droce %s, %llu requests, %llu replies wrong\n", DROCE_VERSION_STRING,
              static_cast<unsigned long long>(count), static_cast<unsigned long long>(mismatches));
  return mismatches == 0 ? 0 : 1;
}
