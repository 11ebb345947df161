// A store on an S3-compatible object store: key "a/b" is the object <prefix>/a/b of a bucket.
//
// Atomic publication. S3 has no rename; every object appears whole or not at all: a value is one
// PUT, or, above the multipart threshold, one multipart upload whose parts are uploaded
// concurrently and which becomes visible only when completed. A failed multipart upload is
// aborted, so no parts are left behind. Erase is a DELETE (a missing key is fine).
//
// Conditional writes (compare-and-swap). A value's generation is its ETag (GetVersioned is a GET
// that keeps it); SetPartsIf is a PUT with If-Match: <etag> (If-None-Match: * for a value expected
// missing), EraseIf a DELETE with If-Match. 412 PreconditionFailed, 409 ConditionalRequestConflict
// and (If-Match on AWS) 404 NoSuchKey answer false. Before its first conditional write, a store
// probes whether the server honours the conditions (see ProbeConditionalWrites): one that would
// ignore them is kUnsupported, never a silent lost update. A value up to
// S3Config::conditional_multipart_threshold goes up in one PUT, whose condition every server that
// has conditions checks atomically; only a larger one is a multipart upload with the condition on
// CompleteMultipartUpload, which AWS checks atomically but SeaweedFS (4.48) does not: two
// concurrent completions with the same If-Match can both succeed there.
//
// Configuration follows the AWS tools (S3Config::FromEnvironment): AWS_ENDPOINT_URL(_S3),
// AWS_REGION / AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN,
// then the AWS_PROFILE (default "default") of ~/.aws/credentials and ~/.aws/config
// (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE); without credentials requests are anonymous
// (public buckets). StoreOptions given by the caller (tessera.open(..., storage_options=...)) take
// the place of the environment's setting they name; the environment fills the rest. Requests are signed with AWS Signature V4 (curl's), payloads unsigned
// (x-amz-content-sha256: UNSIGNED-PAYLOAD).
//
// Errors: a missing key is nullopt; anything the server refuses is kIo naming the request
// ("GET s3://bucket/key bytes=0-99"), the URL, the HTTP status and S3's error code and message;
// transient failures are retried first (see http_client.h).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/store/object_store_reader.h"
#include "tessera/store/store_options.h"

namespace tessera {

struct S3Config {
  enum class Addressing { kAuto, kPath, kVirtualHosted };

  std::string endpoint;  // "http://127.0.0.1:8333"; empty: https://s3.<region>.amazonaws.com
  std::string region = "us-east-1";
  std::string access_key, secret_key, session_token;  // empty access key: anonymous
  // kAuto: path-style with a custom endpoint, virtual-hosted on AWS.
  Addressing addressing = Addressing::kAuto;
  uint64_t multipart_threshold = uint64_t{64} << 20;  // larger values go up in parts
  uint64_t part_size = uint64_t{16} << 20;            // >= 5 MiB (S3's minimum but the last)
  int upload_concurrency = 4;                         // parts of one value in flight
  // Conditional writes (SetPartsIf) of values up to this size are one PUT, whatever
  // multipart_threshold says: S3's limit of one PUT (5 GiB), since some servers do not check a
  // multipart upload's condition atomically (see above).
  uint64_t conditional_multipart_threshold = uint64_t{5} << 30;
  int list_page_size = 1000;                          // keys per ListObjectsV2 page (max-keys)
  http::ClientOptions client;

  // The configuration the AWS tools would use, from the environment and the AWS config files
  // (see above), with what `overrides` gives in place of the environment's (its profile chooses
  // the files' section; anonymous drops every credential; its keys replace the environment's and
  // the files'). A profile that no file has is kInvalidArgument naming it.
  static Result<S3Config> FromEnvironment(const StoreOptions& overrides = {});
};

class S3Store final : public ObjectStoreReader {
 public:
  // A store over s3://bucket/prefix. Touches nothing on the server.
  S3Store(std::string bucket, std::string prefix, S3Config config);
  // From "bucket/prefix" (a location's path) and the environment's configuration, overridden by
  // `options`.
  static Result<std::unique_ptr<S3Store>> Open(const std::string& bucket_and_prefix, const StoreOptions& options = {});

  // "s3://bucket/prefix/key".
  std::string Describe(const std::string& key) const override;

  Status Set(const std::string& key, ByteView value) override;
  Status SetParts(const std::string& key, std::span<const ByteView> parts) override;
  // Values above the multipart threshold go up in parts read from `source` as they are sent
  // (memory: the parts in flight).
  Status CopyFrom(const std::string& key, const ReadableStore& source, const std::string& source_key) override;
  Status Erase(const std::string& key) override;
  // A GET that keeps the ETag as the generation.
  Result<std::optional<VersionedValue>> GetVersioned(const std::string& key) const override;
  // A PUT (or multipart upload, above conditional_multipart_threshold) with If-Match or
  // If-None-Match: *. kUnsupported when the server does not honour them (see above). A conflict
  // seen only after a retry of a try whose outcome is unknown (a reset connection, a 5xx) is kIo:
  // the first try may have stored the value.
  Result<bool> SetPartsIf(const std::string& key, std::span<const ByteView> parts,
                          const WriteCondition& condition) override;
  // A DELETE with If-Match (a value expected missing: a HEAD, true when there is none).
  // kUnsupported when the server does not honour If-Match on DELETE.
  Result<bool> EraseIf(const std::string& key, const WriteCondition& condition) override;
  // Keys below the prefix that start with `prefix`, sorted (ListObjectsV2, every page).
  Result<std::vector<std::string>> List(const std::string& prefix) const override;

  const std::string& bucket() const { return bucket_; }
  const std::string& prefix() const { return prefix_; }
  const S3Config& config() const { return config_; }

  // Multipart uploads under this store's prefix that were started and never completed or
  // aborted (ListMultipartUploads): tests check that a failed stream leaves none.
  Result<std::vector<std::string>> ListIncompleteUploads() const;

  // Whether the server honours conditional writes, found once per store by writing a private
  // probe object under the prefix (".tessera-conditional-write-probe-<random>", deleted after):
  // a PUT with If-None-Match: * over it and one with a stale If-Match must fail with 412, and so
  // must a DELETE with a stale If-Match. `put` and `erase` are OK, or kUnsupported saying what the
  // server did; an error of the probe itself (no permission, no server) is returned, not kept.
  struct ConditionalSupport {
    Status put;
    Status erase;
  };
  Result<ConditionalSupport> ProbeConditionalWrites() const;

 private:
  // A write's precondition header (If-Match / If-None-Match), empty name for none.
  using Precondition = std::pair<std::string, std::string>;
  // The object key of `key` (prefix + "/" + key), validated.
  Result<std::string> ObjectKey(const std::string& key) const;
  // The URL of `object_key` (empty: the bucket itself) with `query` ("a=1&b=2", sorted, encoded).
  std::string Url(const std::string& object_key, const std::string& query = "") const;
  http::Request MakeRequest(std::string method, std::string url, std::string what) const;
  Result<http::Request> RequestFor(const std::string& method, const std::string& key,
                                   const std::string& what) const override;
  // Both: true when stored, false when `precondition` (if any) failed and nothing was stored.
  Result<bool> PutObject(const std::string& object_key, const std::string& key, std::span<const ByteView> parts,
                         uint64_t size, const Precondition& precondition = {});
  // The body of bytes [begin, end) of the value, as views into the caller's data or into `scratch`.
  using PartSource = std::function<Result<std::vector<ByteView>>(uint64_t begin, uint64_t end, Bytes* scratch)>;
  Result<bool> MultipartUpload(const std::string& object_key, const std::string& key, const PartSource& source,
                               uint64_t size, const Precondition& precondition = {});
  // The probe's answers, probing on first use (see ProbeConditionalWrites).
  Result<ConditionalSupport> conditional_support() const;

  std::string bucket_, prefix_;
  S3Config config_;
  std::string base_url_;  // scheme://host[:port] (virtual-hosted: with the bucket in the host)
  bool path_style_ = true;

  mutable std::mutex probe_mu_;                            // held while probing
  mutable std::optional<ConditionalSupport> conditional_;  // guarded by probe_mu_
};

}  // namespace tessera
