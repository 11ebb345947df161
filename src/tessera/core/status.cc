#include "tessera/core/status.h"

namespace tessera {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kOk: return "ok";
    case ErrorKind::kInvalidArgument: return "invalid argument";
    case ErrorKind::kOutOfRange: return "out of range";
    case ErrorKind::kNotFound: return "not found";
    case ErrorKind::kCorruptData: return "corrupt data";
    case ErrorKind::kIo: return "I/O error";
    case ErrorKind::kUnsupported: return "unsupported";
    case ErrorKind::kOutOfResources: return "out of resources";
    case ErrorKind::kFailedPrecondition: return "failed precondition";
    case ErrorKind::kAlreadyExists: return "already exists";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(ErrorKindName(kind_)) + ": " + message_;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  Status s(kind_, context + ": " + message_);
  s.field_ = field_;
  return s;
}

Status Status::WithField(std::string field) const {
  if (ok()) return *this;
  Status s = *this;
  s.field_leads_ = !field.empty();
  s.field_ = std::move(field);
  return s;
}

std::string ByteRangeText(uint64_t begin, uint64_t end) {
  return "bytes [" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

}  // namespace tessera
