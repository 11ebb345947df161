// Helpers for reading a codec's JSON "configuration" object, shared by the codec factories.
// Every error is kInvalidArgument and names the codec and the field: `gzip codec: "level" must be
// an integer in [0, 9], got 12`. A null (absent) configuration reads as an empty object.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tessera/core/status.h"

namespace tessera::codec_config {

inline Status FieldError(std::string_view codec, std::string_view field, std::string_view what,
                         const nlohmann::json& got) {
  return InvalidArgument(std::string(codec) + " codec: \"" + std::string(field) + "\" " +
                         std::string(what) + ", got " + got.dump());
}

// OK when `config` is null or an object whose keys are all in `allowed`.
inline Status CheckFields(std::string_view codec, const nlohmann::json& config,
                          std::initializer_list<std::string_view> allowed) {
  if (config.is_null()) return Status::Ok();
  if (!config.is_object()) {
    return InvalidArgument(std::string(codec) + " codec: configuration must be an object, got " +
                           config.dump());
  }
  for (const auto& item : config.items()) {
    bool known = false;
    for (std::string_view name : allowed) known = known || item.key() == name;
    if (!known) {
      return InvalidArgument(std::string(codec) + " codec: unknown configuration field \"" +
                             item.key() + "\"");
    }
  }
  return Status::Ok();
}

// The field's JSON value, or nullptr when the configuration is null or lacks it.
inline const nlohmann::json* Find(const nlohmann::json& config, std::string_view field) {
  if (!config.is_object()) return nullptr;
  auto it = config.find(std::string(field));
  return it == config.end() ? nullptr : &*it;
}

// An integer field in [min, max]; `fallback` when absent (absent with no fallback is an error).
inline Result<int64_t> GetInt(std::string_view codec, const nlohmann::json& config,
                              std::string_view field, std::optional<int64_t> fallback, int64_t min,
                              int64_t max) {
  const nlohmann::json* j = Find(config, field);
  if (j == nullptr) {
    if (fallback) return *fallback;
    return InvalidArgument(std::string(codec) + " codec: \"" + std::string(field) +
                           "\" is required");
  }
  const std::string range =
      "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (!j->is_number_integer()) return FieldError(codec, field, range, *j);
  if (j->is_number_unsigned() && j->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return FieldError(codec, field, range, *j);
  }
  const int64_t v = j->get<int64_t>();
  if (v < min || v > max) return FieldError(codec, field, range, *j);
  return v;
}

// A boolean field; `fallback` when absent.
inline Result<bool> GetBool(std::string_view codec, const nlohmann::json& config,
                            std::string_view field, bool fallback) {
  const nlohmann::json* j = Find(config, field);
  if (j == nullptr) return fallback;
  if (!j->is_boolean()) return FieldError(codec, field, "must be true or false", *j);
  return j->get<bool>();
}

// A string field; nullopt when absent.
inline Result<std::optional<std::string>> GetString(std::string_view codec,
                                                    const nlohmann::json& config,
                                                    std::string_view field) {
  const nlohmann::json* j = Find(config, field);
  if (j == nullptr) return std::optional<std::string>();
  if (!j->is_string()) return FieldError(codec, field, "must be a string", *j);
  return std::optional<std::string>(j->get<std::string>());
}

}  // namespace tessera::codec_config
