#include "tessera/cli/storage_option.h"

#include <nlohmann/json.hpp>

namespace tessera::cli {

void AddStorageOption(CLI::App* cmd, std::vector<std::string>* key_values) {
  cmd->add_option("--storage-option", *key_values,
                  "KEY=VALUE: how to reach an s3:// or http(s):// store instead of the environment (repeatable; "
                  "keys endpoint_url, region, profile, addressing_style (auto|path|virtual), anonymous (true|false), "
                  "retry_timeout (seconds), access_key_id, secret_access_key, session_token)");
}

Result<StoreOptions> ParseStorageOptions(const std::vector<std::string>& key_values) {
  nlohmann::json options = nlohmann::json::object();
  for (const std::string& item : key_values) {
    const size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0)
      return InvalidArgument("--storage-option: expected KEY=VALUE, got \"" + item + "\"");
    const std::string key = item.substr(0, equals);
    const std::string value = item.substr(equals + 1);
    if (options.contains(key)) return InvalidArgument("--storage-option: " + key + " is given twice");
    // anonymous and retry_timeout are a JSON boolean and number; text that is neither stays text,
    // so that StoreOptions::FromJson names the key and what it expected.
    nlohmann::json typed = value;
    if (key == "anonymous" || key == "retry_timeout") {
      const nlohmann::json parsed = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_boolean() || parsed.is_number()) typed = parsed;
    }
    options[key] = typed;
  }
  Result<StoreOptions> parsed = StoreOptions::FromJson(options);
  if (!parsed.ok()) return parsed.status().WithContext("--storage-option");
  return parsed;
}

}  // namespace tessera::cli
