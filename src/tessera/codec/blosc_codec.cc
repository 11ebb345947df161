#include "tessera/codec/blosc_codec.h"

#include <blosc.h>

#include <climits>

#include "tessera/codec/blosc1_zstd_encoder.h"
#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"

namespace tessera {

static_assert(static_cast<int>(BloscShuffle::kNoShuffle) == BLOSC_NOSHUFFLE);
static_assert(static_cast<int>(BloscShuffle::kShuffle) == BLOSC_SHUFFLE);
static_assert(static_cast<int>(BloscShuffle::kBitShuffle) == BLOSC_BITSHUFFLE);

namespace {

// Compression and decompression run on the calling thread only.
constexpr int kInternalThreads = 1;

// The compressor names the Zarr blosc spec allows (whether or not this build has them).
constexpr std::string_view kKnownCnames[] = {"lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib"};

}  // namespace

std::string_view BloscShuffleName(BloscShuffle shuffle) {
  switch (shuffle) {
    case BloscShuffle::kNoShuffle: return "noshuffle";
    case BloscShuffle::kShuffle: return "shuffle";
    case BloscShuffle::kBitShuffle: return "bitshuffle";
  }
  return "noshuffle";
}

nlohmann::json BloscCodec::ToJson() const {
  return {{"name", "blosc"},
          {"configuration",
           {{"typesize", options_.typesize},
            {"cname", options_.cname},
            {"clevel", options_.clevel},
            {"shuffle", BloscShuffleName(options_.shuffle)},
            {"blocksize", options_.blocksize}}}};
}

std::optional<size_t> BloscCodec::MaxEncodedSize(size_t decoded_bytes) const {
  return decoded_bytes + BLOSC_MAX_OVERHEAD;
}

Status BloscCodec::Encode(ByteView in, Bytes* out) const {
  if (in.size() > static_cast<size_t>(BLOSC_MAX_BUFFERSIZE)) {
    return InvalidArgument("blosc codec: input of " + std::to_string(in.size()) +
                           " bytes exceeds blosc's limit of " +
                           std::to_string(BLOSC_MAX_BUFFERSIZE));
  }
  // zstd blocks go through tessera's encoder (same bytes, one zstd context per thread instead of one
  // per block); the other compressors and bit shuffle through c-blosc.
  if (Blosc1ZstdEncoderHandles(options_)) return EncodeBlosc1Zstd(options_, in, out);
  out->resize(in.size() + BLOSC_MAX_OVERHEAD);
  const int written = blosc_compress_ctx(
      options_.clevel, static_cast<int>(options_.shuffle), static_cast<size_t>(options_.typesize),
      in.size(), in.data(), out->data(), out->size(), options_.cname.c_str(),
      static_cast<size_t>(options_.blocksize), kInternalThreads);
  if (written <= 0) {
    return InvalidArgument("blosc codec: blosc_compress_ctx failed with code " +
                           std::to_string(written));
  }
  out->resize(static_cast<size_t>(written));
  return Status::Ok();
}

Status BloscCodec::Decode(ByteView in, Bytes* out) const {
  if (in.size() < BLOSC_MIN_HEADER_LENGTH) {
    return CorruptData("blosc codec: input is " + std::to_string(in.size()) +
                       " bytes, shorter than the " + std::to_string(BLOSC_MIN_HEADER_LENGTH) +
                       "-byte header");
  }
  size_t header_nbytes = 0, header_cbytes = 0, header_blocksize = 0;
  blosc_cbuffer_sizes(in.data(), &header_nbytes, &header_cbytes, &header_blocksize);
  if (header_cbytes > in.size()) {
    return CorruptData("blosc codec: header says " + std::to_string(header_cbytes) +
                       " compressed bytes, input has " + std::to_string(in.size()));
  }
  size_t nbytes = 0;
  if (blosc_cbuffer_validate(in.data(), in.size(), &nbytes) != 0) {
    return CorruptData("blosc codec: invalid blosc header");
  }
  out->resize(nbytes);
  const int decoded = blosc_decompress_ctx(in.data(), out->data(), out->size(), kInternalThreads);
  if (decoded < 0 || static_cast<size_t>(decoded) != nbytes) {
    return CorruptData("blosc codec: decompression failed (code " + std::to_string(decoded) +
                       ", expected " + std::to_string(nbytes) + " bytes)");
  }
  return Status::Ok();
}

Status BloscCodec::DecodePrefix(ByteView in, size_t decoded_bytes, size_t prefix_bytes, Bytes* out) const {
  (void)prefix_bytes;
  if (in.size() >= BLOSC_MIN_HEADER_LENGTH) {
    size_t nbytes = 0, cbytes = 0, blocksize = 0;
    blosc_cbuffer_sizes(in.data(), &nbytes, &cbytes, &blocksize);
    if (nbytes != decoded_bytes)
      return CorruptData("blosc codec: header says " + std::to_string(nbytes) + " decoded bytes, the chunk holds " +
                         std::to_string(decoded_bytes));
  }
  return Decode(in, out);
}

Result<std::shared_ptr<const BytesToBytesCodec>> MakeBloscCodec(const nlohmann::json& config,
                                                                const ChunkSpec& spec) {
  constexpr std::string_view kCodec = "blosc";
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields(
      kCodec, config, {"cname", "clevel", "shuffle", "typesize", "blocksize"}));
  const int item_bytes = static_cast<int>(ItemSize(spec.dtype));
  BloscOptions options;

  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> cname,
                           codec_config::GetString(kCodec, config, "cname"));
  if (cname) {
    bool known = false;
    for (std::string_view name : kKnownCnames) known = known || *cname == name;
    if (!known) {
      return codec_config::FieldError(kCodec, "cname",
                                      "must be one of lz4, lz4hc, blosclz, zstd, snappy, zlib",
                                      nlohmann::json(*cname));
    }
    options.cname = *cname;
  }
  if (blosc_compname_to_compcode(options.cname.c_str()) < 0) {
    return Unsupported("blosc codec: compressor \"" + options.cname +
                       "\" is not available in this c-blosc build (has " +
                       blosc_list_compressors() + ")");
  }

  TESSERA_ASSIGN_OR_RETURN(int64_t clevel, codec_config::GetInt(kCodec, config, "clevel", 5, 0, 9));
  options.clevel = static_cast<int>(clevel);

  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> shuffle,
                           codec_config::GetString(kCodec, config, "shuffle"));
  if (!shuffle) {
    options.shuffle = item_bytes == 1 ? BloscShuffle::kBitShuffle : BloscShuffle::kShuffle;
  } else if (*shuffle == "noshuffle") {
    options.shuffle = BloscShuffle::kNoShuffle;
  } else if (*shuffle == "shuffle") {
    options.shuffle = BloscShuffle::kShuffle;
  } else if (*shuffle == "bitshuffle") {
    options.shuffle = BloscShuffle::kBitShuffle;
  } else {
    return codec_config::FieldError(kCodec, "shuffle",
                                    "must be \"noshuffle\", \"shuffle\" or \"bitshuffle\"",
                                    nlohmann::json(*shuffle));
  }

  TESSERA_ASSIGN_OR_RETURN(
      int64_t typesize, codec_config::GetInt(kCodec, config, "typesize", item_bytes, 1, INT_MAX));
  options.typesize = static_cast<int>(typesize);
  TESSERA_ASSIGN_OR_RETURN(int64_t blocksize,
                           codec_config::GetInt(kCodec, config, "blocksize", 0, 0, INT_MAX));
  options.blocksize = static_cast<int>(blocksize);
  return std::shared_ptr<const BytesToBytesCodec>(
      std::make_shared<const BloscCodec>(std::move(options)));
}

}  // namespace tessera
