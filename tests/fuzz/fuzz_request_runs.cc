// libFuzzer target (issue 37): the input drives the requester model of tests/rc/request_run_harness.h
// (in-order SEND and WRITE messages, duplicates, gaps, reordering, go-back-N resends, hostile packets inside
// runs, receives posted or not) into two responder QPs, one fed packet by packet (on_packet), one
// by runs (on_request_run) as RcEndpoint::receive gathers them. Any difference in a completion, an
// ACK/NAK, a counter, the sequence state, the receive buffers or the WRITE target traps.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/rc/request_run_harness.h"

namespace {

class InputBytes : public droce::test::ByteSource {
 public:
  InputBytes(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}
  std::uint8_t byte() override {
    if (n_ == 0) return 0;
    --n_;
    return *p_++;
  }
  [[nodiscard]] bool exhausted() const override { return n_ == 0; }

 private:
  const std::uint8_t* p_;
  std::size_t n_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  droce::test::RequestRunPair pair;
  if (!pair.ready()) __builtin_trap();
  InputBytes src(data, size);
  droce::test::RequestRunScript script(src, pair.write_rkey());
  if (!script.play(pair, 64).empty()) __builtin_trap();
  return 0;
}
