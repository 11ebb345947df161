#include "tessera/codec/zstd_codec.h"

#define ZSTD_STATIC_LINKING_ONLY  // the block-by-block ("buffer-less") decompression API
#include <zstd.h>

#include <algorithm>
#include <memory>

#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"
#include "tessera/core/limits.h"

namespace tessera {
namespace {

// RFC 8878: a block decodes to at most 128 KiB and occupies at least 3 bytes (its header), so a
// frame of F bytes decodes to at most (F / 3 + 1) * 128 KiB. Used to reject absurd content sizes
// in corrupt headers before allocating.
constexpr uint64_t kMaxBlockDecodedBytes = 128 * 1024;
constexpr uint64_t kMinBlockBytes = 3;

uint64_t MaxFrameDecodedBytes(size_t frame_bytes) {
  return (frame_bytes / kMinBlockBytes + 1) * kMaxBlockDecodedBytes;
}

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* ctx) const { ZSTD_freeCCtx(ctx); }
};
struct DCtxDeleter {
  void operator()(ZSTD_DCtx* ctx) const { ZSTD_freeDCtx(ctx); }
};

// This thread's compression context; parameters are reset by each user. Null if allocation failed.
ZSTD_CCtx* ThreadCCtx() {
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxDeleter> ctx(ZSTD_createCCtx());
  return ctx.get();
}

// This thread's decompression context, default parameters. Null if allocation failed.
ZSTD_DCtx* ThreadDCtx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> ctx(ZSTD_createDCtx());
  return ctx.get();
}

Status ZstdError(std::string_view what, size_t code) {
  return CorruptData("zstd codec: " + std::string(what) + ": " + ZSTD_getErrorName(code));
}

Status CheckDecodedLimit(uint64_t bytes) {
  if (bytes <= kMaxChunkBytes) return Status::Ok();
  return Unsupported("zstd codec: decoded data exceeds the " + std::to_string(kMaxChunkBytes) +
                     "-byte chunk limit");
}

// Appends the decoding of one frame whose header does not record its content size.
Status AppendStreamedFrame(ZSTD_DCtx* dctx, ByteView frame, Bytes* out) {
  const size_t reset = ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
  if (ZSTD_isError(reset)) return ZstdError("reset", reset);
  ZSTD_inBuffer input{frame.data(), frame.size(), 0};
  size_t produced = out->size();
  const uint64_t guess =
      std::min<uint64_t>(std::max<uint64_t>(frame.size() * 4, ZSTD_DStreamOutSize()),
                         MaxFrameDecodedBytes(frame.size()));
  TESSERA_RETURN_IF_ERROR(CheckDecodedLimit(produced + guess));
  out->resize(produced + guess);
  for (;;) {
    if (produced == out->size()) {
      const uint64_t grown =
          std::max<uint64_t>(out->size() * 2, out->size() + ZSTD_DStreamOutSize());
      TESSERA_RETURN_IF_ERROR(CheckDecodedLimit(out->size() + 1));
      out->resize(std::min<uint64_t>(grown, kMaxChunkBytes));
    }
    ZSTD_outBuffer output{out->data() + produced, out->size() - produced, 0};
    const size_t remaining = ZSTD_decompressStream(dctx, &output, &input);
    produced += output.pos;
    if (ZSTD_isError(remaining)) return ZstdError("decompressStream", remaining);
    if (remaining == 0) break;  // frame complete
    if (input.pos == input.size && output.pos < output.size) {
      return CorruptData("zstd codec: truncated frame");
    }
  }
  out->resize(produced);
  return Status::Ok();
}

}  // namespace

nlohmann::json ZstdCodec::ToJson() const {
  nlohmann::json config = {{"level", level_}};
  if (checksum_) config["checksum"] = true;
  return {{"name", "zstd"}, {"configuration", std::move(config)}};
}

std::optional<size_t> ZstdCodec::MaxEncodedSize(size_t decoded_bytes) const {
  const size_t bound = ZSTD_compressBound(decoded_bytes);
  if (bound == 0 || ZSTD_isError(bound)) return std::nullopt;
  return bound;
}

Status ZstdCodec::Encode(ByteView in, Bytes* out) const {
  ZSTD_CCtx* cctx = ThreadCCtx();
  if (cctx == nullptr) return OutOfResources("zstd codec: cannot allocate a compression context");
  const std::optional<size_t> bound = MaxEncodedSize(in.size());
  if (!bound)
    return InvalidArgument("zstd codec: input of " + std::to_string(in.size()) +
                           " bytes is too large for zstd");
  size_t rc = ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
  if (!ZSTD_isError(rc)) rc = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level_);
  if (!ZSTD_isError(rc)) rc = ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, checksum_ ? 1 : 0);
  if (ZSTD_isError(rc)) {
    return InvalidArgument(std::string("zstd codec: setting parameters: ") + ZSTD_getErrorName(rc));
  }
  out->resize(*bound);
  const size_t written = ZSTD_compress2(cctx, out->data(), out->size(), in.data(), in.size());
  if (ZSTD_isError(written)) {
    return InvalidArgument(std::string("zstd codec: compress: ") + ZSTD_getErrorName(written));
  }
  out->resize(written);
  return Status::Ok();
}

Status ZstdCodec::Decode(ByteView in, Bytes* out) const {
  if (in.empty()) return CorruptData("zstd codec: empty input");
  ZSTD_DCtx* dctx = ThreadDCtx();
  if (dctx == nullptr) return OutOfResources("zstd codec: cannot allocate a decompression context");
  out->clear();
  size_t pos = 0;
  while (pos < in.size()) {
    const ByteView rest = in.subspan(pos);
    const size_t frame_bytes = ZSTD_findFrameCompressedSize(rest.data(), rest.size());
    if (ZSTD_isError(frame_bytes))
      return ZstdError("frame at byte " + std::to_string(pos), frame_bytes);
    const ByteView frame = rest.first(frame_bytes);
    const unsigned long long content = ZSTD_getFrameContentSize(frame.data(), frame.size());
    if (content == ZSTD_CONTENTSIZE_ERROR) {
      return CorruptData("zstd codec: invalid frame header at byte " + std::to_string(pos));
    }
    if (content == ZSTD_CONTENTSIZE_UNKNOWN) {
      TESSERA_RETURN_IF_ERROR(AppendStreamedFrame(dctx, frame, out));
    } else {
      if (content > MaxFrameDecodedBytes(frame.size())) {
        return CorruptData("zstd codec: frame header at byte " + std::to_string(pos) + " claims " +
                           std::to_string(content) + " decoded bytes, more than a " +
                           std::to_string(frame.size()) + "-byte frame can hold");
      }
      const size_t old_size = out->size();
      TESSERA_RETURN_IF_ERROR(CheckDecodedLimit(old_size + content));
      out->resize(old_size + content);
      const size_t n =
          ZSTD_decompressDCtx(dctx, out->data() + old_size, content, frame.data(), frame.size());
      if (ZSTD_isError(n)) return ZstdError("decompress", n);
      if (n != content) {
        return CorruptData("zstd codec: frame decoded to " + std::to_string(n) +
                           " bytes, its header says " + std::to_string(content));
      }
    }
    pos += frame_bytes;
  }
  return Status::Ok();
}

Status ZstdCodec::DecodePrefix(ByteView in, size_t decoded_bytes, size_t prefix_bytes, Bytes* out) const {
  ZSTD_frameHeader header;
  if (prefix_bytes >= decoded_bytes || ZSTD_getFrameHeader(&header, in.data(), in.size()) != 0 ||
      header.frameType != ZSTD_frame || header.frameContentSize != decoded_bytes || header.checksumFlag ||
      ZSTD_findFrameCompressedSize(in.data(), in.size()) != in.size())
    return Decode(in, out);  // several frames, no recorded size, a checksum to verify, or an error to report
  ZSTD_DCtx* dctx = ThreadDCtx();
  if (dctx == nullptr) return OutOfResources("zstd codec: cannot allocate a decompression context");
  const size_t begun = ZSTD_decompressBegin(dctx);
  if (ZSTD_isError(begun)) return ZstdError("decompressBegin", begun);
  out->resize(decoded_bytes);
  size_t consumed = 0, produced = 0;
  while (produced < prefix_bytes) {
    const size_t need = ZSTD_nextSrcSizeToDecompress(dctx);
    if (need == 0) break;  // the frame ended
    if (need > in.size() - consumed) return CorruptData("zstd codec: truncated frame");
    const size_t n = ZSTD_decompressContinue(dctx, out->data() + produced, out->size() - produced,
                                             in.data() + consumed, need);
    if (ZSTD_isError(n)) return ZstdError("decompress", n);
    consumed += need;
    produced += n;
  }
  if (produced < prefix_bytes)
    return CorruptData("zstd codec: frame decoded to " + std::to_string(produced) + " bytes, its header says " +
                       std::to_string(decoded_bytes));
  return Status::Ok();
}

Result<std::shared_ptr<const BytesToBytesCodec>> MakeZstdCodec(const nlohmann::json& config) {
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields("zstd", config, {"level", "checksum"}));
  TESSERA_ASSIGN_OR_RETURN(int64_t level, codec_config::GetInt("zstd", config, "level", 0,
                                                               ZSTD_minCLevel(), ZSTD_maxCLevel()));
  TESSERA_ASSIGN_OR_RETURN(bool checksum, codec_config::GetBool("zstd", config, "checksum", false));
  return std::shared_ptr<const BytesToBytesCodec>(
      std::make_shared<const ZstdCodec>(static_cast<int>(level), checksum));
}

}  // namespace tessera
