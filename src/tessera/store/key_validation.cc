#include "tessera/store/key_validation.h"

#include <string_view>

namespace tessera {
namespace {

// Empty when `segment` is a valid key segment, otherwise the rule it breaks.
const char* SegmentProblem(std::string_view segment) {
  if (segment.empty()) return "has an empty path segment";
  if (segment == "." || segment == "..") return "has a \".\" or \"..\" path segment";
  return "";
}

Status InvalidKey(const char* what, const std::string& key, const char* problem) {
  return InvalidArgument(std::string("store ") + what + " \"" + key + "\" " + problem);
}

}  // namespace

Status ValidateStoreKey(const std::string& key) {
  if (key.empty()) return InvalidArgument("store key is empty");
  if (key.find('\0') != std::string::npos) return InvalidKey("key", key, "contains a NUL character");
  if (key.front() == '/') return InvalidKey("key", key, "is absolute (starts with '/')");
  std::string_view rest(key);
  while (true) {
    const size_t slash = rest.find('/');
    const char* problem = SegmentProblem(rest.substr(0, slash));
    if (*problem) return InvalidKey("key", key, problem);
    if (slash == std::string_view::npos) return Status::Ok();
    rest.remove_prefix(slash + 1);
  }
}

Status ValidateStoreKeyPrefix(const std::string& prefix) {
  if (prefix.empty()) return Status::Ok();
  if (prefix.find('\0') != std::string::npos)
    return InvalidKey("key prefix", prefix, "contains a NUL character");
  if (prefix.front() == '/') return InvalidKey("key prefix", prefix, "is absolute (starts with '/')");
  std::string_view rest(prefix);
  for (size_t slash = rest.find('/'); slash != std::string_view::npos; slash = rest.find('/')) {
    const char* problem = SegmentProblem(rest.substr(0, slash));
    if (*problem) return InvalidKey("key prefix", prefix, problem);
    rest.remove_prefix(slash + 1);
  }
  return Status::Ok();  // the trailing partial segment matches as a plain string prefix
}

Status CheckByteRange(const std::string& where, uint64_t offset, uint64_t length, uint64_t size) {
  if (offset <= size && length <= size - offset) return Status::Ok();
  const uint64_t end = length > UINT64_MAX - offset ? UINT64_MAX : offset + length;
  return OutOfRange(where + ": requested " + ByteRangeText(offset, end) + " but the value is " +
                    std::to_string(size) + " bytes");
}

Status CheckSuffixLength(const std::string& where, uint64_t length, uint64_t size) {
  if (length <= size) return Status::Ok();
  return OutOfRange(where + ": requested the last " + std::to_string(length) +
                    " bytes but the value is " + std::to_string(size) + " bytes");
}

}  // namespace tessera
