// Conversion: the destination spec defaults to the source's where the format takes it, the copy
// reads whole source chunk rows per slab, and the result reads back exactly.
#include "tessera/api/convert.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "tessera/api/driver_registry.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

class ConvertTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera_convert_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // A sharded blosc-lz4 Zarr array of `shape` (uint16, values i % 1000) with names and attributes.
  std::vector<uint16_t> WriteSource(const std::string& where, const std::vector<int64_t>& shape) {
    ArraySpec s;
    s.dtype = DataType::kUInt16;
    s.shape = shape;
    s.chunk_shape = {4, 5, 6};
    s.shard_chunks = {2, 2, 1};
    s.codec = Codec::kBloscLz4;
    s.level = 3;
    s.fill_value = 9;
    s.dimension_names = {"z", "y", "x"};
    s.attributes = {{"gain", 2.5}, {"nested", {{"a", 1}}}};
    int64_t n = 1;
    for (int64_t v : shape) n *= v;
    std::vector<uint16_t> data(static_cast<size_t>(n));
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint16_t>(i % 1000);
    auto stream = CreateStream(where, s, {.format = Format::kZarr3, .threads = 2}).value();
    EXPECT_TRUE(stream->Append(ByteView(reinterpret_cast<const uint8_t*>(data.data()), data.size() * 2)).ok());
    EXPECT_TRUE(stream->Close().ok());
    return data;
  }

  fs::path dir_;
};

TEST_F(ConvertTest, TheSpecKeepsWhatTheFormatTakes) {
  WriteSource(Path("a.zarr"), {17, 11, 13});
  auto src = OpenArray(Path("a.zarr")).value();
  ArraySpec zarr = ConversionSpec(*src, Format::kZarr3).value();
  EXPECT_EQ(zarr.chunk_shape, (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(zarr.shard_chunks, (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(zarr.codec, Codec::kBloscLz4);
  EXPECT_EQ(zarr.level, 3);
  EXPECT_EQ(zarr.fill_value, 9);
  EXPECT_EQ(zarr.dimension_names, (std::vector<std::string>{"z", "y", "x"}));
  EXPECT_EQ(zarr.attributes["gain"], 2.5);

  // HDF5 writes no blosc: without a codec chosen, that is an error naming the source's codec.
  Result<ArraySpec> lossy = ConversionSpec(*src, Format::kHdf5);
  EXPECT_ERROR(lossy, ErrorKind::kUnsupported, "a.zarr", "hdf5 does not write the source's blosc-lz4 level 3",
               "choose the codec");
  EXPECT_EQ(lossy.status().field(), "codec");
  // With one chosen: no blosc, no shards, no names, no nested attributes; chunks and fill value stay.
  ArraySpec h5 = ConversionSpec(*src, Format::kHdf5, /*codec_chosen=*/true).value();
  EXPECT_EQ(h5.chunk_shape, (std::vector<int64_t>{4, 5, 6}));
  EXPECT_TRUE(h5.shard_chunks.empty());
  EXPECT_FALSE(h5.codec.has_value());
  EXPECT_TRUE(h5.dimension_names.empty());
  EXPECT_EQ(h5.attributes, (nlohmann::json{{"gain", 2.5}}));
  EXPECT_EQ(h5.fill_value, 9);

  // Precomputed: no fill value, no attributes; the z, y, x names are its own.
  EXPECT_ERROR(ConversionSpec(*src, Format::kPrecomputed), ErrorKind::kUnsupported, "blosc-lz4");
  ArraySpec pc = ConversionSpec(*src, Format::kPrecomputed, /*codec_chosen=*/true).value();
  EXPECT_TRUE(pc.fill_value.is_null());
  EXPECT_TRUE(pc.attributes.empty());
  EXPECT_TRUE(ResolveSpec(pc, Format::kPrecomputed).ok());
}

TEST_F(ConvertTest, AnArrayNoSpecOfTheFormatHoldsIsAnError) {
  ArraySpec s;
  s.dtype = DataType::kUInt8;
  s.shape = {3, 4};
  auto stream = CreateStream(Path("flat.zarr"), s).value();
  std::vector<uint8_t> bytes(12, 1);
  ASSERT_TRUE(stream->Append(ByteView(bytes.data(), bytes.size())).ok());
  ASSERT_TRUE(stream->Close().ok());
  auto src = OpenArray(Path("flat.zarr")).value();
  Result<ArraySpec> pc = ConversionSpec(*src, Format::kPrecomputed);
  EXPECT_ERROR(pc, ErrorKind::kInvalidArgument, "flat.zarr", "shape: precomputed volumes are [c,] z, y, x, not rank 2");
}

TEST_F(ConvertTest, SlabsAreWholeSourceChunkRowsAndAtLeastAShardRow) {
  WriteSource(Path("a.zarr"), {17, 11, 13});
  auto src = OpenArray(Path("a.zarr")).value();  // read chunks of 4 rows
  ArraySpec dst = ConversionSpec(*src, Format::kZarr3).value();
  dst.chunk_shape = {3, 11, 13};
  dst.shard_chunks = {3, 1, 1};  // shard rows of 9
  EXPECT_EQ(CopySlabRows(*src, dst), 12);
  dst.shard_chunks.clear();
  EXPECT_EQ(CopySlabRows(*src, dst), 4);
  dst.chunk_shape = {64, 11, 13};
  EXPECT_EQ(CopySlabRows(*src, dst), 17);  // never more than the array
}

TEST_F(ConvertTest, ConvertedArraysReadBackExactly) {
  const std::vector<uint16_t> data = WriteSource(Path("a.zarr"), {17, 11, 13});
  auto src = OpenArray(Path("a.zarr")).value();
  for (Format format : {Format::kHdf5, Format::kPrecomputed, Format::kZarr3}) {
    const std::string where = Path(std::string("b.") + std::string(FormatName(format)));
    // The source is blosc-lz4, which only Zarr writes: the other formats are given their default.
    ArraySpec spec = ConversionSpec(*src, format, /*codec_chosen=*/format != Format::kZarr3).value();
    int64_t last = 0;
    CopyOptions copy;
    copy.progress = [&](const CopyProgress& p) {
      EXPECT_GT(p.bytes_done, last);
      last = p.bytes_done;
      EXPECT_EQ(p.bytes_total, 17 * 11 * 13 * 2);
    };
    Result<StreamStatistics> st = Convert(*src, where, spec, {.format = format, .threads = 2}, copy);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    EXPECT_EQ(last, 17 * 11 * 13 * 2);
    auto back = OpenArray(where).value();
    std::vector<uint16_t> got(data.size());
    ASSERT_TRUE(back->Read(Hyperslab::All(back->shape()), got.data()).ok());
    EXPECT_EQ(got, data) << FormatName(format);
  }
}

// The destination keeps what its stream published before the source failed (what a crash at that
// moment would leave): rows of the slabs copied before the corrupt one, read back exactly.
TEST_F(ConvertTest, ASourceThatFailsMidwayKeepsWhatWasPublished) {
  WriteSource(Path("a.zarr"), {17, 11, 13});
  auto src = OpenArray(Path("a.zarr")).value();
  fs::remove(fs::path(Path("a.zarr")) / "c" / "2" / "0" / "0");  // a shard of rows 8..15: reads as fill
  fs::path shard = fs::path(Path("a.zarr")) / "c" / "1" / "0" / "0";
  fs::resize_file(shard, 7);  // truncated: a corrupt shard
  ArraySpec spec = ConversionSpec(*src, Format::kZarr3).value();
  Result<StreamStatistics> st = Convert(*src, Path("b.zarr"), spec);
  // The error names the shard, what is wrong with it, and the region being copied.
  EXPECT_ERROR(st, ErrorKind::kCorruptData, "c/1/0/0", "truncated: 7 bytes", "(region at 8,0,0 of shape 8,11,13)");
  auto kept = OpenArray(Path("b.zarr"));
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  const int64_t rows = (*kept)->shape()[0];
  EXPECT_LT(rows, 17);
  if (rows > 0) {
    Hyperslab sel = Hyperslab::All((*kept)->shape());
    std::vector<uint16_t> got(static_cast<size_t>(sel.NumElements())), want(got.size());
    ASSERT_TRUE((*kept)->Read(sel, got.data()).ok());
    ASSERT_TRUE(src->Read(sel, want.data()).ok());
    EXPECT_EQ(got, want);
  }
}

}  // namespace
}  // namespace tessera
