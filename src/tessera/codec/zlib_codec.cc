#include "tessera/codec/zlib_codec.h"

#include <libdeflate.h>

#include <memory>

#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"
#include "tessera/codec/gzip_codec.h"

namespace tessera {

nlohmann::json ZlibCodec::ToJson() const {
  return {{"name", "numcodecs.zlib"}, {"configuration", {{"level", level_}}}};
}

std::optional<size_t> ZlibCodec::MaxEncodedSize(size_t decoded_bytes) const {
  return libdeflate_zlib_compress_bound(nullptr, decoded_bytes);
}

Status ZlibCodec::Encode(ByteView in, Bytes* out) const {
  struct CompressorFree {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
  };
  std::unique_ptr<libdeflate_compressor, CompressorFree> compressor(libdeflate_alloc_compressor(level_));
  if (!compressor) return OutOfResources("numcodecs.zlib codec: cannot allocate a level-" + std::to_string(level_) + " compressor");
  out->resize(libdeflate_zlib_compress_bound(compressor.get(), in.size()));
  const size_t written = libdeflate_zlib_compress(compressor.get(), in.data(), in.size(), out->data(), out->size());
  if (written == 0) return InvalidArgument("numcodecs.zlib codec: output exceeded libdeflate's own bound");
  out->resize(written);
  return Status::Ok();
}

Status ZlibCodec::Decode(ByteView in, Bytes* out) const {
  // The gzip codec's inflate loop detects the zlib header (and grows its output as needed).
  return GzipCodec(level_).Decode(in, out).WithContext("numcodecs.zlib codec");
}

Result<std::shared_ptr<const BytesToBytesCodec>> MakeZlibCodec(const nlohmann::json& config) {
  constexpr const char* kCodec = "numcodecs.zlib";
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields(kCodec, config, {"level"}));
  // numcodecs' default level is 1; zlib's -1 ("default") is level 6.
  TESSERA_ASSIGN_OR_RETURN(int64_t level, codec_config::GetInt(kCodec, config, "level", 1, -1, 9));
  if (level < 0) level = 6;
  return std::shared_ptr<const BytesToBytesCodec>(std::make_shared<const ZlibCodec>(static_cast<int>(level)));
}

}  // namespace tessera
