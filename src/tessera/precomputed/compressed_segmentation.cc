#include "tessera/precomputed/compressed_segmentation.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tessera/index/chunk_grid.h"

namespace tessera::precomputed {
namespace {

uint64_t LoadLabel(const uint8_t* p, int label_bytes) {
  return label_bytes == 8 ? DecodeFixed64LE(p) : DecodeFixed32LE(p);
}

int BitsFor(size_t distinct) {
  for (int bits : {0, 1, 2, 4, 8, 16, 32})
    if (bits == 32 || (size_t{1} << bits) >= distinct) return bits;
  return 32;
}

Status CheckGeometry(const SegmentationGeometry& g) {
  if (g.label_bytes != 4 && g.label_bytes != 8)
    return InvalidArgument("compressed_segmentation: labels must be uint32 or uint64");
  if (g.num_channels < 1) return InvalidArgument("compressed_segmentation: num_channels must be >= 1");
  for (int d = 0; d < 3; ++d)
    if (g.volume_xyz[d] < 1 || g.block_xyz[d] < 1)
      return InvalidArgument("compressed_segmentation: volume and block sizes must be positive");
  return Status::Ok();
}

// A channel's compression blocks in C order (z, y, x), the order of its block headers.
index::ChunkGrid BlockGrid(const SegmentationGeometry& g) {
  const int64_t volume[3] = {g.volume_xyz[2], g.volume_xyz[1], g.volume_xyz[0]};
  const int64_t block[3] = {g.block_xyz[2], g.block_xyz[1], g.block_xyz[0]};
  return index::ChunkGrid(3, volume, block);
}

// Appends one channel's encoding to *words (32-bit units), `labels` at C order [z, y, x].
void EncodeChannel(const SegmentationGeometry& g, const uint8_t* labels, std::vector<uint32_t>* words) {
  const auto& v = g.volume_xyz;
  const auto& b = g.block_xyz;
  const index::ChunkGrid grid = BlockGrid(g);
  const int64_t blocks = grid.ChunkCount();
  const int64_t block_positions = b[0] * b[1] * b[2];
  const size_t base = words->size();
  words->resize(base + 2 * static_cast<size_t>(blocks), 0);
  const int table_words = g.label_bytes / 4;
  std::map<std::vector<uint64_t>, uint32_t> table_cache;  // lookup table -> offset (shared tables)
  std::vector<uint64_t> values(static_cast<size_t>(block_positions));
  std::vector<uint32_t> indices(static_cast<size_t>(block_positions));
  for (int64_t bz = 0; bz < grid.chunk_count[0]; ++bz)
    for (int64_t by = 0; by < grid.chunk_count[1]; ++by)
      for (int64_t bx = 0; bx < grid.chunk_count[2]; ++bx) {
        const int64_t block_coords[3] = {bz, by, bx};
        const int64_t X0 = grid.ChunkOrigin(2, bx), Y0 = grid.ChunkOrigin(1, by), Z0 = grid.ChunkOrigin(0, bz);
        // Gather the block's labels; positions outside the volume are padding.
        std::vector<uint64_t> distinct;
        for (int64_t z = 0; z < b[2]; ++z)
          for (int64_t y = 0; y < b[1]; ++y)
            for (int64_t x = 0; x < b[0]; ++x) {
              const int64_t X = X0 + x, Y = Y0 + y, Z = Z0 + z;
              const size_t pos = static_cast<size_t>(x + b[0] * (y + b[1] * z));
              indices[pos] = UINT32_MAX;
              if (X >= v[0] || Y >= v[1] || Z >= v[2]) continue;
              values[pos] = LoadLabel(labels + g.label_bytes * (X + v[0] * (Y + v[1] * Z)), g.label_bytes);
              indices[pos] = 0;
              distinct.push_back(values[pos]);
            }
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        const int bits = BitsFor(distinct.size());
        // Packed values.
        const uint32_t values_offset = static_cast<uint32_t>(words->size() - base);
        const size_t value_words = static_cast<size_t>((bits * block_positions + 31) / 32);
        const size_t values_at = words->size();
        words->resize(values_at + value_words, 0);
        if (bits > 0) {
          for (int64_t pos = 0; pos < block_positions; ++pos) {
            if (indices[pos] == UINT32_MAX) continue;  // padding: index 0
            const uint64_t index = static_cast<uint64_t>(
                std::lower_bound(distinct.begin(), distinct.end(), values[pos]) - distinct.begin());
            const uint64_t bit = static_cast<uint64_t>(bits) * static_cast<uint64_t>(pos);
            (*words)[values_at + bit / 32] |= static_cast<uint32_t>(index << (bit % 32));
          }
        }
        // Lookup table, shared with an earlier identical one.
        uint32_t table_offset;
        auto cached = table_cache.find(distinct);
        if (cached != table_cache.end()) {
          table_offset = cached->second;
        } else {
          table_offset = static_cast<uint32_t>(words->size() - base);
          for (uint64_t label : distinct) {
            words->push_back(static_cast<uint32_t>(label));
            if (table_words == 2) words->push_back(static_cast<uint32_t>(label >> 32));
          }
          table_cache.emplace(distinct, table_offset);
        }
        const size_t header = base + 2 * static_cast<size_t>(grid.Ravel(block_coords));
        (*words)[header] = (table_offset & 0xFFFFFFu) | (static_cast<uint32_t>(bits) << 24);
        (*words)[header + 1] = values_offset;
      }
}

}  // namespace

Result<Bytes> EncodeCompressedSegmentation(const SegmentationGeometry& g, ByteView labels) {
  TESSERA_RETURN_IF_ERROR(CheckGeometry(g));
  const int64_t channel_labels = g.volume_xyz[0] * g.volume_xyz[1] * g.volume_xyz[2];
  if (static_cast<int64_t>(labels.size()) != g.num_channels * channel_labels * g.label_bytes)
    return InvalidArgument("compressed_segmentation: got " + std::to_string(labels.size()) + " bytes, expected " +
                           std::to_string(g.num_channels * channel_labels * g.label_bytes));
  std::vector<uint32_t> words(static_cast<size_t>(g.num_channels), 0);
  for (int64_t c = 0; c < g.num_channels; ++c) {
    words[c] = static_cast<uint32_t>(words.size());
    std::vector<uint32_t> channel;
    EncodeChannel(g, labels.data() + c * channel_labels * g.label_bytes, &channel);
    if (channel.size() > 0xFFFFFFu)
      return OutOfResources("compressed_segmentation: a channel exceeds the format's 24-bit table offsets");
    words.insert(words.end(), channel.begin(), channel.end());
  }
  Bytes out(4 * words.size());
  for (size_t i = 0; i < words.size(); ++i) EncodeFixed32LE(out.data() + 4 * i, words[i]);
  return out;
}

Status DecodeCompressedSegmentation(const SegmentationGeometry& g, ByteView encoded, Bytes* labels,
                                    const std::string& where) {
  TESSERA_RETURN_IF_ERROR(CheckGeometry(g));
  const auto& v = g.volume_xyz;
  const auto& b = g.block_xyz;
  const index::ChunkGrid grid = BlockGrid(g);
  const int64_t blocks = grid.ChunkCount();
  const int64_t channel_labels = v[0] * v[1] * v[2];
  const uint64_t total_words = encoded.size() / 4;
  const auto word = [&](uint64_t i) { return DecodeFixed32LE(encoded.data() + 4 * i); };
  const auto corrupt = [&](const std::string& what, uint64_t begin_word, uint64_t end_word) {
    return CorruptData(where + ": compressed_segmentation " + what + " at " + ByteRangeText(4 * begin_word, 4 * end_word) +
                       " (data is " + std::to_string(encoded.size()) + " bytes)");
  };
  if (encoded.size() % 4 != 0) return corrupt("length is not a multiple of 4", 0, total_words);
  if (total_words < static_cast<uint64_t>(g.num_channels)) return corrupt("channel header is truncated", 0, g.num_channels);
  labels->resize(static_cast<size_t>(g.num_channels * channel_labels * g.label_bytes));
  for (int64_t c = 0; c < g.num_channels; ++c) {
    const uint64_t channel = word(c);
    const uint64_t channel_end = c + 1 < g.num_channels ? word(c + 1) : total_words;
    if (channel < static_cast<uint64_t>(g.num_channels) || channel > channel_end || channel_end > total_words ||
        channel + 2 * static_cast<uint64_t>(blocks) > channel_end)
      return corrupt("channel " + std::to_string(c) + " offset", c, c + 1);
    uint8_t* out = labels->data() + c * channel_labels * g.label_bytes;
    for (int64_t bz = 0; bz < grid.chunk_count[0]; ++bz)
      for (int64_t by = 0; by < grid.chunk_count[1]; ++by)
        for (int64_t bx = 0; bx < grid.chunk_count[2]; ++bx) {
          const int64_t block_coords[3] = {bz, by, bx};
          const int64_t X0 = grid.ChunkOrigin(2, bx), Y0 = grid.ChunkOrigin(1, by), Z0 = grid.ChunkOrigin(0, bz);
          const uint64_t header = channel + 2 * static_cast<uint64_t>(grid.Ravel(block_coords));
          const uint64_t table = channel + (word(header) & 0xFFFFFFu);
          const int bits = static_cast<int>(word(header) >> 24);
          const uint64_t values = channel + word(header + 1);
          if (bits != 0 && bits != 1 && bits != 2 && bits != 4 && bits != 8 && bits != 16 && bits != 32)
            return corrupt("block header with " + std::to_string(bits) + " bits", header, header + 2);
          const uint64_t value_words = (static_cast<uint64_t>(bits) * static_cast<uint64_t>(b[0] * b[1] * b[2]) + 31) / 32;
          if (values + value_words > channel_end || table >= channel_end)
            return corrupt("block header pointing outside the channel", header, header + 2);
          for (int64_t z = 0; z < b[2]; ++z)
            for (int64_t y = 0; y < b[1]; ++y)
              for (int64_t x = 0; x < b[0]; ++x) {
                const int64_t X = X0 + x, Y = Y0 + y, Z = Z0 + z;
                if (X >= v[0] || Y >= v[1] || Z >= v[2]) continue;
                uint64_t index = 0;
                if (bits > 0) {
                  const uint64_t bit = static_cast<uint64_t>(bits) * static_cast<uint64_t>(x + b[0] * (y + b[1] * z));
                  index = (word(values + bit / 32) >> (bit % 32)) & ((uint64_t{1} << bits) - 1);
                }
                const uint64_t entry = table + index * static_cast<uint64_t>(g.label_bytes / 4);
                if (entry + g.label_bytes / 4 > channel_end)
                  return corrupt("lookup index " + std::to_string(index) + " past the data", header, header + 2);
                uint8_t* dst = out + g.label_bytes * (X + v[0] * (Y + v[1] * Z));
                EncodeFixed32LE(dst, word(entry));
                if (g.label_bytes == 8) EncodeFixed32LE(dst + 4, word(entry + 1));
              }
        }
  }
  return Status::Ok();
}

}  // namespace tessera::precomputed
