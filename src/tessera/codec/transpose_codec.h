// The Zarr v3 `transpose` array -> array codec. With decoded array A and encoded array B:
//   B.shape[i] = A.shape[order[i]],   B[b] = A[a] where b[i] = a[order[i]].
// So order = {1, 0} is the ordinary matrix transpose, and the identity order is a plain copy.
// Dimensions contiguous in both arrays are merged; when the innermost axis is preserved whole runs
// are memcpy'd (index::CopyStrided), otherwise the copy is a cache-tiled 2-D transpose repeated
// over the remaining dimensions.
#pragma once

#include <vector>

#include "tessera/codec/codec.h"

namespace tessera {

class TransposeCodec final : public ArrayToArrayCodec {
 public:
  // Precondition: `order` is a permutation of 0..order.size()-1 with order.size() <= kMaxRank
  // (MakeTransposeCodec checks this).
  explicit TransposeCodec(std::vector<int> order);

  const std::vector<int>& order() const { return order_; }

  std::string_view name() const override { return "transpose"; }
  CodecId id() const override { return CodecId::kTranspose; }
  nlohmann::json ToJson() const override;
  // kInvalidArgument when decoded's rank differs from order().size().
  Result<ChunkSpec> EncodedSpec(const ChunkSpec& decoded) const override;
  Status Encode(const ChunkSpec& decoded, ByteView in, Bytes* out) const override;
  Status Decode(const ChunkSpec& decoded, ByteView in, Bytes* out) const override;

 private:
  Status CheckRank(const ChunkSpec& decoded) const;

  std::vector<int> order_;    // encoded dim i <- decoded dim order_[i]
  std::vector<int> inverse_;  // decoded dim j <- encoded dim inverse_[j]
};

}  // namespace tessera
