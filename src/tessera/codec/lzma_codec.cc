#include "tessera/codec/lzma_codec.h"

#include <lzma.h>

#include <algorithm>

#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"
#include "tessera/core/limits.h"

namespace tessera {
namespace {

constexpr uint32_t kPresetExtreme = 0x80000000u;
constexpr int64_t kDefaultPreset = 6;
// The most memory a stream's header may ask the decoder for (dictionary and match finder): preset
// 9 needs 65 MiB, so 1 GiB refuses only hostile or exotic streams, before allocating.
constexpr uint64_t kDecoderMemoryLimitBytes = uint64_t{1} << 30;

std::string LzmaError(lzma_ret rc) {
  switch (rc) {
    case LZMA_FORMAT_ERROR: return "not an .xz or .lzma stream";
    case LZMA_OPTIONS_ERROR: return "unsupported stream options";
    case LZMA_DATA_ERROR: return "data is corrupt";
    case LZMA_BUF_ERROR: return "truncated stream";
    case LZMA_MEM_ERROR: return "out of memory";
    case LZMA_UNSUPPORTED_CHECK: return "unsupported integrity check";
    case LZMA_MEMLIMIT_ERROR: return "the stream needs more than the 1 GiB decoder memory limit";
    default: return "liblzma error " + std::to_string(static_cast<int>(rc));
  }
}

class StreamGuard {
 public:
  explicit StreamGuard(lzma_stream* strm) : strm_(strm) {}
  ~StreamGuard() { lzma_end(strm_); }
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  lzma_stream* strm_;
};

// Runs `strm` over all of `in` to the stream end, growing *out from `initial` bytes.
Status RunToEnd(lzma_stream* strm, ByteView in, size_t initial, Bytes* out) {
  out->resize(std::min<size_t>(std::max<size_t>(initial, 4096), kMaxChunkBytes));
  strm->next_in = in.data();
  strm->avail_in = in.size();
  strm->next_out = out->data();
  strm->avail_out = out->size();
  for (;;) {
    const lzma_ret rc = lzma_code(strm, LZMA_FINISH);
    if (rc == LZMA_STREAM_END) break;
    if (rc == LZMA_OK || (rc == LZMA_BUF_ERROR && strm->avail_out == 0)) {
      if (strm->avail_out != 0) continue;
      const size_t produced = out->size();
      if (produced >= kMaxChunkBytes)
        return Unsupported("decoded data exceeds the " + std::to_string(kMaxChunkBytes) + "-byte chunk limit");
      out->resize(std::min<size_t>(produced * 2, kMaxChunkBytes));
      strm->next_out = out->data() + produced;
      strm->avail_out = out->size() - produced;
      continue;
    }
    if (rc == LZMA_MEM_ERROR) return OutOfResources(LzmaError(rc));
    if (rc == LZMA_MEMLIMIT_ERROR) return Unsupported(LzmaError(rc));
    return CorruptData(LzmaError(rc));
  }
  out->resize(out->size() - strm->avail_out);
  if (strm->avail_in != 0) return CorruptData(std::to_string(strm->avail_in) + " bytes follow the end of the stream");
  return Status::Ok();
}

}  // namespace

nlohmann::json LzmaCodec::ToJson() const {
  return {{"name", "numcodecs.lzma"},
          {"configuration", {{"format", format_}, {"check", check_}, {"preset", preset_}, {"filters", nullptr}}}};
}

std::optional<size_t> LzmaCodec::MaxEncodedSize(size_t decoded_bytes) const {
  // .xz stores incompressible input in uncompressed LZMA2 chunks (liblzma's bound); .lzma has no
  // stored mode, so random input grows by up to ~1.5% there: bounded generously.
  if (format_ == kFormatXz) return lzma_stream_buffer_bound(decoded_bytes);
  return decoded_bytes + decoded_bytes / 16 + 4096;
}

Status LzmaCodec::Encode(ByteView in, Bytes* out) const {
  lzma_stream strm = LZMA_STREAM_INIT;
  lzma_ret rc;
  if (format_ == kFormatXz) {
    const lzma_check check = check_ == kCheckDefault ? LZMA_CHECK_CRC64 : static_cast<lzma_check>(check_);
    rc = lzma_easy_encoder(&strm, preset_, check);
  } else {
    lzma_options_lzma options;
    if (lzma_lzma_preset(&options, preset_)) return InvalidArgument("numcodecs.lzma codec: preset " + std::to_string(preset_) + " is not supported");
    rc = lzma_alone_encoder(&strm, &options);
  }
  StreamGuard guard(&strm);
  if (rc != LZMA_OK) return InvalidArgument("numcodecs.lzma codec: cannot start the encoder: " + LzmaError(rc));
  return RunToEnd(&strm, in, *MaxEncodedSize(in.size()), out).WithContext("numcodecs.lzma codec");
}

Status LzmaCodec::Decode(ByteView in, Bytes* out) const {
  if (in.empty()) return CorruptData("numcodecs.lzma codec: empty input");
  lzma_stream strm = LZMA_STREAM_INIT;
  // The auto decoder reads .xz and .lzma; concatenated .xz streams as Python's lzma does.
  const lzma_ret rc = lzma_auto_decoder(&strm, kDecoderMemoryLimitBytes, LZMA_CONCATENATED);
  StreamGuard guard(&strm);
  if (rc != LZMA_OK) return OutOfResources("numcodecs.lzma codec: cannot start the decoder: " + LzmaError(rc));
  return RunToEnd(&strm, in, in.size() * 4, out).WithContext("numcodecs.lzma codec");
}

Result<std::shared_ptr<const BytesToBytesCodec>> MakeLzmaCodec(const nlohmann::json& config) {
  constexpr const char* kCodec = "numcodecs.lzma";
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields(kCodec, config, {"format", "check", "preset", "filters"}));
  TESSERA_ASSIGN_OR_RETURN(int64_t format, codec_config::GetInt(kCodec, config, "format", LzmaCodec::kFormatXz, 0, 3));
  if (format == 0) format = LzmaCodec::kFormatXz;  // FORMAT_AUTO, for decoding: .xz when writing
  if (format == 3)
    return Unsupported("numcodecs.lzma codec: \"format\" 3 (raw, with an explicit filter chain) is not supported; tessera reads formats 1 (.xz) and 2 (.lzma)");
  TESSERA_ASSIGN_OR_RETURN(int64_t check, codec_config::GetInt(kCodec, config, "check", LzmaCodec::kCheckDefault, -1, 15));
  if (check != -1 && check != LZMA_CHECK_NONE && check != LZMA_CHECK_CRC32 && check != LZMA_CHECK_CRC64 && check != LZMA_CHECK_SHA256)
    return codec_config::FieldError(kCodec, "check", "must be -1, 0, 1, 4 or 10", config["check"]);
  int64_t preset = kDefaultPreset;
  if (const nlohmann::json* p = codec_config::Find(config, "preset"); p != nullptr && !p->is_null()) {
    const bool valid = p->is_number_integer() && p->get<int64_t>() >= 0 && (p->get<int64_t>() & ~int64_t{kPresetExtreme}) <= 9;
    if (!valid) return codec_config::FieldError(kCodec, "preset", "must be null or 0-9, optionally or'ed with 0x80000000", *p);
    preset = p->get<int64_t>();
  }
  if (const nlohmann::json* f = codec_config::Find(config, "filters"); f != nullptr && !f->is_null())
    return Unsupported("numcodecs.lzma codec: an explicit \"filters\" chain is not supported (got " + f->dump() + ")");
  return std::shared_ptr<const BytesToBytesCodec>(
      std::make_shared<const LzmaCodec>(static_cast<int>(format), static_cast<int>(check), static_cast<uint32_t>(preset)));
}

}  // namespace tessera
