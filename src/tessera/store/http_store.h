// A read-only store over HTTP(S): key "a/b" is the URL <base>/a/b, read with GET (and Range) and
// HEAD from any web server, e.g. a Neuroglancer precomputed volume or a Zarr array served as
// static files. Writing and listing are kUnsupported (HTTP has no listing).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/store/object_store_reader.h"

namespace tessera {

class HttpStore final : public ObjectStoreReader {
 public:
  // A store over `base_url` ("https://host/path"; trailing '/' ignored). Touches nothing.
  explicit HttpStore(std::string base_url, http::ClientOptions options = {});

  // The URL of `key`.
  std::string Describe(const std::string& key) const override;
  Status Set(const std::string& key, ByteView value) override;
  Status Erase(const std::string& key) override;
  Result<std::vector<std::string>> List(const std::string& prefix) const override;

 private:
  Result<http::Request> RequestFor(const std::string& method, const std::string& key,
                                   const std::string& what) const override;
  Status ReadOnly(const std::string& what) const;

  std::string base_url_;
};

}  // namespace tessera
