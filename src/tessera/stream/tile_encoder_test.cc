#include "tessera/stream/tile_encoder.h"

#include <mutex>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "tessera/codec/registry.h"
#include "cpp_support/status_matchers.h"
#include "tessera/stream/stream_writer.h"

namespace tessera::stream {
namespace {

CodecChain Chain(const nlohmann::json& codecs, const ChunkSpec& spec) {
  Result<CodecChain> chain = ParseCodecChain(codecs, spec);
  EXPECT_TRUE(chain.ok()) << chain.status().ToString();
  return chain.ok() ? *chain : CodecChain();
}

const nlohmann::json kBytesLittle = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
const nlohmann::json kBytesBig = {{"name", "bytes"}, {"configuration", {{"endian", "big"}}}};
const nlohmann::json kZstd = {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}};

TEST(CodecChainTileEncoderTest, GathersInPlaceOnlyForTheIdentityChain) {
  const ChunkSpec u16{DataType::kUInt16, {4, 4}, ZeroFill(DataType::kUInt16)};
  const ChunkSpec u8{DataType::kUInt8, {4, 4}, ZeroFill(DataType::kUInt8)};
  EXPECT_TRUE(CodecChainTileEncoder(Chain(nlohmann::json::array({kBytesLittle}), u16), u16).gathers_in_place());
  EXPECT_TRUE(CodecChainTileEncoder(Chain(nlohmann::json::array({{{"name", "bytes"}}}), u8), u8).gathers_in_place());
  EXPECT_TRUE(CodecChainTileEncoder(Chain(nlohmann::json::array({kBytesBig}), u8), u8).gathers_in_place());
  EXPECT_FALSE(CodecChainTileEncoder(Chain(nlohmann::json::array({kBytesBig}), u16), u16).gathers_in_place());
  EXPECT_FALSE(CodecChainTileEncoder(Chain(nlohmann::json::array({kBytesLittle, kZstd}), u16), u16).gathers_in_place());
}

TEST(CodecChainTileEncoderTest, EncodesWithTheChainAndExposesIt) {
  const ChunkSpec spec{DataType::kUInt16, {2, 3}, ZeroFill(DataType::kUInt16)};
  const CodecChain chain = Chain(nlohmann::json::array({kBytesBig}), spec);
  const CodecChainTileEncoder encoder(chain, spec);
  const Bytes tile{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const int64_t coords[] = {0, 0};
  Bytes out{99};
  ASSERT_TRUE(encoder.Encode(coords, tile, &out).ok());
  EXPECT_EQ(out, (Bytes{2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11}));
  EXPECT_EQ(encoder.codec_chain()->array_to_bytes, chain.array_to_bytes);
  EXPECT_EQ(encoder.tile_spec().shape, spec.shape);
}

// Encodes a tile as its grid coordinates followed by its first byte, recording the coordinates.
class CoordinateEncoder final : public TileEncoder {
 public:
  Status Encode(const int64_t* tile_coords, ByteView tile, Bytes* out) const override {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.insert({tile_coords[0], tile_coords[1]});
    *out = Bytes{static_cast<uint8_t>(tile_coords[0]), static_cast<uint8_t>(tile_coords[1]), tile[0]};
    return Status::Ok();
  }
  std::set<std::vector<int64_t>> seen() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::set<std::vector<int64_t>> seen_;
};

class NullSink final : public ShardSink {
 public:
  Status WriteShard(const EncodedShard& shard) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const EncodedTile& t : shard.slots)
      if (t.present) bytes_ += static_cast<int64_t>(t.encoding().size());
    return Status::Ok();
  }
  Status PublishRows(int64_t) override { return Status::Ok(); }
  int64_t bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return bytes_;
  }

 private:
  std::mutex mu_;
  int64_t bytes_ = 0;
};

Result<StreamLayout> SmallLayout() {
  LayoutRequest r;
  r.dtype = DataType::kUInt8;
  r.shape = {6, 5};
  r.tile_shape = {2, 2};
  r.tiles_per_shard = {1, 1};
  r.max_compressed_tile_bytes = 8;
  return PlanStreamLayout(r);
}

// A format's own encoder gets every non-fill tile once, with grid coordinates counted from the
// start of the stream (dimension 0 across epochs).
TEST(StreamWriterTileEncoderTest, AFormatEncoderSeesEveryTileWithItsGridCoordinates) {
  auto layout = SmallLayout();
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  auto encoder = std::make_shared<CoordinateEncoder>();
  NullSink sink;
  StreamWriterOptions wo;
  wo.threads = 2;
  auto writer = StreamWriter::Create(*layout, encoder, ZeroFill(DataType::kUInt8), &sink, wo);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->Append(Bytes(30, 1)).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  std::set<std::vector<int64_t>> expected;
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 3; ++c) expected.insert({r, c});
  EXPECT_EQ(encoder->seen(), expected);
  EXPECT_EQ(sink.bytes(), 9 * 3);
}

TEST(StreamWriterTileEncoderTest, CreateNeedsAnEncoderAndTheGpuNeedsACodecChain) {
  auto layout = SmallLayout();
  ASSERT_TRUE(layout.ok());
  NullSink sink;
  auto no_encoder = StreamWriter::Create(*layout, nullptr, ZeroFill(DataType::kUInt8), &sink);
  EXPECT_ERROR(no_encoder, ErrorKind::kInvalidArgument, "StreamWriter: no tile encoder");
  StreamWriterOptions wo;
  wo.backend = Backend::kCuda;
  auto gpu = StreamWriter::Create(*layout, std::make_shared<CoordinateEncoder>(), ZeroFill(DataType::kUInt8), &sink, wo);
  EXPECT_ERROR(gpu, ErrorKind::kUnsupported, "backend: cuda", "CPU backend only");
}

}  // namespace
}  // namespace tessera::stream
