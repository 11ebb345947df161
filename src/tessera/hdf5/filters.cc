#include "tessera/hdf5/filters.h"

#include "tessera/codec/byte_shuffle.h"

#include "tessera/hdf5/filter_decoders.h"

#include <libdeflate.h>

#include <cstdio>
#include <cstring>
#include <memory>

namespace tessera::hdf5 {
namespace {

struct CompressorFree {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};
struct DecompressorFree {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// The deflate filter stores a zlib stream (RFC 1950), as H5Z_filter_deflate does with compress2.
Status Deflate(uint32_t level, ByteView in, Bytes* out) {
  if (level > 9) return InvalidArgument("deflate filter: level " + std::to_string(level) + " is not in 0..9");
  thread_local std::unique_ptr<libdeflate_compressor, CompressorFree> compressors[10];
  auto& compressor = compressors[level];
  if (!compressor) compressor.reset(libdeflate_alloc_compressor(static_cast<int>(level)));
  if (!compressor) return OutOfResources("deflate filter: cannot allocate a compressor");
  out->resize(libdeflate_zlib_compress_bound(compressor.get(), in.size()));
  const size_t written = libdeflate_zlib_compress(compressor.get(), in.data(), in.size(), out->data(), out->size());
  if (written == 0) return InvalidArgument("deflate filter: output exceeded libdeflate's own bound");
  out->resize(written);
  return Status::Ok();
}

Status Inflate(ByteView in, size_t expected, const std::string& what, Bytes* out) {
  thread_local std::unique_ptr<libdeflate_decompressor, DecompressorFree> decompressor;
  if (!decompressor) decompressor.reset(libdeflate_alloc_decompressor());
  if (!decompressor) return OutOfResources(what + ": cannot allocate a deflate decompressor");
  out->resize(expected);
  size_t in_used = 0;
  size_t produced = 0;
  const libdeflate_result rc = libdeflate_zlib_decompress_ex(decompressor.get(), in.data(), in.size(), out->data(),
                                                             out->size(), &in_used, &produced);
  if (rc == LIBDEFLATE_INSUFFICIENT_SPACE) {
    return CorruptData(what + ": deflate data decodes to more than the chunk's " + std::to_string(expected) + " bytes");
  }
  if (rc != LIBDEFLATE_SUCCESS) return CorruptData(what + ": deflate data is corrupt (not a valid zlib stream)");
  out->resize(produced);
  return Status::Ok();
}

}  // namespace

Filter ShuffleFilter(uint32_t element_size) { return {kFilterShuffle, kFilterOptional, "shuffle", {element_size}}; }
Filter DeflateFilter(uint32_t level) { return {kFilterDeflate, kFilterOptional, "deflate", {level}}; }
Filter Fletcher32Filter() { return {kFilterFletcher32, 0, "fletcher32", {}}; }

std::string FilterName(uint16_t id) {
  switch (id) {
    case kFilterDeflate: return "deflate";
    case kFilterShuffle: return "shuffle";
    case kFilterFletcher32: return "fletcher32";
    case kFilterSzip: return "szip";
    case kFilterNbit: return "nbit";
    case kFilterScaleOffset: return "scaleoffset";
    // Registered third-party filters (https://github.com/HDFGroup/hdf5_plugins/blob/master/docs/RegisteredFilterPlugins.md)
    case 307: return "bzip2";
    case 32000: return "lzf";
    case 32001: return "blosc";
    case 32004: return "lz4";
    case 32008: return "bitshuffle";
    case 32013: return "zfp";
    case 32015: return "zstd";
    case 32017: return "sz";
    case 32026: return "blosc2";
    default: return "filter " + std::to_string(id);
  }
}

uint32_t Fletcher32(ByteView data) {
  const uint8_t* p = data.data();
  size_t words = data.size() / 2;
  uint32_t sum1 = 0, sum2 = 0;
  while (words > 0) {
    // 360 words keep both sums below 2^32 before folding.
    size_t n = words > 360 ? 360 : words;
    words -= n;
    do {
      sum1 += (static_cast<uint32_t>(p[0]) << 8) | p[1];
      p += 2;
      sum2 += sum1;
    } while (--n);
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (data.size() % 2 != 0) {
    sum1 += static_cast<uint32_t>(*p) << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return (sum2 << 16) | sum1;
}

void Shuffle(const uint8_t* in, size_t nbytes, size_t element_size, uint8_t* out) {
  ByteShuffle(element_size, nbytes, in, out);
}

void Unshuffle(const uint8_t* in, size_t nbytes, size_t element_size, uint8_t* out) {
  ByteUnshuffle(element_size, nbytes, in, out);
}

Status EncodeChunk(const FilterPipeline& pipeline, size_t element_size, ByteView raw, Bytes* out) {
  if (pipeline.empty()) {
    out->assign(raw.begin(), raw.end());
    return Status::Ok();
  }
  Bytes a, b;
  ByteView current = raw;
  for (const Filter& f : pipeline) {
    // Each step writes into whichever buffer `current` does not point into.
    Bytes* dst = current.data() == a.data() && !a.empty() ? &b : &a;
    switch (f.id) {
      case kFilterShuffle: {
        const size_t size = f.client_data.empty() ? element_size : f.client_data[0];
        dst->resize(current.size());
        ByteShuffle(size, current.size(), current.data(), dst->data());
        break;
      }
      case kFilterDeflate:
        TESSERA_RETURN_IF_ERROR(Deflate(f.client_data.empty() ? 6 : f.client_data[0], current, dst));
        break;
      case kFilterFletcher32: {
        const uint32_t sum = Fletcher32(current);
        dst->resize(current.size() + 4);
        if (!current.empty()) std::memcpy(dst->data(), current.data(), current.size());
        EncodeFixed32LE(dst->data() + current.size(), sum);
        break;
      }
      default:
        return Unsupported("HDF5 filter " + FilterName(f.id) + " (id " + std::to_string(f.id) +
                           ") is not implemented for writing");
    }
    current = ByteView(dst->data(), dst->size());
  }
  out->swap(current.data() == a.data() ? a : b);
  return Status::Ok();
}

Status DecodeChunk(const FilterPipeline& pipeline, uint32_t filter_mask, size_t element_size, ByteView stored,
                   size_t expected_size, const std::string& what, Bytes* out) {
  Bytes a, b;
  ByteView current = stored;
  // Filters are undone last to first, whatever their order. stage_size: what undoing filter k gives,
  // the chunk's bytes plus 4 for each fletcher32 applied before k (netCDF-4 writes fletcher32,
  // shuffle, deflate: the deflate data holds the checksum too).
  auto applied = [&](size_t k) { return k >= 32 || (filter_mask & (1u << k)) == 0; };
  // Scale-offset's output size is its stream's to say (a header and minbits per element): a filter
  // applied after it (h5py: shuffle, a compressor) is undone into at most that stream's bound, the
  // chunk's bytes plus the header, and scale-offset itself checks its elements fill the chunk.
  size_t stage_size = expected_size;
  std::vector<bool> stage_exact(pipeline.size(), true);
  for (size_t k = 0; k < pipeline.size(); ++k) {
    if (!applied(k)) continue;
    if (pipeline[k].id == kFilterFletcher32) stage_size += 4;
    if (pipeline[k].id == kFilterScaleOffset) {
      stage_size += kScaleOffsetHeaderBytes;
      for (size_t later = k + 1; later < pipeline.size(); ++later) stage_exact[later] = false;
    }
  }
  for (size_t k = pipeline.size(); k-- > 0;) {
    if (!applied(k)) continue;  // not applied to this chunk
    const Filter& f = pipeline[k];
    if (f.id == kFilterFletcher32) stage_size -= 4;
    if (f.id == kFilterScaleOffset) stage_size -= kScaleOffsetHeaderBytes;
    const bool exact = stage_exact[k];  // deflate: DecodeChunk's final size check covers it
    Bytes* dst = current.data() == a.data() && !a.empty() ? &b : &a;
    switch (f.id) {
      case kFilterShuffle: {
        const size_t size = f.client_data.empty() ? element_size : f.client_data[0];
        dst->resize(current.size());
        ByteUnshuffle(size, current.size(), current.data(), dst->data());
        break;
      }
      case kFilterDeflate:
        TESSERA_RETURN_IF_ERROR(Inflate(current, stage_size, what, dst));
        break;
      case kFilterFletcher32: {
        if (current.size() < 4) {
          return CorruptData(what + ": fletcher32 chunk of " + std::to_string(current.size()) +
                             " bytes is too short to hold its checksum");
        }
        const size_t n = current.size() - 4;
        const uint32_t stored_sum = DecodeFixed32LE(current.data() + n);
        const uint32_t sum = Fletcher32(current.first(n));
        // HDF5 before 1.6.3 stored the sum with its bytes in the other order; it still accepts both.
        const uint32_t reversed = ((sum & 0xff) << 24) | ((sum & 0xff00) << 8) | ((sum >> 8) & 0xff00) | (sum >> 24);
        if (stored_sum != sum && stored_sum != reversed) {
          char buf[64];
          std::snprintf(buf, sizeof(buf), "stored 0x%08x, computed 0x%08x", stored_sum, sum);
          return CorruptData(what + ": fletcher32 checksum mismatch (" + buf + ")");
        }
        dst->assign(current.begin(), current.begin() + n);
        break;
      }
      case kFilterNbit:
        TESSERA_RETURN_IF_ERROR(DecodeNbit(f, current, stage_size, exact, what, dst));
        break;
      case kFilterScaleOffset:
        TESSERA_RETURN_IF_ERROR(DecodeScaleOffset(f, current, stage_size, exact, what, dst));
        break;
      case kFilterSzip:
        TESSERA_RETURN_IF_ERROR(DecodeSzip(f, current, stage_size, exact, what, dst));
        break;
      case kFilterLzf:
        TESSERA_RETURN_IF_ERROR(DecodeLzf(current, stage_size, exact, what, dst));
        break;
      case kFilterBlosc:
        TESSERA_RETURN_IF_ERROR(DecodeBloscFilter(current, stage_size, exact, what, dst));
        break;
      case kFilterLz4:
        TESSERA_RETURN_IF_ERROR(DecodeLz4Filter(current, stage_size, exact, what, dst));
        break;
      case kFilterBitshuffle:
        TESSERA_RETURN_IF_ERROR(DecodeBitshuffle(f, element_size, current, stage_size, exact, what, dst));
        break;
      case kFilterZstd:
        TESSERA_RETURN_IF_ERROR(DecodeZstdFilter(current, stage_size, exact, what, dst));
        break;
      default:
        return Unsupported(what + ": HDF5 filter \"" + (f.name.empty() ? FilterName(f.id) : f.name) + "\" (id " +
                           std::to_string(f.id) + ") is not supported");
    }
    current = ByteView(dst->data(), dst->size());
  }
  if (current.size() != expected_size) {
    return CorruptData(what + ": decodes to " + std::to_string(current.size()) + " bytes, the chunk holds " +
                       std::to_string(expected_size));
  }
  if (current.data() == stored.data()) {
    out->assign(stored.begin(), stored.end());
  } else {
    out->swap(current.data() == a.data() ? a : b);
  }
  return Status::Ok();
}

}  // namespace tessera::hdf5
