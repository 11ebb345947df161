// JPEG through libjpeg(-turbo)'s classic API. libjpeg reports errors through a callback that must
// not return; ours records the message and longjmps back to the function that called setjmp. Those
// functions hold only trivially destructible locals across the jump (the jpeg structs, pointers and
// a Bytes* owned by the caller), so the jump skips no destructor.
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <jpeglib.h>

#include "tessera/precomputed/image_codecs.h"

namespace tessera::precomputed {
namespace {

struct ErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void OnError(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// A warning (msg_level < 0) is libjpeg meeting corrupt data it would paper over (a premature end
// of the stream, a bad Huffman code): the pixels would be wrong, so it is an error here. Trace
// messages (msg_level >= 0) are ignored.
void OnMessage(j_common_ptr cinfo, int msg_level) {
  if (msg_level < 0) OnError(cinfo);
}

void InstallErrorManager(ErrorManager* err) {
  jpeg_std_error(&err->base);
  err->base.error_exit = OnError;
  err->base.emit_message = OnMessage;
  err->message[0] = '\0';
}

// Compresses into a buffer libjpeg allocates with malloc (jpeg_mem_dest); false with `message` set
// on failure.
bool Compress(const uint8_t* pixels, JDIMENSION width, JDIMENSION height, int components, int quality,
              unsigned char** out, unsigned long* out_size, char* message) {
  jpeg_compress_struct cinfo;
  ErrorManager err;
  InstallErrorManager(&err);
  cinfo.err = &err.base;
  if (setjmp(err.jump)) {
    std::memcpy(message, err.message, JMSG_LENGTH_MAX);
    jpeg_destroy_compress(&cinfo);
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, out, out_size);
  cinfo.image_width = width;
  cinfo.image_height = height;
  cinfo.input_components = components;
  cinfo.in_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  const size_t stride = static_cast<size_t>(width) * static_cast<size_t>(components);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(pixels + cinfo.next_scanline * stride);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}

enum class DecodeResult { kOk, kError, kTooLarge };

// Decodes into *image; kError with `message` set on failure.
DecodeResult Decompress(const uint8_t* data, size_t size, int64_t max_samples, Image* image, char* message) {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  InstallErrorManager(&err);
  cinfo.err = &err.base;
  if (setjmp(err.jump)) {
    std::memcpy(message, err.message, JMSG_LENGTH_MAX);
    jpeg_destroy_decompress(&cinfo);
    return DecodeResult::kError;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  const int components = cinfo.num_components;
  if (components != 1 && components != 3) {
    std::snprintf(message, JMSG_LENGTH_MAX, "a JPEG of %d components (a chunk has 1 or 3)", components);
    jpeg_destroy_decompress(&cinfo);
    return DecodeResult::kError;
  }
  const int64_t samples = static_cast<int64_t>(cinfo.image_width) * cinfo.image_height * components;
  if (samples > max_samples) {
    std::snprintf(message, JMSG_LENGTH_MAX, "a %ux%u JPEG of %d components", cinfo.image_width, cinfo.image_height,
                  components);
    jpeg_destroy_decompress(&cinfo);
    return DecodeResult::kTooLarge;
  }
  cinfo.out_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  image->width = cinfo.image_width;
  image->height = cinfo.image_height;
  image->components = components;
  image->sample_bytes = 1;
  image->pixels.resize(static_cast<size_t>(samples));
  jpeg_start_decompress(&cinfo);
  const size_t stride = static_cast<size_t>(cinfo.output_width) * static_cast<size_t>(cinfo.output_components);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = image->pixels.data() + cinfo.output_scanline * stride;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return DecodeResult::kOk;
}

}  // namespace

Result<Bytes> EncodeJpeg(const uint8_t* pixels, int64_t width, int64_t height, int components, int quality) {
  if (components != 1 && components != 3)
    return InvalidArgument("jpeg: images have 1 or 3 components, not " + std::to_string(components));
  if (quality < 1 || quality > 100) return InvalidArgument("jpeg_quality must be 1..100, not " + std::to_string(quality));
  if (width <= 0 || height <= 0 || width > JPEG_MAX_DIMENSION || height > JPEG_MAX_DIMENSION)
    return InvalidArgument("jpeg: a " + std::to_string(width) + "x" + std::to_string(height) +
                           " image (each side 1.." + std::to_string(JPEG_MAX_DIMENSION) +
                           "; a chunk's image is x wide and y*z high)");
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  char message[JMSG_LENGTH_MAX];
  const bool ok = Compress(pixels, static_cast<JDIMENSION>(width), static_cast<JDIMENSION>(height), components,
                           quality, &out, &out_size, message);
  Bytes encoded;
  if (ok) encoded.assign(out, out + out_size);
  std::free(out);
  if (!ok) return OutOfResources(std::string("jpeg: libjpeg failed to compress: ") + message);
  return encoded;
}

Result<Image> DecodeJpeg(ByteView stored, int64_t max_samples, const std::string& where) {
  Image image;
  char message[JMSG_LENGTH_MAX];
  switch (Decompress(stored.data(), stored.size(), max_samples, &image, message)) {
    case DecodeResult::kOk: return image;
    case DecodeResult::kTooLarge:
      return CorruptData(where + ": " + message + " is larger than the chunk's " + std::to_string(max_samples) +
                         " samples");
    case DecodeResult::kError: break;
  }
  return CorruptData(where + ": not a valid JPEG chunk (" + std::to_string(stored.size()) + " bytes): " + message);
}

}  // namespace tessera::precomputed
