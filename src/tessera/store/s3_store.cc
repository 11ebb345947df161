#include "tessera/store/s3_store.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <unistd.h>

#include "tessera/store/key_validation.h"

namespace tessera {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// An AWS config or credentials file: section -> key -> value. A key with an empty value followed by
// indented lines (`s3 =` then `  addressing_style = path`) gives the nested keys "s3.addressing_style".
using IniFile = std::map<std::string, std::map<std::string, std::string>>;

IniFile ReadIni(const std::string& path) {
  IniFile out;
  std::ifstream in(path);
  std::string line, section, parent;
  while (std::getline(in, line)) {
    const bool indented = !line.empty() && std::isspace(static_cast<unsigned char>(line[0]));
    const std::string text = Trim(line);
    if (text.empty() || text[0] == '#' || text[0] == ';') continue;
    if (text.front() == '[' && text.back() == ']') {
      section = Trim(std::string_view(text).substr(1, text.size() - 2));
      parent.clear();
      continue;
    }
    const size_t eq = text.find('=');
    if (eq == std::string::npos || section.empty()) continue;
    const std::string key = Trim(std::string_view(text).substr(0, eq));
    const std::string value = Trim(std::string_view(text).substr(eq + 1));
    if (indented && !parent.empty()) {
      out[section][parent + "." + key] = value;
    } else {
      out[section][key] = value;
      parent = value.empty() ? key : "";
    }
  }
  return out;
}

std::string HomeFile(const char* env, const char* name) {
  std::string path = Env(env);
  if (!path.empty()) return path;
  const std::string home = Env("HOME");
  return home.empty() ? "" : home + "/.aws/" + name;
}

std::string Lookup(const IniFile& file, const std::string& section, const std::string& key) {
  auto s = file.find(section);
  if (s == file.end()) return "";
  auto k = s->second.find(key);
  return k == s->second.end() ? "" : k->second;
}

Status CheckBucketName(const std::string& bucket, const std::string& location) {
  bool ok = bucket.size() >= 3 && bucket.size() <= 63;
  for (char c : bucket) ok &= std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
                             c == '.' || c == '-';
  if (ok) return Status::Ok();
  return InvalidArgument("s3://" + location + ": \"" + bucket +
                         "\" is not a valid bucket name (3 to 63 lowercase letters, digits, '.' and '-')");
}

}  // namespace

Result<S3Config> S3Config::FromEnvironment(const StoreOptions& overrides) {
  S3Config c;
  const std::string profile_env = overrides.profile                 ? *overrides.profile
                                  : !Env("AWS_PROFILE").empty()     ? Env("AWS_PROFILE")
                                                                    : Env("AWS_DEFAULT_PROFILE");
  const std::string profile = profile_env.empty() ? "default" : profile_env;
  const std::string config_path = HomeFile("AWS_CONFIG_FILE", "config");
  const std::string credentials_path = HomeFile("AWS_SHARED_CREDENTIALS_FILE", "credentials");
  const IniFile config = config_path.empty() ? IniFile{} : ReadIni(config_path);
  const IniFile credentials = credentials_path.empty() ? IniFile{} : ReadIni(credentials_path);
  const std::string config_section = profile == "default" ? "default" : "profile " + profile;
  if (!profile_env.empty() && !config.contains(config_section) && !credentials.contains(profile))
    return InvalidArgument(std::string(overrides.profile ? "storage_options: \"profile\"" : "AWS_PROFILE") +
                           ": profile \"" + profile + "\" is in neither " + config_path + " nor " + credentials_path);
  const auto from_files = [&](const std::string& key) {
    std::string v = Lookup(credentials, profile, key);
    return v.empty() ? Lookup(config, config_section, key) : v;
  };

  c.region = overrides.region.value_or(Env("AWS_REGION"));
  if (c.region.empty()) c.region = Env("AWS_DEFAULT_REGION");
  if (c.region.empty()) c.region = Lookup(config, config_section, "region");
  if (c.region.empty()) c.region = "us-east-1";

  c.endpoint = overrides.endpoint_url.value_or(Env("AWS_ENDPOINT_URL_S3"));
  if (c.endpoint.empty()) c.endpoint = Env("AWS_ENDPOINT_URL");
  if (c.endpoint.empty()) c.endpoint = Lookup(config, config_section, "s3.endpoint_url");
  if (c.endpoint.empty()) c.endpoint = Lookup(config, config_section, "endpoint_url");
  while (!c.endpoint.empty() && c.endpoint.back() == '/') c.endpoint.pop_back();

  if (overrides.anonymous.value_or(false)) {
    // Unsigned requests: no credential of the environment or the files is looked at.
  } else if (overrides.access_key_id) {
    c.access_key = *overrides.access_key_id;
    c.secret_key = overrides.secret_access_key.value_or("");
    c.session_token = overrides.session_token.value_or("");
  } else if (!Env("AWS_ACCESS_KEY_ID").empty()) {
    c.access_key = Env("AWS_ACCESS_KEY_ID");
    c.secret_key = Env("AWS_SECRET_ACCESS_KEY");
    c.session_token = Env("AWS_SESSION_TOKEN");
  } else {
    c.access_key = from_files("aws_access_key_id");
    c.secret_key = from_files("aws_secret_access_key");
    c.session_token = from_files("aws_session_token");
  }
  if (!c.access_key.empty() && c.secret_key.empty())
    return InvalidArgument("S3 credentials: an access key id without a secret access key (profile \"" + profile + "\")");

  std::string style = overrides.addressing_style.value_or(Env("TESSERA_S3_ADDRESSING_STYLE"));
  if (style.empty()) style = Lookup(config, config_section, "s3.addressing_style");
  if (style == "path") c.addressing = Addressing::kPath;
  else if (style == "virtual") c.addressing = Addressing::kVirtualHosted;
  else if (!style.empty() && style != "auto")
    return InvalidArgument("S3 addressing_style \"" + style + "\": expected auto, path or virtual");
  TESSERA_ASSIGN_OR_RETURN(c.client.retry.timeout_s, RetryTimeoutOf(overrides));
  return c;
}

S3Store::S3Store(std::string bucket, std::string prefix, S3Config config)
    : ObjectStoreReader(config.client), bucket_(std::move(bucket)), prefix_(std::move(prefix)), config_(std::move(config)) {
  while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
  while (!prefix_.empty() && prefix_.front() == '/') prefix_.erase(prefix_.begin());
  std::string scheme = "https", host = "s3." + config_.region + ".amazonaws.com";
  if (!config_.endpoint.empty()) {
    const size_t sep = config_.endpoint.find("://");
    scheme = sep == std::string::npos ? "https" : config_.endpoint.substr(0, sep);
    host = sep == std::string::npos ? config_.endpoint : config_.endpoint.substr(sep + 3);
  }
  // Virtual-hosted addressing needs a bucket name that is a valid host label (no dots over TLS).
  path_style_ = config_.addressing == S3Config::Addressing::kPath ||
                (config_.addressing == S3Config::Addressing::kAuto &&
                 (!config_.endpoint.empty() || bucket_.find('.') != std::string::npos));
  base_url_ = scheme + "://" + (path_style_ ? host : bucket_ + "." + host);
}

Result<std::unique_ptr<S3Store>> S3Store::Open(const std::string& bucket_and_prefix, const StoreOptions& options) {
  const size_t slash = bucket_and_prefix.find('/');
  std::string bucket = bucket_and_prefix.substr(0, slash);
  std::string prefix = slash == std::string::npos ? "" : bucket_and_prefix.substr(slash + 1);
  TESSERA_RETURN_IF_ERROR(CheckBucketName(bucket, bucket_and_prefix));
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (!prefix.empty()) {
    Status st = ValidateStoreKey(prefix);
    if (!st.ok()) return InvalidArgument("s3://" + bucket_and_prefix + ": " + st.message());
  }
  TESSERA_ASSIGN_OR_RETURN(S3Config config, S3Config::FromEnvironment(options));
  return std::make_unique<S3Store>(std::move(bucket), std::move(prefix), std::move(config));
}

std::string S3Store::Describe(const std::string& key) const {
  return "s3://" + bucket_ + "/" + (prefix_.empty() ? "" : prefix_ + "/") + key;
}

Result<std::string> S3Store::ObjectKey(const std::string& key) const {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  return prefix_.empty() ? key : prefix_ + "/" + key;
}

Result<http::Request> S3Store::RequestFor(const std::string& method, const std::string& key,
                                          const std::string& what) const {
  TESSERA_ASSIGN_OR_RETURN(std::string object, ObjectKey(key));
  return MakeRequest(method, Url(object), what);
}

std::string S3Store::Url(const std::string& object_key, const std::string& query) const {
  std::string url = base_url_;
  if (path_style_) url += "/" + bucket_;
  if (!object_key.empty() || !path_style_) url += "/" + http::UriEncode(object_key, /*keep_slash=*/true);
  if (!query.empty()) url += "?" + query;
  return url;
}

http::Request S3Store::MakeRequest(std::string method, std::string url, std::string what) const {
  http::Request r;
  r.method = std::move(method);
  r.url = std::move(url);
  r.what = std::move(what);
  r.headers.emplace_back("x-amz-content-sha256", "UNSIGNED-PAYLOAD");
  if (!config_.access_key.empty()) {
    r.aws_sigv4 = "aws:amz:" + config_.region + ":s3";
    r.user_password = config_.access_key + ":" + config_.secret_key;
    if (!config_.session_token.empty()) r.headers.emplace_back("x-amz-security-token", config_.session_token);
  }
  return r;
}

namespace {

// The ByteViews covering bytes [begin, end) of the concatenation of `parts`.
std::vector<ByteView> Slice(std::span<const ByteView> parts, uint64_t begin, uint64_t end) {
  std::vector<ByteView> out;
  uint64_t at = 0;
  for (ByteView p : parts) {
    const uint64_t lo = std::max(begin, at), hi = std::min(end, at + p.size());
    if (lo < hi) out.push_back(p.subspan(static_cast<size_t>(lo - at), static_cast<size_t>(hi - lo)));
    at += p.size();
    if (at >= end) break;
  }
  return out;
}

}  // namespace

Status S3Store::Set(const std::string& key, ByteView value) {
  const ByteView parts[] = {value};
  return SetParts(key, parts);
}

Status S3Store::SetParts(const std::string& key, std::span<const ByteView> parts) {
  TESSERA_ASSIGN_OR_RETURN(std::string object, ObjectKey(key));
  uint64_t size = 0;
  for (ByteView p : parts) size += p.size();
  const auto source = [&](uint64_t b, uint64_t e, Bytes*) { return Slice(parts, b, e); };
  Result<bool> stored = size > config_.multipart_threshold ? MultipartUpload(object, key, source, size)
                                                           : PutObject(object, key, parts, size);
  return stored.status();  // without a precondition, stored is true
}

Status S3Store::CopyFrom(const std::string& key, const ReadableStore& source, const std::string& source_key) {
  TESSERA_ASSIGN_OR_RETURN(std::string object, ObjectKey(key));
  TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> size, source.Size(source_key));
  if (!size || *size <= config_.multipart_threshold) return WritableStore::CopyFrom(key, source, source_key);
  auto read_part = [&](uint64_t begin, uint64_t end, Bytes* scratch) -> Result<std::vector<ByteView>> {
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> part, source.GetRange(source_key, begin, end - begin));
    if (!part) return NotFound(source.Describe(source_key) + ": disappeared while being copied");
    *scratch = std::move(*part);
    return std::vector<ByteView>{ByteView(*scratch)};
  };
  return MultipartUpload(object, key, read_part, *size).status();
}

namespace {

// The S3 error code in a response body ("" when none).
std::string ErrorCode(const http::Response& response) { return FirstXmlElement(response.Text(), "Code"); }

// Whether `response` says the write's precondition failed: 412 PreconditionFailed; 409
// ConditionalRequestConflict (AWS: a concurrent conditional write of the key won); and 404
// NoSuchKey, AWS's answer to If-Match when there is no object any more.
bool PreconditionFailed(const http::Response& response, bool has_if_match) {
  if (response.status == 412) return true;
  const std::string code = ErrorCode(response);
  if (response.status == 409 && code == "ConditionalRequestConflict") return true;
  return has_if_match && response.status == 404 && code == "NoSuchKey";
}

// false for a failed precondition, as an error when the request was retried: the try before may
// have been applied (its response lost), and the conflict then be with this very write.
Result<bool> ConditionFailed(const http::Request& request, const http::Response& response) {
  if (response.tries <= 1) return false;
  return IoError(request.what + ": the precondition failed (HTTP " + std::to_string(response.status) + " " +
                 ErrorCode(response) + ") on try " + std::to_string(response.tries) +
                 ", after a try whose outcome is unknown; it may have been stored: read the value again");
}

// Describes a write's precondition in messages: " if If-Match: \"etag\"".
std::string ConditionText(const std::pair<std::string, std::string>& precondition) {
  return precondition.first.empty() ? "" : " if " + precondition.first + ": " + precondition.second;
}

}  // namespace

Result<bool> S3Store::PutObject(const std::string& object_key, const std::string& key,
                                std::span<const ByteView> parts, uint64_t size, const Precondition& precondition) {
  http::Request request = MakeRequest("PUT", Url(object_key), "PUT " + Describe(key) + " (" + std::to_string(size) +
                                                                  " bytes)" + ConditionText(precondition));
  if (!precondition.first.empty()) request.headers.push_back(precondition);
  request.body = parts;
  TESSERA_ASSIGN_OR_RETURN(http::Response response, client_.Perform(request));
  if (!precondition.first.empty() && PreconditionFailed(response, precondition.first == "If-Match"))
    return ConditionFailed(request, response);
  if (response.status != 200) return ResponseError(request, response);
  return true;
}

Result<bool> S3Store::MultipartUpload(const std::string& object_key, const std::string& key, const PartSource& source,
                                      uint64_t size, const Precondition& precondition) {
  const std::string where = Describe(key);
  const http::Request create = MakeRequest("POST", Url(object_key, "uploads="), "CreateMultipartUpload " + where);
  TESSERA_ASSIGN_OR_RETURN(http::Response created, client_.Perform(create));
  if (created.status != 200) return ResponseError(create, created);
  const std::string upload_id = FirstXmlElement(created.Text(), "UploadId");
  if (upload_id.empty()) return IoError(create.what + ": no UploadId in the response");
  const std::string id_query = "uploadId=" + http::UriEncode(upload_id, false);

  const uint64_t part_size = std::max<uint64_t>(config_.part_size, uint64_t{5} << 20);
  const int64_t count = static_cast<int64_t>((size + part_size - 1) / part_size);
  std::vector<std::string> etags(static_cast<size_t>(count));
  std::optional<Result<bool>> condition_failed;  // set when the completion's precondition failed
  std::atomic<int64_t> next{0};
  std::mutex mu;
  Status failure = Status::Ok();
  std::atomic<bool> failed{false};
  const auto fail = [&](Status st) {
    std::lock_guard lock(mu);
    if (failure.ok()) failure = std::move(st);
    failed = true;
  };
  const auto upload = [&] {
    Bytes scratch;
    for (int64_t i; !failed.load() && (i = next.fetch_add(1)) < count;) {
      const uint64_t begin = static_cast<uint64_t>(i) * part_size, end = std::min(size, begin + part_size);
      Result<std::vector<ByteView>> body = source(begin, end, &scratch);
      if (!body.ok()) return fail(body.status());
      http::Request put = MakeRequest("PUT", Url(object_key, "partNumber=" + std::to_string(i + 1) + "&" + id_query),
                                      "UploadPart " + std::to_string(i + 1) + " of " + std::to_string(count) + " " +
                                          where + " bytes=" + http::ByteRange(begin, end - begin));
      put.body = *body;
      Result<http::Response> r = client_.Perform(put);
      Status st = !r.ok() ? r.status() : r->status != 200 ? ResponseError(put, *r) : Status::Ok();
      if (st.ok() && r->Header("etag").empty()) st = IoError(put.what + ": no ETag in the response");
      if (!st.ok()) return fail(st);
      etags[static_cast<size_t>(i)] = r->Header("etag");
    }
  };
  const int workers = static_cast<int>(std::min<int64_t>(std::max(1, config_.upload_concurrency), count));
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(upload);
  upload();
  for (std::thread& t : threads) t.join();

  if (failure.ok()) {
    std::string xml = "<CompleteMultipartUpload>";
    for (int64_t i = 0; i < count; ++i)
      xml += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + etags[static_cast<size_t>(i)] +
             "</ETag></Part>";
    xml += "</CompleteMultipartUpload>";
    const ByteView body[] = {ByteView(reinterpret_cast<const uint8_t*>(xml.data()), xml.size())};
    http::Request complete = MakeRequest("POST", Url(object_key, id_query),
                                         "CompleteMultipartUpload " + where + ConditionText(precondition));
    complete.body = body;
    complete.headers.emplace_back("Content-Type", "application/xml");
    if (!precondition.first.empty()) complete.headers.push_back(precondition);
    // S3 may report a failed completion inside a 200 response; InternalError there may be retried.
    for (int attempt = 0;; ++attempt) {
      Result<http::Response> r = client_.Perform(complete);
      if (!r.ok()) {
        failure = r.status();
        break;
      }
      const std::string_view text = r->Text();
      if (r->status == 200 && text.find("<Error>") == std::string_view::npos) return true;
      if (!precondition.first.empty() && (PreconditionFailed(*r, precondition.first == "If-Match") ||
                                          ErrorCode(*r) == "PreconditionFailed")) {
        if (attempt > 0) r->tries += attempt;  // an earlier completion's outcome is unknown too
        condition_failed = ConditionFailed(complete, *r);
        failure = condition_failed->ok() ? FailedPrecondition(complete.what) : condition_failed->status();
        break;
      }
      failure = ResponseError(complete, *r);
      if (r->status != 200 || attempt >= 3 || FirstXmlElement(text, "Code") != "InternalError") break;
    }
  }
  // Nothing of a failed upload may stay behind (parts are billed and invisible).
  const http::Request abort = MakeRequest("DELETE", Url(object_key, id_query), "AbortMultipartUpload " + where);
  Result<http::Response> aborted = client_.Perform(abort);
  if (!aborted.ok() || (aborted->status != 204 && aborted->status != 200 && aborted->status != 404))
    return IoError(failure.message() + "; aborting the upload failed too: " +
                   (aborted.ok() ? ResponseError(abort, *aborted).message() : aborted.status().message()));
  if (condition_failed) return *condition_failed;
  return failure;
}

Status S3Store::Erase(const std::string& key) {
  TESSERA_ASSIGN_OR_RETURN(std::string object, ObjectKey(key));
  const http::Request request = MakeRequest("DELETE", Url(object), "DELETE " + Describe(key));
  TESSERA_ASSIGN_OR_RETURN(http::Response response, client_.Perform(request));
  if (response.status == 204 || response.status == 200 || IsMissingKey(response)) return Status::Ok();
  return ResponseError(request, response);
}

Result<std::optional<VersionedValue>> S3Store::GetVersioned(const std::string& key) const {
  TESSERA_ASSIGN_OR_RETURN(const http::Request request, RequestFor("GET", key, "GET " + Describe(key)));
  TESSERA_ASSIGN_OR_RETURN(http::Response response, client_.Perform(request));
  if (IsMissingKey(response)) return std::optional<VersionedValue>();
  if (response.status != 200) return ResponseError(request, response);
  std::string etag = response.Header("etag");
  if (etag.empty()) return IoError(request.what + " (" + request.url + "): no ETag in the response");
  return std::optional<VersionedValue>(VersionedValue{std::move(response.body), std::move(etag)});
}

Result<bool> S3Store::SetPartsIf(const std::string& key, std::span<const ByteView> parts,
                                 const WriteCondition& condition) {
  TESSERA_ASSIGN_OR_RETURN(std::string object, ObjectKey(key));
  TESSERA_ASSIGN_OR_RETURN(const ConditionalSupport support, conditional_support());
  TESSERA_RETURN_IF_ERROR(support.put);
  const Precondition precondition = condition.generation ? Precondition("If-Match", *condition.generation)
                                                         : Precondition("If-None-Match", "*");
  uint64_t size = 0;
  for (ByteView p : parts) size += p.size();
  if (size <= config_.conditional_multipart_threshold) return PutObject(object, key, parts, size, precondition);
  const auto source = [&](uint64_t b, uint64_t e, Bytes*) { return Slice(parts, b, e); };
  return MultipartUpload(object, key, source, size, precondition);
}

Result<bool> S3Store::EraseIf(const std::string& key, const WriteCondition& condition) {
  TESSERA_ASSIGN_OR_RETURN(std::string object, ObjectKey(key));
  if (!condition.generation) {  // nothing to remove: true while there is nothing
    TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> size, Size(key));
    return !size.has_value();
  }
  TESSERA_ASSIGN_OR_RETURN(const ConditionalSupport support, conditional_support());
  TESSERA_RETURN_IF_ERROR(support.erase);
  http::Request request =
      MakeRequest("DELETE", Url(object), "DELETE " + Describe(key) + " if If-Match: " + *condition.generation);
  request.headers.emplace_back("If-Match", *condition.generation);
  TESSERA_ASSIGN_OR_RETURN(http::Response response, client_.Perform(request));
  if (response.status == 204 || response.status == 200) return true;
  if (PreconditionFailed(response, /*has_if_match=*/true)) return ConditionFailed(request, response);
  return ResponseError(request, response);
}

Result<S3Store::ConditionalSupport> S3Store::conditional_support() const {
  std::lock_guard<std::mutex> lock(probe_mu_);
  if (!conditional_) {
    TESSERA_ASSIGN_OR_RETURN(ConditionalSupport probed, ProbeConditionalWrites());
    conditional_ = std::move(probed);
  }
  return *conditional_;
}

Result<S3Store::ConditionalSupport> S3Store::ProbeConditionalWrites() const {
  std::random_device random;
  const std::string name = ".tessera-conditional-write-probe-" + std::to_string(::getpid()) + "-" +
                           std::to_string((uint64_t{random()} << 32) | random());
  const std::string object = prefix_.empty() ? name : prefix_ + "/" + name;
  const std::string where = Describe(name);
  const std::string stale_etag = "\"00000000000000000000000000000000\"";  // no object has it
  static constexpr uint8_t kProbeBytes[] = {'p', 'r', 'o', 'b', 'e'};
  const ByteView body[] = {ByteView(kProbeBytes, sizeof kProbeBytes)};
  // Sends one conditional request against the probe object; `*verdict` becomes OK when the server
  // refused it with 412, else kUnsupported naming what the server did. The error of a request
  // that got no answer is returned.
  const auto expect_refusal = [&](const std::string& method, const Precondition& precondition,
                                  const std::string& situation, Status* verdict) -> Status {
    http::Request request = MakeRequest(method, Url(object), method + " " + where + ConditionText(precondition));
    request.headers.push_back(precondition);
    if (method == "PUT") request.body = body;
    TESSERA_ASSIGN_OR_RETURN(http::Response response, client_.Perform(request));
    if (response.status == 412) {
      *verdict = Status::Ok();
      return Status::Ok();
    }
    std::string answer = "HTTP " + std::to_string(response.status);
    if (!ErrorCode(response).empty()) answer += " " + ErrorCode(response);
    *verdict = Unsupported(Describe("") + ": this S3 server does not honour conditional writes (" +
                           precondition.first + "): " + request.what + " " + situation + " answered " + answer +
                           " instead of 412 Precondition Failed");
    return Status::Ok();
  };
  http::Request create = MakeRequest("PUT", Url(object), "PUT " + where + " (probing conditional writes)");
  create.body = body;
  TESSERA_ASSIGN_OR_RETURN(http::Response created, client_.Perform(create));
  if (created.status != 200) return ResponseError(create, created);
  ConditionalSupport support;
  Status put_if_match;
  Status probed = expect_refusal("PUT", {"If-None-Match", "*"}, "over an existing object", &support.put);
  if (probed.ok()) probed = expect_refusal("PUT", {"If-Match", stale_etag}, "with a stale ETag", &put_if_match);
  if (probed.ok()) probed = expect_refusal("DELETE", {"If-Match", stale_etag}, "with a stale ETag", &support.erase);
  if (support.put.ok()) support.put = put_if_match;
  // The probe object goes whatever the answers were (a missing one is fine: an ignored condition
  // on DELETE removed it).
  const http::Request remove = MakeRequest("DELETE", Url(object), "DELETE " + where + " (the probe's object)");
  Result<http::Response> removed = client_.Perform(remove);
  TESSERA_RETURN_IF_ERROR(probed);
  if (!removed.ok()) return removed.status();
  if (removed->status != 204 && removed->status != 200 && !IsMissingKey(*removed))
    return ResponseError(remove, *removed);
  return support;
}

Result<std::vector<std::string>> S3Store::List(const std::string& prefix) const {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKeyPrefix(prefix));
  const std::string full = prefix_.empty() ? prefix : prefix_ + "/" + prefix;
  const size_t strip = prefix_.empty() ? 0 : prefix_.size() + 1;
  std::vector<std::string> keys;
  std::string token;
  for (int page = 1;; ++page) {
    // Query parameters in sorted order, as the signature's canonical request has them.
    std::string query;
    if (!token.empty()) query += "continuation-token=" + http::UriEncode(token, false) + "&";
    query += "list-type=2&max-keys=" + std::to_string(config_.list_page_size) + "&prefix=" + http::UriEncode(full, false);
    const http::Request request =
        MakeRequest("GET", Url("", query), "ListObjectsV2 " + Describe(prefix) + " (page " + std::to_string(page) + ")");
    TESSERA_ASSIGN_OR_RETURN(http::Response response, client_.Perform(request));
    if (response.status != 200) return ResponseError(request, response);
    const std::string_view xml = response.Text();
    for (const std::string& contents : XmlElements(xml, "Contents"))
      for (std::string& k : XmlElements(contents, "Key"))
        if (k.size() >= strip && k.compare(0, full.size(), full) == 0) keys.push_back(k.substr(strip));
    token = FirstXmlElement(xml, "NextContinuationToken");
    if (FirstXmlElement(xml, "IsTruncated") != "true" || token.empty()) break;
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

Result<std::vector<std::string>> S3Store::ListIncompleteUploads() const {
  const std::string query = "prefix=" + http::UriEncode(prefix_, false) + "&uploads=";
  const http::Request request = MakeRequest("GET", Url("", query), "ListMultipartUploads " + Describe(""));
  TESSERA_ASSIGN_OR_RETURN(http::Response response, client_.Perform(request));
  if (response.status != 200) return ResponseError(request, response);
  const std::string_view xml = response.Text();
  std::vector<std::string> keys;
  for (const std::string& upload : XmlElements(xml, "Upload")) keys.push_back(FirstXmlElement(upload, "Key"));
  return keys;
}

}  // namespace tessera
