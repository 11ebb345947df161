#include "tessera/core/json_guard.h"

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

TEST(GuardJson, AJsonExceptionBecomesAnErrorNamingTheDocument) {
  const nlohmann::json doc = {{"order", nullptr}};
  auto unchecked = [&]() -> Result<std::string> { return doc["order"].get<std::string>(); };
  EXPECT_ERROR(GuardJson("a/.zarray", unchecked), ErrorKind::kInvalidArgument, "a/.zarray", "malformed document",
               "type must be string, but is null");
  auto fine = GuardJson("a/.zarray", [&]() -> Result<std::string> { return doc.dump(); });
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(*fine, "{\"order\":null}");
}

}  // namespace
}  // namespace tessera
