// Status: the control path's [[nodiscard]] result — ok, or one human-readable error line.
#pragma once

#include <string>
#include <utility>

namespace droce::engine {

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status error(std::string message) { return Status(std::move(message)); }

  [[nodiscard]] bool ok() const { return message_.empty(); }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  explicit Status(std::string m) : message_(m.empty() ? std::string("unknown error") : std::move(m)) {}
  std::string message_;
};

}  // namespace droce::engine
