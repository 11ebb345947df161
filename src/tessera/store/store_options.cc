#include "tessera/store/store_options.h"

#include <cmath>
#include <cstdlib>
#include <set>

namespace tessera {
namespace {

constexpr const char* kWhat = "storage_options";

Status WrongType(const std::string& key, const char* expected, const nlohmann::json& value) {
  return InvalidArgument(std::string(kWhat) + ": \"" + key + "\" must be " + expected + ", not " + value.dump());
}

Status ReadString(const nlohmann::json& json, const std::string& key, std::optional<std::string>* out) {
  auto it = json.find(key);
  if (it == json.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return WrongType(key, "a string", *it);
  *out = it->get<std::string>();
  return Status::Ok();
}

Result<double> PositiveSeconds(const std::string& what, double seconds) {
  if (!std::isfinite(seconds) || seconds <= 0)
    return InvalidArgument(what + " must be a positive number of seconds, not " + std::to_string(seconds));
  return seconds;
}

}  // namespace

bool StoreOptions::empty() const { return ToJson().empty(); }

Result<StoreOptions> StoreOptions::FromJson(const nlohmann::json& json) {
  StoreOptions o;
  if (json.is_null()) return o;
  if (!json.is_object()) return InvalidArgument(std::string(kWhat) + " must be a mapping of option to value, not " + json.dump());
  static const std::set<std::string> kKeys = {"endpoint_url", "region", "profile", "addressing_style", "anonymous",
                                             "retry_timeout", "access_key_id", "secret_access_key", "session_token"};
  std::string unknown;
  for (const auto& [key, value] : json.items())
    if (!kKeys.contains(key)) unknown += (unknown.empty() ? "\"" : ", \"") + key + "\"";
  if (!unknown.empty())
    return InvalidArgument(std::string(kWhat) + ": unknown key " + unknown +
                           " (known: endpoint_url, region, profile, addressing_style, anonymous, retry_timeout, "
                           "access_key_id, secret_access_key, session_token)");
  TESSERA_RETURN_IF_ERROR(ReadString(json, "endpoint_url", &o.endpoint_url));
  TESSERA_RETURN_IF_ERROR(ReadString(json, "region", &o.region));
  TESSERA_RETURN_IF_ERROR(ReadString(json, "profile", &o.profile));
  TESSERA_RETURN_IF_ERROR(ReadString(json, "addressing_style", &o.addressing_style));
  TESSERA_RETURN_IF_ERROR(ReadString(json, "access_key_id", &o.access_key_id));
  TESSERA_RETURN_IF_ERROR(ReadString(json, "secret_access_key", &o.secret_access_key));
  TESSERA_RETURN_IF_ERROR(ReadString(json, "session_token", &o.session_token));
  if (o.addressing_style && *o.addressing_style != "auto" && *o.addressing_style != "path" &&
      *o.addressing_style != "virtual")
    return InvalidArgument(std::string(kWhat) + ": \"addressing_style\" is \"" + *o.addressing_style +
                           "\": expected auto, path or virtual");
  if (o.endpoint_url && o.endpoint_url->empty())
    return InvalidArgument(std::string(kWhat) + ": \"endpoint_url\" is empty (leave it out for the environment's)");
  if (auto it = json.find("anonymous"); it != json.end() && !it->is_null()) {
    if (!it->is_boolean()) return WrongType("anonymous", "true or false", *it);
    o.anonymous = it->get<bool>();
  }
  if (auto it = json.find("retry_timeout"); it != json.end() && !it->is_null()) {
    if (!it->is_number()) return WrongType("retry_timeout", "a number of seconds", *it);
    TESSERA_ASSIGN_OR_RETURN(o.retry_timeout_s,
                             PositiveSeconds(std::string(kWhat) + ": \"retry_timeout\"", it->get<double>()));
  }
  if (o.access_key_id.has_value() != o.secret_access_key.has_value())
    return InvalidArgument(std::string(kWhat) + ": \"access_key_id\" and \"secret_access_key\" go together (one is missing)");
  return o;
}

nlohmann::json StoreOptions::ToJson() const {
  nlohmann::json j = nlohmann::json::object();
  const auto put = [&](const char* key, const std::optional<std::string>& v) {
    if (v) j[key] = *v;
  };
  put("endpoint_url", endpoint_url);
  put("region", region);
  put("profile", profile);
  put("addressing_style", addressing_style);
  if (anonymous) j["anonymous"] = *anonymous;
  if (retry_timeout_s) j["retry_timeout"] = *retry_timeout_s;
  put("access_key_id", access_key_id);
  put("secret_access_key", secret_access_key);
  put("session_token", session_token);
  return j;
}

Result<double> RetryTimeoutOf(const StoreOptions& options) {
  if (options.retry_timeout_s) return *options.retry_timeout_s;
  const char* env = std::getenv("TESSERA_RETRY_TIMEOUT_S");
  if (!env || !*env) return kDefaultRetryTimeoutS;
  char* end = nullptr;
  const double seconds = std::strtod(env, &end);
  if (end == env || *end != '\0')
    return InvalidArgument(std::string("TESSERA_RETRY_TIMEOUT_S is \"") + env + "\": expected a number of seconds");
  return PositiveSeconds("TESSERA_RETRY_TIMEOUT_S", seconds);
}

}  // namespace tessera
