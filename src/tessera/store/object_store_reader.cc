#include "tessera/store/object_store_reader.h"

#include <cstdlib>

#include "tessera/store/key_validation.h"

namespace tessera {
namespace {

std::string DecodeXml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out.push_back(s[i]);
      continue;
    }
    const size_t end = s.find(';', i);
    if (end == std::string_view::npos) {
      out.push_back(s[i]);
      continue;
    }
    const std::string_view name = s.substr(i + 1, end - i - 1);
    if (name == "amp") out.push_back('&');
    else if (name == "lt") out.push_back('<');
    else if (name == "gt") out.push_back('>');
    else if (name == "quot") out.push_back('"');
    else if (name == "apos") out.push_back('\'');
    else if (name.size() > 1 && name[0] == '#') {
      const bool hex = name[1] == 'x' || name[1] == 'X';
      const unsigned long cp = std::strtoul(std::string(name.substr(hex ? 2 : 1)).c_str(), nullptr, hex ? 16 : 10);
      // UTF-8 encoding of the code point.
      if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
      } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
    } else {
      out.append(s.substr(i, end - i + 1));
    }
    i = end;
  }
  return out;
}

// The total size from a Content-Range header ("bytes 0-99/1234" or "bytes */1234"), or -1.
int64_t ContentRangeTotal(const std::string& header) {
  const size_t slash = header.rfind('/');
  if (slash == std::string::npos || slash + 1 >= header.size() || header[slash + 1] == '*') return -1;
  return std::strtoll(header.c_str() + slash + 1, nullptr, 10);
}

}  // namespace

bool ObjectStoreReader::IsMissingKey(const http::Response& response) {
  return response.status == 404 && FirstXmlElement(response.Text(), "Code") != "NoSuchBucket";
}

std::vector<std::string> XmlElements(std::string_view xml, std::string_view tag) {
  std::vector<std::string> out;
  std::string open = "<", close = "</";
  open.append(tag).push_back('>');
  close.append(tag).push_back('>');
  for (size_t pos = 0;;) {
    const size_t a = xml.find(open, pos);
    if (a == std::string_view::npos) break;
    const size_t b = xml.find(close, a + open.size());
    if (b == std::string_view::npos) break;
    out.push_back(DecodeXml(xml.substr(a + open.size(), b - a - open.size())));
    pos = b + close.size();
  }
  return out;
}

std::string FirstXmlElement(std::string_view xml, std::string_view tag) {
  std::vector<std::string> v = XmlElements(xml, tag);
  return v.empty() ? "" : v[0];
}

Status ObjectStoreReader::ResponseError(const http::Request& request, const http::Response& response) {
  std::string text = request.what + " (" + request.url + "): HTTP " + std::to_string(response.status);
  const std::string code = FirstXmlElement(response.Text(), "Code");
  const std::string message = FirstXmlElement(response.Text(), "Message");
  if (!code.empty()) text += " " + code;
  if (!message.empty()) text += ": " + message;
  if (!response.gave_up_after.empty()) text += " (gave up after " + response.gave_up_after + ")";
  return IoError(text);
}

Result<std::optional<Bytes>> ObjectStoreReader::Get(const std::string& key) const {
  TESSERA_ASSIGN_OR_RETURN(const http::Request request, RequestFor("GET", key, "GET " + Describe(key)));
  TESSERA_ASSIGN_OR_RETURN(http::Response response, client_.Perform(request));
  if (IsMissingKey(response)) return std::optional<Bytes>();
  if (response.status != 200) return ResponseError(request, response);
  return std::optional<Bytes>(std::move(response.body));
}

Result<std::optional<Bytes>> ObjectStoreReader::GetRanged(const std::string& key, uint64_t offset, uint64_t length,
                                                          bool suffix, uint64_t* value_size) const {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  const std::string where = Describe(key);
  if (length == 0) {  // no empty Range exists in HTTP: the size alone decides
    TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> size, Size(key));
    if (!size) return std::optional<Bytes>();
    TESSERA_RETURN_IF_ERROR(suffix ? CheckSuffixLength(where, 0, *size) : CheckByteRange(where, offset, 0, *size));
    if (value_size) *value_size = *size;
    return std::optional<Bytes>(Bytes{});
  }
  const std::string range = suffix ? std::string("-").append(std::to_string(length)) : http::ByteRange(offset, length);
  TESSERA_ASSIGN_OR_RETURN(http::Request request, RequestFor("GET", key, "GET " + where + " bytes=" + range));
  request.headers.emplace_back("Range", "bytes=" + range);
  TESSERA_ASSIGN_OR_RETURN(http::Response response, client_.Perform(request));
  if (IsMissingKey(response)) return std::optional<Bytes>();
  const auto too_short = [&](uint64_t size) {
    return suffix ? CheckSuffixLength(where, length, size) : CheckByteRange(where, offset, length, size);
  };
  if (response.status == 416) {
    int64_t total = ContentRangeTotal(response.Header("content-range"));
    if (total < 0) {
      TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> size, Size(key));
      if (!size) return std::optional<Bytes>();
      total = static_cast<int64_t>(*size);
    }
    Status st = too_short(static_cast<uint64_t>(total));
    return st.ok() ? IoError(request.what + ": HTTP 416 for a range within the value's " + std::to_string(total) +
                             " bytes")
                   : st;
  }
  if (response.status == 200) {  // the server sent the whole value
    const uint64_t size = response.body.size();
    TESSERA_RETURN_IF_ERROR(too_short(size));
    const uint64_t start = suffix ? size - length : offset;
    if (value_size) *value_size = size;
    return std::optional<Bytes>(Bytes(response.body.begin() + static_cast<ptrdiff_t>(start),
                                      response.body.begin() + static_cast<ptrdiff_t>(start + length)));
  }
  if (response.status != 206) return ResponseError(request, response);
  if (response.body.size() != length) {
    // A range that ends past the value comes back cut at its end.
    int64_t total = ContentRangeTotal(response.Header("content-range"));
    if (total < 0) total = static_cast<int64_t>(suffix ? response.body.size() : offset + response.body.size());
    Status st = too_short(static_cast<uint64_t>(total));
    if (!st.ok()) return st;
    return IoError(request.what + ": the server sent " + std::to_string(response.body.size()) + " bytes of " +
                   std::to_string(length));
  }
  if (value_size) {
    const int64_t total = ContentRangeTotal(response.Header("content-range"));
    if (total >= 0) {
      *value_size = static_cast<uint64_t>(total);
    } else {  // a server that does not say: ask
      TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> size, Size(key));
      if (!size) return NotFound(where + " disappeared while reading");
      *value_size = *size;
    }
  }
  return std::optional<Bytes>(std::move(response.body));
}

Result<std::optional<Bytes>> ObjectStoreReader::GetRange(const std::string& key, uint64_t offset, uint64_t length) const {
  return GetRanged(key, offset, length, /*suffix=*/false);
}

Result<std::optional<Bytes>> ObjectStoreReader::GetSuffix(const std::string& key, uint64_t length) const {
  return GetRanged(key, 0, length, /*suffix=*/true);
}

Result<std::optional<SuffixRead>> ObjectStoreReader::GetSuffixAndSize(const std::string& key, uint64_t length) const {
  uint64_t size = 0;
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> bytes, GetRanged(key, 0, length, /*suffix=*/true, &size));
  if (!bytes) return std::optional<SuffixRead>();
  return std::optional<SuffixRead>(SuffixRead{std::move(*bytes), size});
}

Result<std::optional<uint64_t>> ObjectStoreReader::Size(const std::string& key) const {
  TESSERA_ASSIGN_OR_RETURN(const http::Request request, RequestFor("HEAD", key, "HEAD " + Describe(key)));
  TESSERA_ASSIGN_OR_RETURN(http::Response response, client_.Perform(request));
  if (IsMissingKey(response)) return std::optional<uint64_t>();
  if (response.status != 200) return ResponseError(request, response);
  const std::string length = response.Header("content-length");
  if (length.empty()) return IoError(request.what + ": no Content-Length in the response");
  return std::optional<uint64_t>(std::strtoull(length.c_str(), nullptr, 10));
}

}  // namespace tessera
