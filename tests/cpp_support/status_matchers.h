// Checking errors in tests (test-only; not part of the library): an error test states the kind
// and the facts the message must name (the key or file, the byte range, the field), not just
// that the call failed.
//
//   EXPECT_ERROR(store.GetRange("k", 8, 4), ErrorKind::kOutOfRange, "memory://k", "[8, 12)");
//   ASSERT_ERROR(OpenArray(path), ErrorKind::kNotFound, path);
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "tessera/core/status.h"

namespace tessera::status_test {

// Success when `status` is an error of `kind` whose message contains every one of `facts`.
inline ::testing::AssertionResult IsError(const Status& status, ErrorKind kind,
                                          std::initializer_list<std::string_view> facts = {}) {
  if (status.ok()) return ::testing::AssertionFailure() << "expected a " << ErrorKindName(kind) << " error, got OK";
  if (status.kind() != kind)
    return ::testing::AssertionFailure() << "expected a " << ErrorKindName(kind) << " error, got "
                                         << status.ToString();
  for (std::string_view fact : facts) {
    if (status.message().find(fact) == std::string::npos)
      return ::testing::AssertionFailure() << "the message does not name \"" << fact << "\": " << status.ToString();
  }
  return ::testing::AssertionSuccess() << status.ToString();
}

template <typename T>
::testing::AssertionResult IsError(const Result<T>& result, ErrorKind kind,
                                   std::initializer_list<std::string_view> facts = {}) {
  if (result.ok())
    return ::testing::AssertionFailure() << "expected a " << ErrorKindName(kind) << " error, got a value";
  return IsError(result.status(), kind, facts);
}

}  // namespace tessera::status_test

// EXPECT_ERROR(expr, kind, "fact", ...): `expr` (a Status or Result) is an error of `kind` whose
// message names every fact.
#define EXPECT_ERROR(expr, kind, ...) EXPECT_TRUE(::tessera::status_test::IsError((expr), (kind), {__VA_ARGS__}))
#define ASSERT_ERROR(expr, kind, ...) ASSERT_TRUE(::tessera::status_test::IsError((expr), (kind), {__VA_ARGS__}))
