// The image codecs of Neuroglancer precomputed chunks: JPEG (libjpeg-turbo), PNG (libpng) and
// JPEG XL (libjxl, decoded only).
// A chunk is one image, `width` = the chunk's x extent and `height` = its y extent times its z
// extent, its pixels the voxels in C order [z][y][x] with the channels interleaved (one component
// per channel), as Neuroglancer, tensorstore and cloud-volume lay it out (chunk_encoding.cc maps
// voxels to pixels). This file knows nothing of chunks: pixels in, bytes out, and back.
//
// Decoders validate what they are given: any malformed, truncated or unsupported stream (and any
// warning the library raises about corrupt data) is kCorruptData naming `where`; an image larger
// than `max_samples` samples is refused before its pixels are allocated.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"

namespace tessera::precomputed {

// Decoded pixels: `height` rows of `width` pixels of `components` interleaved samples (unless
// `planar`), each `sample_bytes` wide (2 for 16-bit PNG, in little-endian order), rows packed.
struct Image {
  int64_t width = 0;
  int64_t height = 0;
  int components = 0;
  int sample_bytes = 1;
  // The samples in component order, one whole `width` x `height` plane each, not interleaved.
  bool planar = false;
  Bytes pixels;
};

// 8-bit JPEG of 1 (grayscale) or 3 (RGB, YCbCr 4:2:0 as libjpeg's defaults) components at
// `quality` (1..100); baseline, deterministic.
Result<Bytes> EncodeJpeg(const uint8_t* pixels, int64_t width, int64_t height, int components, int quality);
Result<Image> DecodeJpeg(ByteView stored, int64_t max_samples, const std::string& where);

// PNG of 1..4 components (gray, gray + alpha, RGB, RGBA) of 8 or 16 bits (`sample_bytes` 1 or
// 2, 16-bit samples given little-endian) at zlib `level` (0..9), no interlacing; deterministic.
Result<Bytes> EncodePng(const uint8_t* pixels, int64_t width, int64_t height, int components, int sample_bytes,
                        int level);
// Palette and gray images of fewer than 8 bits are expanded to 8-bit samples (RGB, gray).
Result<Image> DecodePng(ByteView stored, int64_t max_samples, const std::string& where);

// A JPEG XL codestream or container of 8-bit gray frames, one per channel, as cloud-volume writes
// (one frame for one channel, an animation of one frame per channel otherwise) and Neuroglancer
// reads (the frames' samples one after another, the chunk's channels in its planar order): so the
// Image is `planar`, `components` the number of frames. Color frames and extra channels (alpha)
// are refused: no writer makes them, and Neuroglancer would read a color frame's interleaved
// samples as planar channels. Lossy (XYB) frames decode to 8-bit gray; the orientation a stream
// records is applied (width and height are the oriented frame's).
Result<Image> DecodeJxl(ByteView stored, int64_t max_samples, const std::string& where);

}  // namespace tessera::precomputed
