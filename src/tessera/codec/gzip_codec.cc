#include "tessera/codec/gzip_codec.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <climits>
#include <memory>

#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"
#include "tessera/core/limits.h"

namespace tessera {
namespace {

// zlib counts in uInt (32-bit); larger buffers are fed in pieces of at most this many bytes.
constexpr size_t kMaxZlibPiece = UINT_MAX;
// windowBits: 15 (32 KiB window) + 32 reads gzip or zlib.
constexpr int kAutoDetectWindowBits = 15 + 32;
// Deflate's largest possible expansion ratio; bounds the initial guess taken from a trailer.
constexpr size_t kMaxDeflateRatio = 1032;

std::string ZlibMessage(const z_stream& strm, int rc) {
  return strm.msg != nullptr ? std::string(strm.msg) : std::string(zError(rc));
}

// Ends an inflate stream on scope exit.
class InflateGuard {
 public:
  explicit InflateGuard(z_stream* strm) : strm_(strm) {}
  ~InflateGuard() { inflateEnd(strm_); }
  InflateGuard(const InflateGuard&) = delete;
  InflateGuard& operator=(const InflateGuard&) = delete;

 private:
  z_stream* strm_;
};

// A first guess at the decoded size: a single gzip member ends with ISIZE, the decoded length
// mod 2^32 (RFC 1952). Capped by deflate's maximum ratio so a corrupt trailer cannot force a huge
// allocation; growth in Decode handles anything larger.
size_t InitialDecodedGuess(ByteView in) {
  constexpr size_t kMinMemberBytes = 18;
  size_t guess = in.size() * 2;
  if (in.size() >= kMinMemberBytes && in[0] == 0x1f && in[1] == 0x8b) {
    guess = DecodeFixed32LE(in.data() + in.size() - 4);
  }
  return std::min({guess, in.size() * kMaxDeflateRatio, static_cast<size_t>(kMaxChunkBytes)});
}

}  // namespace

nlohmann::json GzipCodec::ToJson() const {
  return {{"name", "gzip"}, {"configuration", {{"level", level_}}}};
}

std::optional<size_t> GzipCodec::MaxEncodedSize(size_t decoded_bytes) const {
  // libdeflate's bound over every compressor it can build (a NULL compressor asks for that).
  return libdeflate_gzip_compress_bound(nullptr, decoded_bytes);
}

Status GzipCodec::Encode(ByteView in, Bytes* out) const {
  // libdeflate compresses whole buffers 2-3x faster than zlib at the same level (and writes one
  // gzip member, RFC 1952); one compressor per thread and level, reused.
  struct CompressorFree {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
  };
  thread_local std::unique_ptr<libdeflate_compressor, CompressorFree> compressors[10];
  auto& compressor = compressors[level_];
  if (!compressor) compressor.reset(libdeflate_alloc_compressor(level_));
  if (!compressor) return OutOfResources("gzip codec: cannot allocate a level-" + std::to_string(level_) + " compressor");
  out->resize(libdeflate_gzip_compress_bound(compressor.get(), in.size()));
  const size_t written = libdeflate_gzip_compress(compressor.get(), in.data(), in.size(), out->data(), out->size());
  if (written == 0) return InvalidArgument("gzip codec: output exceeded libdeflate's own bound");
  out->resize(written);
  return Status::Ok();
}

Status GzipCodec::Decode(ByteView in, Bytes* out) const {
  if (in.empty()) return CorruptData("gzip codec: empty input");
  z_stream strm{};
  int rc = inflateInit2(&strm, kAutoDetectWindowBits);
  if (rc != Z_OK) return OutOfResources("gzip codec: inflateInit2: " + ZlibMessage(strm, rc));
  InflateGuard guard(&strm);
  out->resize(InitialDecodedGuess(in));
  size_t consumed = 0;
  size_t produced = 0;
  for (;;) {
    if (produced == out->size()) {
      if (out->size() >= kMaxChunkBytes) {
        return Unsupported("gzip codec: decoded data exceeds the " +
                           std::to_string(kMaxChunkBytes) + "-byte chunk limit");
      }
      out->resize(std::min<size_t>(std::max<size_t>(out->size() * 2, 4096), kMaxChunkBytes));
    }
    const size_t in_piece = std::min(in.size() - consumed, kMaxZlibPiece);
    const size_t out_piece = std::min(out->size() - produced, kMaxZlibPiece);
    strm.next_in = const_cast<Bytef*>(in.data() + consumed);
    strm.avail_in = static_cast<uInt>(in_piece);
    strm.next_out = out->data() + produced;
    strm.avail_out = static_cast<uInt>(out_piece);
    rc = inflate(&strm, Z_NO_FLUSH);
    consumed += in_piece - strm.avail_in;
    produced += out_piece - strm.avail_out;
    if (rc == Z_STREAM_END) {
      if (consumed == in.size()) break;
      // Another member follows (RFC 1952 allows concatenated members).
      rc = inflateReset(&strm);
      if (rc != Z_OK) return CorruptData("gzip codec: " + ZlibMessage(strm, rc));
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR) {
      if (produced == out->size()) continue;               // output full: grow and go on
      return CorruptData("gzip codec: truncated stream");  // needs input we do not have
    }
    if (rc == Z_MEM_ERROR) return OutOfResources("gzip codec: " + ZlibMessage(strm, rc));
    return CorruptData("gzip codec: " + ZlibMessage(strm, rc));
  }
  out->resize(produced);
  return Status::Ok();
}

Result<std::shared_ptr<const BytesToBytesCodec>> MakeGzipCodec(const nlohmann::json& config) {
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields("gzip", config, {"level"}));
  TESSERA_ASSIGN_OR_RETURN(int64_t level, codec_config::GetInt("gzip", config, "level", 5, 0, 9));
  return std::shared_ptr<const BytesToBytesCodec>(
      std::make_shared<const GzipCodec>(static_cast<int>(level)));
}

}  // namespace tessera
