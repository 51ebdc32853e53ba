// Status: what every droce call that can fail returns — ok, or a code a program can act on plus a
// line of text a person can read (as an ibverbs call returns an errno and ibv_wc_status_str words).
// The protocol core and the engine share it.
//
// Two ways to fail: `fail(code, "literal")` keeps a pointer to static text and allocates nothing,
// for the data path (a full send queue is back-pressure, not an exception); `error(code, text)`
// owns a formatted line, for the control path.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace droce {

enum class StatusCode : std::uint8_t {
  kOk = 0,
  kInvalidArgument,  // a parameter or attribute out of range (EINVAL)
  kNotFound,         // no such QP, key, device or file (ENOENT)
  kBadState,         // the object's state forbids it now: a QP not in RTS, a port not started
  kQueueFull,        // a send, receive or channel queue is full: poll completions, then retry
  kBadKey,           // a local key, its bounds or its access rights do not allow the buffer
  kNoMemory,         // mbufs, hugepages, a pool, an allocation
  kUnsupported,      // the PMD, the peer or this build cannot do it
  kTimeout,          // a deadline passed
  kPeer,             // the peer sent something invalid, or went away
  kIo,               // the operating system refused (a socket, a file)
  kError,            // a failure no more specific code names
};

// The code's name, e.g. "queue full" (static text).
[[nodiscard]] constexpr const char* to_string(StatusCode c) {
  switch (c) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kBadState:
      return "bad state";
    case StatusCode::kQueueFull:
      return "queue full";
    case StatusCode::kBadKey:
      return "bad key";
    case StatusCode::kNoMemory:
      return "no memory";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kTimeout:
      return "timeout";
    case StatusCode::kPeer:
      return "peer error";
    case StatusCode::kIo:
      return "I/O error";
    case StatusCode::kError:
      return "error";
  }
  return "error";
}

class [[nodiscard]] Status {
 public:
  Status() = default;
  // Data path: `static_text` must outlive the Status (a string literal); nothing is allocated.
  static Status fail(StatusCode code, const char* static_text) {
    Status s;
    s.code_ = code == StatusCode::kOk ? StatusCode::kError : code;
    s.static_text_ = static_text;
    return s;
  }
  // Control path: a formatted line. Every error names its code (there is no codeless overload):
  // a caller acts on the code, a person reads the line.
  static Status error(StatusCode code, std::string message) {
    Status s;
    s.code_ = code == StatusCode::kOk ? StatusCode::kError : code;
    s.message_ = message.empty() ? std::string(to_string(s.code_)) : std::move(message);
    return s;
  }

  [[nodiscard]] bool ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] StatusCode code() const { return code_; }
  // The line of text ("" when ok); a copy, made only when asked for.
  [[nodiscard]] std::string message() const {
    if (ok()) return {};
    return static_text_ != nullptr ? std::string(static_text_) : message_;
  }
  // The same Status with `prefix` in front of its text (control path), e.g. "connect: ".
  [[nodiscard]] Status context(const std::string& prefix) const { return error(code_, prefix + message()); }

 private:
  StatusCode code_ = StatusCode::kOk;
  const char* static_text_ = nullptr;
  std::string message_;
};

}  // namespace droce
