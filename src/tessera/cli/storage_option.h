// `--storage-option KEY=VALUE` (repeatable): how a command reaches an object store instead of (or
// on top of) the environment, the same settings the Python API takes as storage_options
// (store/store_options.h: endpoint_url, region, profile, addressing_style, anonymous,
// retry_timeout, access_key_id, secret_access_key, session_token).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tessera/core/status.h"
#include "tessera/store/store_options.h"

namespace tessera::cli {

// Adds --storage-option to `cmd`, collecting each KEY=VALUE given into `key_values`.
void AddStorageOption(CLI::App* cmd, std::vector<std::string>* key_values);

// The options `key_values` give: anonymous takes true or false, retry_timeout a number of
// seconds, the others text. A malformed item, an unknown key or a bad value is kInvalidArgument
// naming --storage-option and the key.
Result<StoreOptions> ParseStorageOptions(const std::vector<std::string>& key_values);

}  // namespace tessera::cli
