#include "tessera/codec/transpose_codec.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"
#include "tessera/core/limits.h"
#include "tessera/index/index.h"
#include "tessera/index/strided_copy.h"

namespace tessera {

namespace {

// Copies a rows x cols block: dst[r * dst_row + c * dst_col] = src[r * src_row + c * src_col]
// (byte strides; src is contiguous along r, dst along c). Each kTile x kTile tile is gathered into
// a local buffer reading src along r, then scattered writing dst along c, so every cache line is
// consumed in one pass even when the strides are large powers of two that alias in the cache.
template <size_t kItemBytes>
void CopyTiled2D(int64_t rows, int64_t cols, const uint8_t* src, int64_t src_row, int64_t src_col,
                 uint8_t* dst, int64_t dst_row, int64_t dst_col) {
  constexpr int64_t kTile = 32;
  // Rows are walked in bands so the destination pages of one band stay in the TLB while every
  // column tile of the band is copied.
  constexpr int64_t kBandRows = 1024;
  uint8_t tile[kTile * kTile * kItemBytes];  // tile[c][r]
  for (int64_t band = 0; band < rows; band += kBandRows) {
    const int64_t band_end = std::min(rows, band + kBandRows);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t nc = std::min(kTile, cols - c0);
      for (int64_t r0 = band; r0 < band_end; r0 += kTile) {
        const int64_t nr = std::min(kTile, band_end - r0);
        for (int64_t c = 0; c < nc; ++c) {
          const uint8_t* s = src + r0 * src_row + (c0 + c) * src_col;
          uint8_t* b = tile + c * kTile * kItemBytes;
          for (int64_t r = 0; r < nr; ++r)
            std::memcpy(b + r * kItemBytes, s + r * src_row, kItemBytes);
        }
        for (int64_t r = 0; r < nr; ++r) {
          uint8_t* t = dst + (r0 + r) * dst_row + c0 * dst_col;
          const uint8_t* b = tile + r * kItemBytes;
          for (int64_t c = 0; c < nc; ++c) {
            std::memcpy(t + c * dst_col, b + c * kTile * kItemBytes, kItemBytes);
          }
        }
      }
    }
  }
}

using Tiled2DFn = void (*)(int64_t, int64_t, const uint8_t*, int64_t, int64_t, uint8_t*, int64_t,
                           int64_t);

Tiled2DFn Tiled2DFor(size_t item_bytes) {
  switch (item_bytes) {
    case 1: return CopyTiled2D<1>;
    case 2: return CopyTiled2D<2>;
    case 4: return CopyTiled2D<4>;
    case 8: return CopyTiled2D<8>;
    case 16: return CopyTiled2D<16>;
    default: return nullptr;
  }
}

// Writes `dst` (row-major, shape dst_shape[d] = src_shape[from[d]]) from `src` (row-major, shape
// src_shape): dst[x] = src[y] with y[from[d]] = x[d].
//
// Dimensions contiguous in both arrays are merged first. If the innermost remaining dimension is
// contiguous in src too, whole runs are memcpy'd (index::CopyStrided). Otherwise the dimension
// that is contiguous in src (`k`) and dst's innermost dimension form a 2-D transpose, copied in
// cache-sized tiles, repeated for every index of the other dimensions.
void Permute(const std::vector<int64_t>& src_shape, const std::vector<int>& from, size_t item_bytes,
             const uint8_t* src, uint8_t* dst) {
  int rank = static_cast<int>(from.size());
  int64_t src_strides[kMaxRank], count[kMaxRank], ss[kMaxRank], ds[kMaxRank];
  index::RowMajorStrides(rank, src_shape.data(), src_strides);
  for (int d = 0; d < rank; ++d) count[d] = src_shape[from[d]];
  index::RowMajorStrides(rank, count, ds);
  const int64_t item = static_cast<int64_t>(item_bytes);
  for (int d = 0; d < rank; ++d) {
    ss[d] = src_strides[from[d]] * item;
    ds[d] *= item;
  }
  if (rank > 0) rank = index::CoalesceDims(rank, count, ss, ds);
  const int inner = rank - 1;
  const Tiled2DFn tiled = Tiled2DFor(item_bytes);
  if (rank < 2 || ss[inner] == item || tiled == nullptr) {
    index::CopyStrided(rank, count, src, ss, dst, ds, item_bytes);
    return;
  }
  int k = 0;  // the dimension with the smallest source stride
  for (int d = 1; d < inner; ++d) k = ss[d] < ss[k] ? d : k;
  // Odometer over every dimension except k and inner.
  int outer[kMaxRank];
  int num_outer = 0;
  for (int d = 0; d < inner; ++d) {
    if (d != k) outer[num_outer++] = d;
  }
  int64_t idx[kMaxRank] = {0};
  const uint8_t* s = src;
  uint8_t* t = dst;
  for (;;) {
    tiled(count[k], count[inner], s, ss[k], ss[inner], t, ds[k], ds[inner]);
    int j = num_outer - 1;
    for (; j >= 0; --j) {
      const int d = outer[j];
      s += ss[d];
      t += ds[d];
      if (++idx[d] < count[d]) break;
      s -= ss[d] * count[d];
      t -= ds[d] * count[d];
      idx[d] = 0;
    }
    if (j < 0) return;
  }
}

}  // namespace

TransposeCodec::TransposeCodec(std::vector<int> order)
    : order_(std::move(order)), inverse_(order_.size()) {
  for (size_t i = 0; i < order_.size(); ++i) inverse_[order_[i]] = static_cast<int>(i);
}

nlohmann::json TransposeCodec::ToJson() const {
  return {{"name", "transpose"}, {"configuration", {{"order", order_}}}};
}

Status TransposeCodec::CheckRank(const ChunkSpec& decoded) const {
  if (decoded.shape.size() == order_.size()) return Status::Ok();
  return InvalidArgument("transpose codec: order has " + std::to_string(order_.size()) +
                         " entries but the array has rank " + std::to_string(decoded.shape.size()));
}

Result<ChunkSpec> TransposeCodec::EncodedSpec(const ChunkSpec& decoded) const {
  TESSERA_RETURN_IF_ERROR(CheckRank(decoded));
  ChunkSpec encoded;
  encoded.dtype = decoded.dtype;
  encoded.fill = decoded.fill;
  encoded.shape.resize(order_.size());
  for (size_t i = 0; i < order_.size(); ++i) encoded.shape[i] = decoded.shape[order_[i]];
  return encoded;
}

Status TransposeCodec::Encode(const ChunkSpec& decoded, ByteView in, Bytes* out) const {
  TESSERA_RETURN_IF_ERROR(CheckRank(decoded));
  if (in.size() != decoded.NumBytes()) {
    return InvalidArgument("transpose codec: array is " + std::to_string(in.size()) +
                           " bytes, spec needs " + std::to_string(decoded.NumBytes()));
  }
  out->resize(in.size());
  if (in.empty()) return Status::Ok();
  Permute(decoded.shape, order_, ItemSize(decoded.dtype), in.data(), out->data());
  return Status::Ok();
}

Status TransposeCodec::Decode(const ChunkSpec& decoded, ByteView in, Bytes* out) const {
  TESSERA_RETURN_IF_ERROR(CheckRank(decoded));
  if (in.size() != decoded.NumBytes()) {
    return CorruptData("transpose codec: encoded array is " + std::to_string(in.size()) +
                       " bytes, expected " + std::to_string(decoded.NumBytes()));
  }
  out->resize(in.size());
  if (in.empty()) return Status::Ok();
  std::vector<int64_t> encoded_shape(order_.size());
  for (size_t i = 0; i < order_.size(); ++i) encoded_shape[i] = decoded.shape[order_[i]];
  Permute(encoded_shape, inverse_, ItemSize(decoded.dtype), in.data(), out->data());
  return Status::Ok();
}

Result<std::shared_ptr<const ArrayToArrayCodec>> MakeTransposeCodec(const nlohmann::json& config,
                                                                    const ChunkSpec& spec) {
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields("transpose", config, {"order"}));
  const nlohmann::json* order_json = codec_config::Find(config, "order");
  if (order_json == nullptr) return InvalidArgument("transpose codec: \"order\" is required");
  const size_t rank = spec.shape.size();
  const std::string expected =
      "must be a permutation of 0.." + std::to_string(static_cast<int64_t>(rank) - 1);
  if (!order_json->is_array() || order_json->size() != rank) {
    return codec_config::FieldError("transpose", "order", expected, *order_json);
  }
  if (rank > static_cast<size_t>(kMaxRank)) {
    return Unsupported("transpose codec: rank " + std::to_string(rank) + " exceeds the limit " +
                       std::to_string(kMaxRank));
  }
  std::vector<int> order;
  std::vector<bool> seen(rank, false);
  for (const nlohmann::json& entry : *order_json) {
    if (!entry.is_number_integer() || entry.get<int64_t>() < 0 ||
        entry.get<int64_t>() >= static_cast<int64_t>(rank) || seen[entry.get<int64_t>()]) {
      return codec_config::FieldError("transpose", "order", expected, *order_json);
    }
    seen[entry.get<int64_t>()] = true;
    order.push_back(static_cast<int>(entry.get<int64_t>()));
  }
  return std::shared_ptr<const ArrayToArrayCodec>(
      std::make_shared<const TransposeCodec>(std::move(order)));
}

}  // namespace tessera
