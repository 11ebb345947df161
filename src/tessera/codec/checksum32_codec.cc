#include "tessera/codec/checksum32_codec.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"
#include "tessera/codec/crc32c.h"

namespace tessera {
namespace {

// zlib counts in uInt; longer inputs are checksummed in pieces.
constexpr size_t kMaxZlibPiece = UINT_MAX;

template <typename Update>
uint32_t ZlibChecksum(ByteView data, uLong initial, Update update) {
  uLong value = initial;
  for (size_t done = 0; done < data.size();) {
    const size_t piece = std::min(data.size() - done, kMaxZlibPiece);
    value = update(value, data.data() + done, static_cast<uInt>(piece));
    done += piece;
  }
  return static_cast<uint32_t>(value);
}

}  // namespace

uint32_t Fletcher32Checksum(ByteView data) {
  // Both sums are folded to 16 bits (plus carry) every 360 words, before they can overflow.
  constexpr size_t kWordsPerFold = 360;
  uint32_t sum1 = 0, sum2 = 0;
  size_t words = data.size() / 2;
  const uint8_t* p = data.data();
  while (words > 0) {
    size_t block = std::min(words, kWordsPerFold);
    words -= block;
    for (; block > 0; --block, p += 2) {
      sum1 += (uint32_t{p[0]} << 8) | p[1];
      sum2 += sum1;
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (data.size() % 2 != 0) {
    sum1 += uint32_t{*p} << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return (sum2 << 16) | sum1;
}

uint32_t Checksum32Codec::Compute(ByteView data) const {
  switch (kind_) {
    case Checksum32Kind::kCrc32: return ZlibChecksum(data, crc32(0, nullptr, 0), [](uLong v, const Bytef* p, uInt n) { return crc32(v, p, n); });
    case Checksum32Kind::kAdler32: return ZlibChecksum(data, adler32(0, nullptr, 0), [](uLong v, const Bytef* p, uInt n) { return adler32(v, p, n); });
    case Checksum32Kind::kCrc32c: return Crc32c(data).value;
    case Checksum32Kind::kFletcher32: return Fletcher32Checksum(data);
  }
  return 0;
}

std::string_view Checksum32Codec::name() const {
  switch (kind_) {
    case Checksum32Kind::kCrc32: return "numcodecs.crc32";
    case Checksum32Kind::kAdler32: return "numcodecs.adler32";
    case Checksum32Kind::kCrc32c: return "numcodecs.crc32c";
    case Checksum32Kind::kFletcher32: return "numcodecs.fletcher32";
  }
  return "numcodecs.checksum32";
}

nlohmann::json Checksum32Codec::ToJson() const {
  nlohmann::json config = nlohmann::json::object();
  if (kind_ != Checksum32Kind::kFletcher32) config["location"] = at_start_ ? "start" : "end";
  return {{"name", std::string(name())}, {"configuration", config}};
}

Status Checksum32Codec::Encode(ByteView in, Bytes* out) const {
  out->resize(in.size() + kChecksumBytes);
  uint8_t* payload = out->data() + (at_start_ ? kChecksumBytes : 0);
  if (!in.empty()) std::memcpy(payload, in.data(), in.size());
  EncodeFixed32LE(out->data() + (at_start_ ? 0 : in.size()), Compute(in));
  return Status::Ok();
}

Status Checksum32Codec::Decode(ByteView in, Bytes* out) const {
  if (in.size() < kChecksumBytes) {
    return CorruptData(std::string(name()) + " codec: input is " + std::to_string(in.size()) +
                       " bytes, shorter than the 4-byte checksum");
  }
  const ByteView payload = in.subspan(at_start_ ? kChecksumBytes : 0, in.size() - kChecksumBytes);
  const uint32_t stored = DecodeFixed32LE(in.data() + (at_start_ ? 0 : payload.size()));
  const uint32_t computed = Compute(payload);
  if (stored != computed) {
    char message[96];
    std::snprintf(message, sizeof(message), " codec: checksum mismatch (stored 0x%08x, computed 0x%08x)", stored, computed);
    return CorruptData(std::string(name()) + message);
  }
  out->assign(payload.begin(), payload.end());
  return Status::Ok();
}

Result<std::shared_ptr<const BytesToBytesCodec>> MakeChecksum32Codec(Checksum32Kind kind, const nlohmann::json& config) {
  const Checksum32Codec probe(kind, false);
  const std::string codec(probe.name());
  if (kind == Checksum32Kind::kFletcher32) {
    TESSERA_RETURN_IF_ERROR(codec_config::CheckFields(codec, config, {}));
    return std::shared_ptr<const BytesToBytesCodec>(std::make_shared<const Checksum32Codec>(kind, false));
  }
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields(codec, config, {"location"}));
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> location, codec_config::GetString(codec, config, "location"));
  bool at_start = kind != Checksum32Kind::kCrc32c;  // numcodecs' defaults
  if (location) {
    if (*location != "start" && *location != "end")
      return codec_config::FieldError(codec, "location", "must be \"start\" or \"end\"", config["location"]);
    at_start = *location == "start";
  }
  return std::shared_ptr<const BytesToBytesCodec>(std::make_shared<const Checksum32Codec>(kind, at_start));
}

}  // namespace tessera
