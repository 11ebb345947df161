// Errors are values with a kind. Every fallible function returns Status or Result<T>.
// A corrupt-data error names the key (or file) and the byte range it came from.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace tessera {

enum class ErrorKind {
  kOk = 0,
  kInvalidArgument,   // the caller asked for something malformed (bad slice, bad shape, bad option)
  kOutOfRange,        // an index or slice bound outside the array
  kNotFound,          // a key, file or dataset that does not exist
  kCorruptData,       // stored bytes that fail to decode or verify
  kIo,                // the operating system or store refused an operation
  kUnsupported,       // valid input we do not implement (unknown codec, dtype, format feature)
  kOutOfResources,    // memory or another bounded resource exhausted
  kFailedPrecondition, // the object is in the wrong state (closed writer, ...)
  kAlreadyExists      // creating where something exists (mode w-); the message names what is there
};

const char* ErrorKindName(ErrorKind kind);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return kind_ == ErrorKind::kOk; }
  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  // "corrupt data: shard c/0/1: index checksum mismatch (bytes [100, 168))"
  std::string ToString() const;
  // Prefixes context to the message, keeping the kind and the field. No-op on OK.
  Status WithContext(const std::string& context) const;

  // The field (or JSON path) an error is about: a spec field ("chunk_shape"), an option
  // ("backend") or a path into a JSON document ("precomputed.resolution_xyz[1]"); empty when the
  // error is about no one field. Front ends name their own spelling of it from this, never from
  // the message text.
  const std::string& field() const { return field_; }
  // This error, about `field`, whose name starts the message ("chunk_shape: ..."). No-op on OK.
  Status WithField(std::string field) const;
  // Whether the message still starts with "<field>: " (WithContext puts context before it).
  bool field_leads_message() const { return !field_.empty() && field_leads_; }

 private:
  ErrorKind kind_ = ErrorKind::kOk;
  std::string message_;
  std::string field_;
  bool field_leads_ = false;
};

inline Status InvalidArgument(std::string m) { return {ErrorKind::kInvalidArgument, std::move(m)}; }
inline Status OutOfRange(std::string m) { return {ErrorKind::kOutOfRange, std::move(m)}; }
inline Status NotFound(std::string m) { return {ErrorKind::kNotFound, std::move(m)}; }
inline Status CorruptData(std::string m) { return {ErrorKind::kCorruptData, std::move(m)}; }
inline Status IoError(std::string m) { return {ErrorKind::kIo, std::move(m)}; }
inline Status Unsupported(std::string m) { return {ErrorKind::kUnsupported, std::move(m)}; }
inline Status OutOfResources(std::string m) { return {ErrorKind::kOutOfResources, std::move(m)}; }
inline Status FailedPrecondition(std::string m) { return {ErrorKind::kFailedPrecondition, std::move(m)}; }
inline Status AlreadyExists(std::string m) { return {ErrorKind::kAlreadyExists, std::move(m)}; }

// "[begin, end)" for messages about byte ranges.
std::string ByteRangeText(uint64_t begin, uint64_t end);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}                // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}         // NOLINT: must not be OK
  // Converts Result<Derived*-like> to Result<Base*-like> (e.g. shared_ptr upcasts).
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U, T> && !std::is_same_v<U, T>>>
  Result(Result<U>&& other)  // NOLINT: implicit by design
      : v_(other.ok() ? std::variant<T, Status>(T(std::move(other).value()))
                      : std::variant<T, Status>(other.status())) {}
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace tessera

#define TESSERA_CONCAT_INNER(a, b) a##b
#define TESSERA_CONCAT(a, b) TESSERA_CONCAT_INNER(a, b)

#define TESSERA_RETURN_IF_ERROR(expr)              \
  do {                                             \
    ::tessera::Status _tessera_st = (expr);        \
    if (!_tessera_st.ok()) return _tessera_st;     \
  } while (0)

#define TESSERA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

#define TESSERA_ASSIGN_OR_RETURN(lhs, expr) \
  TESSERA_ASSIGN_OR_RETURN_IMPL(TESSERA_CONCAT(_tessera_r_, __COUNTER__), lhs, expr)
