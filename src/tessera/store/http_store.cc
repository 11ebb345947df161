#include "tessera/store/http_store.h"

#include "tessera/store/key_validation.h"

namespace tessera {

HttpStore::HttpStore(std::string base_url, http::ClientOptions options)
    : ObjectStoreReader(std::move(options)), base_url_(std::move(base_url)) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
}

std::string HttpStore::Describe(const std::string& key) const { return base_url_ + "/" + key; }

Result<http::Request> HttpStore::RequestFor(const std::string& method, const std::string& key,
                                            const std::string& what) const {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  http::Request r;
  r.method = method;
  r.url = base_url_ + "/" + http::UriEncode(key, /*keep_slash=*/true);
  r.what = what;
  return r;
}

Status HttpStore::ReadOnly(const std::string& what) const {
  return Unsupported(what + ": " + base_url_ + " is an HTTP(S) location, which tessera reads only (write to a path or s3://)");
}

Status HttpStore::Set(const std::string& key, ByteView) { return ReadOnly("writing " + key); }
Status HttpStore::Erase(const std::string& key) { return ReadOnly("erasing " + key); }
Result<std::vector<std::string>> HttpStore::List(const std::string& prefix) const {
  return ReadOnly("listing \"" + prefix + "\"");
}

}  // namespace tessera
