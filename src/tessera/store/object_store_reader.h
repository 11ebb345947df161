// The reading half shared by the stores that speak HTTP (S3 and plain HTTP(S)): a value is one
// object at a URL; Get, GetRange and GetSuffix are GETs (with a Range header), Size is a HEAD.
// A range that runs past the value is kOutOfRange with the value's size, as on every store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/store/http_client.h"
#include "tessera/store/store.h"

namespace tessera {

class ObjectStoreReader : public Store {
 public:
  Result<std::optional<Bytes>> Get(const std::string& key) const override;
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset, uint64_t length) const override;
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override;
  Result<std::optional<uint64_t>> Size(const std::string& key) const override;
  // One ranged GET: the value's size comes from the response's Content-Range.
  Result<std::optional<SuffixRead>> GetSuffixAndSize(const std::string& key, uint64_t length) const override;

  // Requests wait on the network: many in flight.
  int io_concurrency() const override { return 16; }

  http::ClientStatistics statistics() const { return client_.statistics(); }

 protected:
  explicit ObjectStoreReader(http::ClientOptions options) : client_(std::move(options)) {}

  // A request for `key` (validated), its URL and what error messages call it.
  virtual Result<http::Request> RequestFor(const std::string& method, const std::string& key,
                                           const std::string& what) const = 0;
  // `response` as an error naming the request (with S3's error code and message when the body
  // has them).
  static Status ResponseError(const http::Request& request, const http::Response& response);
  // A 404 that means the key is missing (not that the bucket is: NoSuchBucket is an error).
  static bool IsMissingKey(const http::Response& response);

  http::Client client_;

 private:
  // GetRange or GetSuffix; with `value_size`, also the value's size.
  Result<std::optional<Bytes>> GetRanged(const std::string& key, uint64_t offset, uint64_t length, bool suffix,
                                         uint64_t* value_size = nullptr) const;
};

// The text between <tag> and </tag> of each element `tag` of an XML document, in order, with the
// five predefined entities and character references decoded (enough for S3's responses).
std::vector<std::string> XmlElements(std::string_view xml, std::string_view tag);
// The first of them, or "".
std::string FirstXmlElement(std::string_view xml, std::string_view tag);

}  // namespace tessera
