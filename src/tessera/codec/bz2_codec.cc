#include "tessera/codec/bz2_codec.h"

#include <bzlib.h>

#include <algorithm>
#include <climits>

#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"
#include "tessera/core/limits.h"

namespace tessera {
namespace {

// libbz2 counts in unsigned int; larger buffers are fed in pieces of at most this many bytes.
constexpr size_t kMaxBz2Piece = UINT_MAX;

std::string Bz2Error(int rc) {
  switch (rc) {
    case BZ_DATA_ERROR: return "data integrity error (a block's CRC or structure is wrong)";
    case BZ_DATA_ERROR_MAGIC: return "not a bzip2 stream (no \"BZh\" header)";
    case BZ_MEM_ERROR: return "out of memory";
    case BZ_PARAM_ERROR: return "parameter error";
    default: return "libbz2 error " + std::to_string(rc);
  }
}

class DecompressGuard {
 public:
  explicit DecompressGuard(bz_stream* strm) : strm_(strm) {}
  ~DecompressGuard() { BZ2_bzDecompressEnd(strm_); }
  DecompressGuard(const DecompressGuard&) = delete;
  DecompressGuard& operator=(const DecompressGuard&) = delete;

 private:
  bz_stream* strm_;
};

}  // namespace

nlohmann::json Bz2Codec::ToJson() const {
  return {{"name", "numcodecs.bz2"}, {"configuration", {{"level", level_}}}};
}

std::optional<size_t> Bz2Codec::MaxEncodedSize(size_t decoded_bytes) const {
  return decoded_bytes + decoded_bytes / 100 + 600;
}

Status Bz2Codec::Encode(ByteView in, Bytes* out) const {
  if (in.size() > kMaxBz2Piece) return InvalidArgument("numcodecs.bz2 codec: " + std::to_string(in.size()) + " bytes exceed libbz2's 4 GiB limit");
  out->resize(*MaxEncodedSize(in.size()));
  unsigned int written = static_cast<unsigned int>(std::min(out->size(), kMaxBz2Piece));
  // libbz2 refuses a null source even for 0 bytes.
  char empty = 0;
  char* source = in.empty() ? &empty : const_cast<char*>(reinterpret_cast<const char*>(in.data()));
  const int rc = BZ2_bzBuffToBuffCompress(reinterpret_cast<char*>(out->data()), &written, source,
                                          static_cast<unsigned int>(in.size()), level_, 0, 0);
  if (rc != BZ_OK) return InvalidArgument("numcodecs.bz2 codec: compression failed: " + Bz2Error(rc));
  out->resize(written);
  return Status::Ok();
}

Status Bz2Codec::Decode(ByteView in, Bytes* out) const {
  if (in.empty()) return CorruptData("numcodecs.bz2 codec: empty input");
  bz_stream strm{};
  int rc = BZ2_bzDecompressInit(&strm, 0, 0);
  if (rc != BZ_OK) return OutOfResources("numcodecs.bz2 codec: " + Bz2Error(rc));
  DecompressGuard guard(&strm);
  // bzip2 rarely compresses better than 10:1 on array data; growth handles the rest.
  out->resize(std::min<size_t>(std::max<size_t>(in.size() * 4, 4096), kMaxChunkBytes));
  size_t consumed = 0, produced = 0;
  for (;;) {
    if (produced == out->size()) {
      if (out->size() >= kMaxChunkBytes)
        return Unsupported("numcodecs.bz2 codec: decoded data exceeds the " + std::to_string(kMaxChunkBytes) + "-byte chunk limit");
      out->resize(std::min<size_t>(out->size() * 2, kMaxChunkBytes));
    }
    const size_t in_piece = std::min(in.size() - consumed, kMaxBz2Piece);
    const size_t out_piece = std::min(out->size() - produced, kMaxBz2Piece);
    strm.next_in = const_cast<char*>(reinterpret_cast<const char*>(in.data() + consumed));
    strm.avail_in = static_cast<unsigned int>(in_piece);
    strm.next_out = reinterpret_cast<char*>(out->data() + produced);
    strm.avail_out = static_cast<unsigned int>(out_piece);
    rc = BZ2_bzDecompress(&strm);
    consumed += in_piece - strm.avail_in;
    produced += out_piece - strm.avail_out;
    if (rc == BZ_STREAM_END) {
      if (consumed == in.size()) break;
      // Another stream follows (what Python's bz2.decompress also reads).
      BZ2_bzDecompressEnd(&strm);
      strm = bz_stream{};
      rc = BZ2_bzDecompressInit(&strm, 0, 0);
      if (rc != BZ_OK) return OutOfResources("numcodecs.bz2 codec: " + Bz2Error(rc));
      continue;
    }
    if (rc != BZ_OK) {
      if (rc == BZ_MEM_ERROR) return OutOfResources("numcodecs.bz2 codec: " + Bz2Error(rc));
      return CorruptData("numcodecs.bz2 codec: " + Bz2Error(rc));
    }
    // BZ_OK with all input consumed and room left: the stream ends early.
    if (consumed == in.size() && produced < out->size()) return CorruptData("numcodecs.bz2 codec: truncated stream");
  }
  out->resize(produced);
  return Status::Ok();
}

Result<std::shared_ptr<const BytesToBytesCodec>> MakeBz2Codec(const nlohmann::json& config) {
  constexpr const char* kCodec = "numcodecs.bz2";
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields(kCodec, config, {"level"}));
  TESSERA_ASSIGN_OR_RETURN(int64_t level, codec_config::GetInt(kCodec, config, "level", 1, 1, 9));
  return std::shared_ptr<const BytesToBytesCodec>(std::make_shared<const Bz2Codec>(static_cast<int>(level)));
}

}  // namespace tessera
