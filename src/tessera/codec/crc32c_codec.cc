#include "tessera/codec/crc32c_codec.h"

#include <cstdio>
#include <cstring>

#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"
#include "tessera/codec/crc32c.h"

namespace tessera {

Status Crc32cCodec::Encode(ByteView in, Bytes* out) const {
  out->resize(in.size() + kChecksumBytes);
  if (!in.empty()) std::memcpy(out->data(), in.data(), in.size());
  EncodeFixed32LE(out->data() + in.size(), Crc32c(in).value);
  return Status::Ok();
}

Status Crc32cCodec::Decode(ByteView in, Bytes* out) const {
  if (in.size() < kChecksumBytes) {
    return CorruptData("crc32c codec: input is " + std::to_string(in.size()) +
                       " bytes, shorter than the 4-byte checksum");
  }
  const ByteView payload = in.first(in.size() - kChecksumBytes);
  const uint32_t stored = DecodeFixed32LE(in.data() + payload.size());
  const uint32_t computed = Crc32c(payload).value;
  if (stored != computed) {
    char message[96];
    std::snprintf(message, sizeof(message),
                  "crc32c checksum mismatch (stored 0x%08x, computed 0x%08x)", stored, computed);
    return CorruptData(message);
  }
  out->assign(payload.begin(), payload.end());
  return Status::Ok();
}

Result<std::shared_ptr<const BytesToBytesCodec>> MakeCrc32cCodec(const nlohmann::json& config) {
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields("crc32c", config, {}));
  return std::shared_ptr<const BytesToBytesCodec>(std::make_shared<const Crc32cCodec>());
}

}  // namespace tessera
