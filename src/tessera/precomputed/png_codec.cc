// PNG through libpng's classic API. libpng reports errors by longjmp to the setjmp in the function
// that drives it; those functions keep only trivially destructible locals across the jump (the
// png structs, pointers, and objects owned by the caller), so the jump skips no destructor.
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

#include <png.h>

#include "tessera/precomputed/image_codecs.h"

namespace tessera::precomputed {
namespace {

constexpr size_t kMessageBytes = 256;

struct Context {
  char message[kMessageBytes] = {};
  // Reading: the stream and how far it has been read. Writing: the output.
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t offset = 0;
  Bytes* out = nullptr;
};

Context* ContextOf(png_structp png) { return static_cast<Context*>(png_get_error_ptr(png)); }

[[noreturn]] void OnError(png_structp png, png_const_charp message) {
  std::snprintf(ContextOf(png)->message, kMessageBytes, "%s", message);
  png_longjmp(png, 1);
}

// libpng warns about what it can read past (a bad ancillary chunk's CRC, an unknown critical
// chunk it ignores): the pixels are still right, so warnings are not errors.
void OnWarning(png_structp, png_const_charp) {}

void ReadFromMemory(png_structp png, png_bytep dst, size_t length) {
  Context* ctx = static_cast<Context*>(png_get_io_ptr(png));
  if (length > ctx->size - ctx->offset) png_error(png, "the stream ends early (truncated)");
  std::memcpy(dst, ctx->data + ctx->offset, length);
  ctx->offset += length;
}

void WriteToMemory(png_structp png, png_bytep src, size_t length) {
  Context* ctx = static_cast<Context*>(png_get_io_ptr(png));
  ctx->out->insert(ctx->out->end(), src, src + length);
}

void FlushNothing(png_structp) {}

int ColorType(int components) {
  switch (components) {
    case 1: return PNG_COLOR_TYPE_GRAY;
    case 2: return PNG_COLOR_TYPE_GRAY_ALPHA;
    case 3: return PNG_COLOR_TYPE_RGB;
    default: return PNG_COLOR_TYPE_RGB_ALPHA;
  }
}

bool Compress(const uint8_t* pixels, png_uint_32 width, png_uint_32 height, int components, int sample_bytes,
              int level, std::vector<png_bytep>* rows, Context* ctx) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, ctx, OnError, OnWarning);
  if (!png) {
    std::snprintf(ctx->message, kMessageBytes, "out of memory");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    if (!info) std::snprintf(ctx->message, kMessageBytes, "out of memory");
    png_destroy_write_struct(&png, info ? &info : nullptr);
    return false;
  }
  png_set_write_fn(png, ctx, WriteToMemory, FlushNothing);
  png_set_compression_level(png, level);
  png_set_IHDR(png, info, width, height, 8 * sample_bytes, ColorType(components), PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  if (sample_bytes == 2) png_set_swap(png);  // our samples are little-endian; PNG's are big-endian
  const size_t stride = static_cast<size_t>(width) * static_cast<size_t>(components * sample_bytes);
  rows->resize(height);
  for (png_uint_32 y = 0; y < height; ++y) (*rows)[y] = const_cast<png_bytep>(pixels + y * stride);
  png_write_image(png, rows->data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

enum class DecodeResult { kOk, kError, kTooLarge };

DecodeResult Decompress(int64_t max_samples, Image* image, std::vector<png_bytep>* rows, Context* ctx) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, ctx, OnError, OnWarning);
  if (!png) {
    std::snprintf(ctx->message, kMessageBytes, "out of memory");
    return DecodeResult::kError;
  }
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    if (!info) std::snprintf(ctx->message, kMessageBytes, "out of memory");
    png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    return DecodeResult::kError;
  }
  png_set_read_fn(png, ctx, ReadFromMemory);
  png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);  // the size is checked against max_samples below
  png_read_info(png, info);
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0;
  png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, nullptr, nullptr, nullptr);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (bit_depth == 16) png_set_swap(png);  // to little-endian samples
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const int components = png_get_channels(png, info);
  const int sample_bytes = png_get_bit_depth(png, info) == 16 ? 2 : 1;
  const int64_t samples = static_cast<int64_t>(width) * height * components;
  if (samples > max_samples) {
    std::snprintf(ctx->message, kMessageBytes, "a %ux%u PNG of %d components", width, height, components);
    png_destroy_read_struct(&png, &info, nullptr);
    return DecodeResult::kTooLarge;
  }
  image->width = width;
  image->height = height;
  image->components = components;
  image->sample_bytes = sample_bytes;
  image->pixels.resize(static_cast<size_t>(samples * sample_bytes));
  const size_t stride = static_cast<size_t>(width) * static_cast<size_t>(components * sample_bytes);
  if (png_get_rowbytes(png, info) != stride) {
    std::snprintf(ctx->message, kMessageBytes, "unexpected row size");
    png_destroy_read_struct(&png, &info, nullptr);
    return DecodeResult::kError;
  }
  rows->resize(height);
  for (png_uint_32 y = 0; y < height; ++y) (*rows)[y] = image->pixels.data() + y * stride;
  png_read_image(png, rows->data());
  png_read_end(png, nullptr);  // reads to IEND, checking the CRCs of what follows the pixels
  png_destroy_read_struct(&png, &info, nullptr);
  return DecodeResult::kOk;
}

}  // namespace

Result<Bytes> EncodePng(const uint8_t* pixels, int64_t width, int64_t height, int components, int sample_bytes,
                        int level) {
  if (components < 1 || components > 4)
    return InvalidArgument("png: images have 1 to 4 components, not " + std::to_string(components));
  if (sample_bytes != 1 && sample_bytes != 2)
    return InvalidArgument("png: samples are 8 or 16 bits, not " + std::to_string(8 * sample_bytes));
  if (level < 0 || level > 9) return InvalidArgument("png_level must be 0..9, not " + std::to_string(level));
  if (width <= 0 || height <= 0 || width > PNG_UINT_31_MAX || height > PNG_UINT_31_MAX)
    return InvalidArgument("png: a " + std::to_string(width) + "x" + std::to_string(height) +
                           " image (a chunk's image is x wide and y*z high)");
  Bytes out;
  Context ctx;
  ctx.out = &out;
  std::vector<png_bytep> rows;
  if (!Compress(pixels, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), components, sample_bytes,
                level, &rows, &ctx))
    return OutOfResources(std::string("png: libpng failed to compress: ") + ctx.message);
  return out;
}

Result<Image> DecodePng(ByteView stored, int64_t max_samples, const std::string& where) {
  Image image;
  Context ctx;
  ctx.data = stored.data();
  ctx.size = stored.size();
  std::vector<png_bytep> rows;
  switch (Decompress(max_samples, &image, &rows, &ctx)) {
    case DecodeResult::kOk: return image;
    case DecodeResult::kTooLarge:
      return CorruptData(where + ": " + ctx.message + " is larger than the chunk's " + std::to_string(max_samples) +
                         " samples");
    case DecodeResult::kError: break;
  }
  return CorruptData(where + ": not a valid PNG chunk (" + std::to_string(stored.size()) + " bytes): " + ctx.message);
}

}  // namespace tessera::precomputed
