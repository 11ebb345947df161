// A safety net for code that reads JSON documents from storage: a member of an unexpected type that
// a check missed makes nlohmann::json throw; GuardJson turns that into an InvalidArgument error that
// names the document, so a malformed file is an error and never an escaping exception.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tessera/core/status.h"

namespace tessera {

template <typename Parse>
auto GuardJson(const std::string& where, Parse&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(where + ": malformed document: " + e.what());
  }
}

}  // namespace tessera
