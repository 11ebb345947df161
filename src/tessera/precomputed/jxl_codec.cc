// JPEG XL decoding through libjxl's decoder API (Debian's libjxl 0.7): the whole stream is given at
// once and closed, so a stream that asks for more input is truncated. The image's header (basic
// info) is checked against what a chunk can be before libjxl decodes a frame (its working memory
// follows the image's size), and the frames counted against the chunk before each is decoded.
#include <cstdint>
#include <string>

#include <jxl/decode.h>
#include <jxl/decode_cxx.h>

#include "tessera/precomputed/image_codecs.h"

namespace tessera::precomputed {
namespace {

std::string Describe(const JxlBasicInfo& info) {
  return "a " + std::to_string(info.xsize) + "x" + std::to_string(info.ysize) + " JPEG XL image of " +
         std::to_string(info.num_color_channels) + " color channel(s)";
}

// Why a chunk cannot be this image (empty when it can be).
std::string WhyNotAChunk(const JxlBasicInfo& info) {
  if (info.num_extra_channels != 0)
    return std::to_string(info.num_extra_channels) + " extra channel(s) (alpha or others; a chunk has none)";
  if (info.exponent_bits_per_sample != 0 || info.bits_per_sample != 8)
    return std::to_string(info.bits_per_sample) + "-bit " + (info.exponent_bits_per_sample ? "float" : "integer") +
           " samples (jxl chunks are uint8)";
  if (info.num_color_channels != 1)
    return "color frames (a jxl chunk is one gray frame per channel, as cloud-volume writes it)";
  return "";
}

}  // namespace

Result<Image> DecodeJxl(ByteView stored, int64_t max_samples, const std::string& where) {
  const std::string what = where + ": not a valid JPEG XL chunk (" + std::to_string(stored.size()) + " bytes): ";
  JxlDecoderPtr decoder = JxlDecoderMake(nullptr);
  if (!decoder) return OutOfResources(where + ": libjxl could not create a decoder");
  JxlDecoder* dec = decoder.get();
  if (JxlDecoderSubscribeEvents(dec, JXL_DEC_BASIC_INFO | JXL_DEC_FRAME | JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS ||
      JxlDecoderSetInput(dec, stored.data(), stored.size()) != JXL_DEC_SUCCESS)
    return OutOfResources(where + ": libjxl could not start decoding");
  JxlDecoderCloseInput(dec);

  Image image;
  image.planar = true;
  const JxlPixelFormat format{1, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
  int64_t frame_samples = 0;  // one gray frame, width x height
  int frames_decoded = 0;
  for (;;) {
    switch (JxlDecoderProcessInput(dec)) {
      case JXL_DEC_ERROR: return CorruptData(what + "libjxl rejects the stream");
      case JXL_DEC_NEED_MORE_INPUT: return CorruptData(what + "the stream ends early (truncated)");
      case JXL_DEC_BASIC_INFO: {
        JxlBasicInfo info;
        if (JxlDecoderGetBasicInfo(dec, &info) != JXL_DEC_SUCCESS) return CorruptData(what + "no image header");
        if (std::string why = WhyNotAChunk(info); !why.empty())
          return CorruptData(where + ": " + Describe(info) + " with " + why + " is not a precomputed jxl chunk");
        const bool transposed = info.orientation >= JXL_ORIENT_TRANSPOSE;  // orientations 5..8
        image.width = transposed ? info.ysize : info.xsize;
        image.height = transposed ? info.xsize : info.ysize;
        frame_samples = image.width * image.height;
        if (frame_samples > max_samples)
          return CorruptData(where + ": " + Describe(info) + " is larger than the chunk's " +
                             std::to_string(max_samples) + " samples");
        break;
      }
      case JXL_DEC_FRAME:
        // Coalesced (libjxl's default): one event per displayed frame, each the whole image, layers
        // already merged. Counted against the chunk before libjxl decodes it.
        if ((image.components + 1) * frame_samples > max_samples)
          return CorruptData(where + ": a JPEG XL image of more than " + std::to_string(image.components) + " " +
                             std::to_string(image.width) + "x" + std::to_string(image.height) +
                             " frames is larger than the chunk's " + std::to_string(max_samples) + " samples");
        ++image.components;
        break;
      case JXL_DEC_NEED_IMAGE_OUT_BUFFER: {
        size_t size = 0;
        if (JxlDecoderImageOutBufferSize(dec, &format, &size) != JXL_DEC_SUCCESS ||
            size != static_cast<size_t>(frame_samples) || image.components != frames_decoded + 1)
          return CorruptData(what + "unexpected frame size");
        image.pixels.resize(static_cast<size_t>(image.components * frame_samples));
        if (JxlDecoderSetImageOutBuffer(dec, &format, image.pixels.data() + frames_decoded * frame_samples, size) !=
            JXL_DEC_SUCCESS)
          return CorruptData(what + "libjxl refuses the frame buffer");
        break;
      }
      case JXL_DEC_FULL_IMAGE: ++frames_decoded; break;
      case JXL_DEC_SUCCESS:
        if (frames_decoded == 0 || frames_decoded != image.components)
          return CorruptData(what + "the stream holds no whole frame");
        return image;
      default: return CorruptData(what + "unexpected decoder state");
    }
  }
}

}  // namespace tessera::precomputed
