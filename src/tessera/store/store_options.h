// How to reach an object store, given by the caller instead of (or on top of) the environment:
// the `storage_options` of tessera.open / create / convert and of the scale-out tasks, which carry
// them as plain JSON through a Dask graph so that every worker reaches the store the client named.
//
// Every field is optional; a field not given is filled from the environment and the AWS files as
// before (S3Config::FromEnvironment), so `{}` means "the environment's". Credentials are taken from
// the options only when the caller passes them; otherwise they stay in the environment or the
// profile files. The JSON keys (FromJson, ToJson) follow the AWS tools' names:
//
//   endpoint_url       "http://10.0.0.1:8333"    (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL)
//   region             "eu-west-1"               (AWS_REGION, AWS_DEFAULT_REGION)
//   profile            "lab"                     (AWS_PROFILE): which profile of the AWS files
//   addressing_style   "auto" | "path" | "virtual" (TESSERA_S3_ADDRESSING_STYLE)
//   anonymous          true: unsigned requests, whatever credentials exist
//   retry_timeout      seconds a request keeps retrying transient failures (TESSERA_RETRY_TIMEOUT_S)
//   access_key_id, secret_access_key, session_token
//
// retry_timeout applies to http(s):// locations too; the rest only to s3://.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/core/status.h"

namespace tessera {

struct StoreOptions {
  std::optional<std::string> endpoint_url;
  std::optional<std::string> region;
  std::optional<std::string> profile;
  std::optional<std::string> addressing_style;  // "auto", "path" or "virtual"
  std::optional<bool> anonymous;
  std::optional<double> retry_timeout_s;  // > 0
  std::optional<std::string> access_key_id, secret_access_key, session_token;

  // True when nothing is given (the environment decides everything).
  bool empty() const;

  // From a JSON object (null: no options). An unknown key, a value of the wrong type or out of
  // range is kInvalidArgument naming the key ("storage_options: unknown key \"endpoint\" ...").
  static Result<StoreOptions> FromJson(const nlohmann::json& json);
  // The given fields only, under FromJson's keys: FromJson(ToJson()) is the same options.
  nlohmann::json ToJson() const;
};

// The retry budget when neither the options nor TESSERA_RETRY_TIMEOUT_S give one.
inline constexpr double kDefaultRetryTimeoutS = 120.0;

// The retry budget of `options`: its retry_timeout, else TESSERA_RETRY_TIMEOUT_S, else
// kDefaultRetryTimeoutS. An environment value that is not a positive number is kInvalidArgument.
Result<double> RetryTimeoutOf(const StoreOptions& options);

}  // namespace tessera
