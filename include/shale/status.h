// Status: the result of every fallible operation in shale.
//
// Errors are values: no exception crosses the public API. A Status is either OK (no allocation)
// or carries a code, an optional subcode-free message, and costs one heap string.
//
// Thread safety: a Status is a value type; distinct objects may be used from distinct threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace shale {

class [[nodiscard]] Status {
 public:
  enum class Code : unsigned char {
    kOk = 0,
    kNotFound,
    kCorruption,
    kNotSupported,
    kInvalidArgument,
    kIOError,
    kIncomplete,
    kBusy,
    kTimedOut,
    kAborted,
  };

  Status() noexcept = default;
  Status(const Status& other)
      : code_(other.code_), msg_(other.msg_ ? Copy(*other.msg_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) {
      code_ = other.code_;
      msg_ = other.msg_ ? Copy(*other.msg_) : nullptr;
    }
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status OK() { return Status(); }
  static Status NotFound(std::string_view msg = {}, std::string_view msg2 = {}) {
    return Status(Code::kNotFound, msg, msg2);
  }
  static Status Corruption(std::string_view msg = {}, std::string_view msg2 = {}) {
    return Status(Code::kCorruption, msg, msg2);
  }
  static Status NotSupported(std::string_view msg = {}, std::string_view msg2 = {}) {
    return Status(Code::kNotSupported, msg, msg2);
  }
  static Status InvalidArgument(std::string_view msg = {}, std::string_view msg2 = {}) {
    return Status(Code::kInvalidArgument, msg, msg2);
  }
  static Status IOError(std::string_view msg = {}, std::string_view msg2 = {}) {
    return Status(Code::kIOError, msg, msg2);
  }
  static Status Incomplete(std::string_view msg = {}, std::string_view msg2 = {}) {
    return Status(Code::kIncomplete, msg, msg2);
  }
  static Status Busy(std::string_view msg = {}, std::string_view msg2 = {}) {
    return Status(Code::kBusy, msg, msg2);
  }
  static Status TimedOut(std::string_view msg = {}, std::string_view msg2 = {}) {
    return Status(Code::kTimedOut, msg, msg2);
  }
  static Status Aborted(std::string_view msg = {}, std::string_view msg2 = {}) {
    return Status(Code::kAborted, msg, msg2);
  }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsNotSupported() const { return code_ == Code::kNotSupported; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsIncomplete() const { return code_ == Code::kIncomplete; }
  bool IsBusy() const { return code_ == Code::kBusy; }
  bool IsTimedOut() const { return code_ == Code::kTimedOut; }
  bool IsAborted() const { return code_ == Code::kAborted; }

  Code code() const { return code_; }
  // The message without the code name ("" for OK).
  std::string_view message() const { return msg_ ? std::string_view(*msg_) : std::string_view(); }
  // "OK", or "<Code name>: <message>".
  std::string ToString() const;

  // Explicitly drops a Status the caller has decided not to act on.
  void PermitUncheckedError() const {}

  friend bool operator==(const Status& a, const Status& b) { return a.code_ == b.code_; }

 private:
  Status(Code code, std::string_view msg, std::string_view msg2);
  static std::unique_ptr<std::string> Copy(const std::string& s) {
    return std::make_unique<std::string>(s);
  }

  Code code_ = Code::kOk;
  std::unique_ptr<std::string> msg_;
};

}  // namespace shale
