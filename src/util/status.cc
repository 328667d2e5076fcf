#include "shale/status.h"

#include "shale/slice.h"

namespace shale {

Status::Status(Code code, std::string_view msg, std::string_view msg2) : code_(code) {
  std::string m(msg);
  if (!msg2.empty()) {
    m.append(": ");
    m.append(msg2);
  }
  if (!m.empty()) msg_ = std::make_unique<std::string>(std::move(m));
}

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kNotFound:
      name = "NotFound";
      break;
    case Code::kCorruption:
      name = "Corruption";
      break;
    case Code::kNotSupported:
      name = "Not implemented";
      break;
    case Code::kInvalidArgument:
      name = "Invalid argument";
      break;
    case Code::kIOError:
      name = "IO error";
      break;
    case Code::kIncomplete:
      name = "Result incomplete";
      break;
    case Code::kBusy:
      name = "Resource busy";
      break;
    case Code::kTimedOut:
      name = "Operation timed out";
      break;
    case Code::kAborted:
      name = "Operation aborted";
      break;
  }
  std::string r(name);
  if (msg_) {
    r.append(": ");
    r.append(*msg_);
  }
  return r;
}

std::string Slice::ToString(bool hex) const {
  if (!hex) return std::string(data_, size_);
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string r;
  r.reserve(2 * size_);
  for (size_t i = 0; i < size_; i++) {
    auto c = static_cast<unsigned char>(data_[i]);
    r.push_back(kDigits[c >> 4]);
    r.push_back(kDigits[c & 0xf]);
  }
  return r;
}

}  // namespace shale
