// Small text helpers for messages and plans.
#pragma once

#include <string>
#include <string_view>

namespace tessera {

// "4,5,6" for {4, 5, 6} (any range of integers; `separator` between them).
template <typename Integers>
std::string JoinIntegers(const Integers& values, std::string_view separator = ",") {
  std::string s;
  for (const auto& v : values) {
    if (!s.empty()) s.append(separator);
    s += std::to_string(v);
  }
  return s;
}

}  // namespace tessera
