#include "tessera/spec/array_spec.h"

#include <gtest/gtest.h>

#include "tessera/api/driver_registry.h"
#include "tessera/store/location.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

ArraySpec Spec(std::vector<int64_t> shape, std::vector<int64_t> chunks) {
  ArraySpec s;
  s.dtype = DataType::kUInt16;
  s.shape = std::move(shape);
  s.chunk_shape = std::move(chunks);
  return s;
}

void ExpectError(const Result<ArraySpec>& r, ErrorKind kind, std::string_view field, const std::string& text) {
  ASSERT_ERROR(r, kind, text);
  EXPECT_EQ(SpecFieldOfError(r.status()), field) << r.status().ToString();
}

// arrival_order: a permutation of the dimensions that keeps dimension 0 first; each error names
// the field and what was expected. The arriving shape follows it; pyramid levels past the first
// (fed by the downsamplers) arrive in stored order.
TEST(ArraySpecTest, ArrivalOrderIsAPermutationKeepingDimensionZero) {
  ArraySpec s = Spec({0, 3, 5, 64}, {1, 1, 5, 32});
  s.arrival_order = {0, 2, 1, 3};
  Result<ArraySpec> ok = ResolveSpec(s, Format::kZarr3);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE(ok->reorders_arrival());
  EXPECT_EQ(ok->arrival_shape(), (std::vector<int64_t>{0, 5, 3, 64}));
  s.arrival_order = {0, 1, 2, 3};
  EXPECT_FALSE(s.reorders_arrival());
  s.arrival_order = {0, 2, 1};
  ExpectError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "arrival_order",
              "0,2,1 has 3 entries for a rank-4 array");
  s.arrival_order = {0, 2, 1, 4};
  ExpectError(ResolveSpec(s, Format::kHdf5), ErrorKind::kInvalidArgument, "arrival_order",
              "must be a permutation of 0..3, not 0,2,1,4");
  s.arrival_order = {0, 1, 1, 3};
  ExpectError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "arrival_order", "permutation");
  s.arrival_order = {1, 0, 2, 3};
  ExpectError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "arrival_order", "must start with 0");
  ArraySpec p = Spec({8, 3, 64, 64}, {4, 1, 32, 32});
  p.arrival_order = {0, 2, 1, 3};
  p.pyramid.levels = 2;
  p.pyramid.factors = {1, 1, 2, 2};
  Result<ArraySpec> pr = ResolveSpec(p, Format::kZarr3);
  ASSERT_TRUE(pr.ok()) << pr.status().ToString();
  EXPECT_EQ(LevelShape(*pr, 0).arrival_order, p.arrival_order);
  EXPECT_TRUE(LevelShape(*pr, 1).arrival_order.empty());
}

TEST(ArraySpecTest, FillsEachFormatsDefaults) {
  Result<ArraySpec> z = ResolveSpec(Spec({0, 64, 64}, {1, 32, 32}), Format::kZarr3);
  ASSERT_TRUE(z.ok()) << z.status().ToString();
  EXPECT_EQ(*z->codec, Codec::kZstd);
  Result<ArraySpec> p = ResolveSpec(Spec({64, 64, 64}, {32, 32, 32}), Format::kPrecomputed);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p->codec, Codec::kNone);
  ArraySpec h = Spec({0, 100, 100}, {});
  h.codec = Codec::kGzip;
  Result<ArraySpec> hr = ResolveSpec(h, Format::kHdf5);
  ASSERT_TRUE(hr.ok()) << hr.status().ToString();
  EXPECT_EQ(*hr->level, 4);                // h5py's deflate default
  EXPECT_EQ(hr->chunk_shape.size(), 3u);   // automatic chunks
  EXPECT_LE(hr->chunk_shape[1], 100);
}

TEST(ArraySpecTest, ZarrGetsAutomaticChunksAboutOneMebibyte) {
  Result<ArraySpec> z = ResolveSpec(Spec({0, 2048, 2048}, {}), Format::kZarr3);
  ASSERT_TRUE(z.ok()) << z.status().ToString();
  int64_t elements = 1;
  for (int64_t c : z->chunk_shape) elements *= c;
  EXPECT_GT(elements * 2, 256 << 10);
  EXPECT_LE(elements * 2, 4 << 20);
}

TEST(ArraySpecTest, GeometryErrorsNameTheField) {
  ExpectError(ResolveSpec(Spec({10, 10}, {5}), Format::kZarr3), ErrorKind::kInvalidArgument, "chunk_shape",
              "rank-2");
  ExpectError(ResolveSpec(Spec({10, 0}, {5, 5}), Format::kZarr3), ErrorKind::kInvalidArgument, "shape",
              "only dimension 0");
  ExpectError(ResolveSpec(Spec({}, {}), Format::kZarr3), ErrorKind::kInvalidArgument, "shape", "at least one");
  ArraySpec s = Spec({10, 10}, {5, 5});
  s.shard_chunks = {2, 0};
  ExpectError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "shard_chunks", "> 0");
  s = Spec({10, 10}, {5, 5});
  s.dimension_names = {"y"};
  ExpectError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "dimension_names", "1 names");
  s = Spec({10, 10}, {5, 5});
  s.fill_value = "banana";
  ExpectError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "fill_value", "");
  s = Spec({10, 10}, {5, 5});
  s.codec = Codec::kGzip;
  s.level = 12;
  ExpectError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "level", "0..9");
  s.codec = Codec::kNone;
  s.level = 1;
  ExpectError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "level", "no level");
  s = Spec({10, 10}, {5, 5});
  s.zarr.index_at_start = true;
  ExpectError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "index_at_start", "sharded");
}

TEST(ArraySpecTest, PrecomputedRefusesWhatItCannotHonour) {
  ArraySpec s = Spec({64, 64, 64}, {32, 32, 32});
  s.shard_chunks = {2, 2, 2};
  s.codec = Codec::kGzip;
  s.level = 9;
  ExpectError(ResolveSpec(s, Format::kPrecomputed), ErrorKind::kUnsupported, "level", "precomputed");
  s.level.reset();
  s.fill_value = 7;
  ExpectError(ResolveSpec(s, Format::kPrecomputed), ErrorKind::kUnsupported, "fill_value", "no fill value");
  s.fill_value = 0;  // the value it reads anyway
  EXPECT_TRUE(ResolveSpec(s, Format::kPrecomputed).ok());
  s.codec = Codec::kZstd;
  ExpectError(ResolveSpec(s, Format::kPrecomputed), ErrorKind::kUnsupported, "codec", "none or gzip");
  s = Spec({0, 64, 64}, {32, 32, 32});
  ExpectError(ResolveSpec(s, Format::kPrecomputed), ErrorKind::kInvalidArgument, "shape", "fixed size");
  s = Spec({64, 64, 64}, {32, 32, 32});
  s.attributes["a"] = 1;
  ExpectError(ResolveSpec(s, Format::kPrecomputed), ErrorKind::kUnsupported, "attributes", "");
  s = Spec({64, 64, 64}, {32, 32, 32});
  s.dimension_names = {"a", "b", "c"};
  ExpectError(ResolveSpec(s, Format::kPrecomputed), ErrorKind::kUnsupported, "dimension_names", "z, y, x");
  s.dimension_names = {"z", "y", "x"};
  EXPECT_TRUE(ResolveSpec(s, Format::kPrecomputed).ok());
  s = Spec({64, 64, 64}, {32, 32, 32});
  s.hdf5.shuffle = true;
  ExpectError(ResolveSpec(s, Format::kPrecomputed), ErrorKind::kUnsupported, "shuffle", "HDF5");
}

TEST(ArraySpecTest, EachFormatRefusesTheTypesAndOptionsItCannotWrite) {
  ArraySpec s = Spec({64, 64, 64}, {32, 32, 32});
  s.dtype = DataType::kFloat64;
  ExpectError(ResolveSpec(s, Format::kPrecomputed), ErrorKind::kUnsupported, "dtype", "float64");
  s.dtype = DataType::kUInt16;
  s.precomputed.encoding = "compressed_segmentation";
  ExpectError(ResolveSpec(s, Format::kPrecomputed), ErrorKind::kUnsupported, "encoding", "uint32 or uint64");
  s = Spec({64, 64, 64}, {32, 32, 32});
  s.precomputed.hash = "murmurhash3_x86_128";
  ExpectError(ResolveSpec(s, Format::kPrecomputed), ErrorKind::kUnsupported, "hash", "unsharded");
  s = Spec({64, 64, 64}, {32, 32, 32});
  s.precomputed.cseg_block_xyz = {4, 4, 4};
  ExpectError(ResolveSpec(s, Format::kPrecomputed), ErrorKind::kUnsupported, "cseg_block_xyz", "raw");
  for (const char* key : {".", "a/../b", "/abs", "a//b"}) {
    s = Spec({64, 64, 64}, {32, 32, 32});
    s.precomputed.scale_key = key;
    ExpectError(ResolveSpec(s, Format::kPrecomputed), ErrorKind::kInvalidArgument, "scale_key", key);
  }
  s.precomputed.scale_key = "s..1";
  EXPECT_TRUE(ResolveSpec(s, Format::kPrecomputed).ok());
  s = Spec({0, 8, 8, 8}, {8, 8, 8});
  ExpectError(ResolveSpec(s, Format::kPrecomputed), ErrorKind::kInvalidArgument, "shape", "fixed size");
  s = Spec({0, 64, 64}, {1, 32, 32});
  s.dtype = DataType::kComplex64;
  ExpectError(ResolveSpec(s, Format::kHdf5), ErrorKind::kUnsupported, "dtype", "complex64");
  s = Spec({0, 64, 64}, {1, 32, 32});
  s.attributes["big"] = uint64_t{1} << 63;
  ExpectError(ResolveSpec(s, Format::kHdf5), ErrorKind::kUnsupported, "attributes", "int64");
}

TEST(ArraySpecTest, MultiChannelPrecomputedTakesZyxChunks) {
  ArraySpec s = Spec({3, 64, 64, 64}, {32, 32, 32});
  s.shard_chunks = {2, 2, 2};
  Result<ArraySpec> r = ResolveSpec(s, Format::kPrecomputed);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->chunk_shape, (std::vector<int64_t>{3, 32, 32, 32}));
  EXPECT_EQ(r->shard_chunks, (std::vector<int64_t>{1, 2, 2, 2}));
}

TEST(ArraySpecTest, Hdf5RefusesWhatItCannotHonour) {
  ArraySpec s = Spec({0, 64, 64}, {1, 32, 32});
  s.shard_chunks = {1, 2, 2};
  ExpectError(ResolveSpec(s, Format::kHdf5), ErrorKind::kUnsupported, "shard_chunks", "not sharded");
  s = Spec({0, 64, 64}, {1, 32, 32});
  s.codec = Codec::kBloscLz4;
  ExpectError(ResolveSpec(s, Format::kHdf5), ErrorKind::kUnsupported, "codec", "deflate");
  s = Spec({10, 64, 64}, {1, 128, 32});
  ExpectError(ResolveSpec(s, Format::kHdf5), ErrorKind::kUnsupported, "chunk_shape", "exceeds the fixed extent");
  s = Spec({0, 64, 64}, {1, 32, 32});
  s.attributes["nested"] = {{"a", 1}};
  ExpectError(ResolveSpec(s, Format::kHdf5), ErrorKind::kUnsupported, "attributes", "nested");
  s = Spec({0, 64, 64}, {1, 32, 32});
  s.zarr.index_at_start = true;
  ExpectError(ResolveSpec(s, Format::kHdf5), ErrorKind::kUnsupported, "index_at_start", "hdf5");
  s = Spec({0, 64, 64}, {1, 32, 32});
  s.zarr.chunk_codecs = nlohmann::json::array({{{"name", "bytes"}}});
  ExpectError(ResolveSpec(s, Format::kHdf5), ErrorKind::kUnsupported, "chunk_codecs", "hdf5");
  s.zarr.chunk_codecs = nlohmann::json::array();
  ExpectError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "chunk_codecs", "non-empty list");
  s = Spec({0, 64, 64}, {1, 32, 32});
  s.dimension_names = {"t", "y", "x"};
  ExpectError(ResolveSpec(s, Format::kHdf5), ErrorKind::kUnsupported, "dimension_names", "hdf5");
}

TEST(ArraySpecTest, NamesRoundTrip) {
  for (Codec c : {Codec::kNone, Codec::kZstd, Codec::kGzip, Codec::kBloscLz4, Codec::kBloscZstd})
    EXPECT_EQ(*ParseCodec(CodecName(c)), c);
  for (Format f : {Format::kZarr3, Format::kPrecomputed, Format::kHdf5}) EXPECT_EQ(*ParseFormat(FormatName(f)), f);
  EXPECT_ERROR(ParseCodec("lzma"), ErrorKind::kUnsupported, "codec: ", "\"lzma\"");
  EXPECT_ERROR(ParseFormat("n5"), ErrorKind::kUnsupported, "format: \"n5\"", "supported: zarr3, precomputed, hdf5");
}

TEST(LocationTest, ParsesPathsAndUrls) {
  EXPECT_EQ(ParseLocation("a/b.zarr")->path, "a/b.zarr");
  EXPECT_EQ(ParseLocation("file:///tmp/x.zarr")->path, "/tmp/x.zarr");
  EXPECT_EQ(ParseLocation("s3://bucket/x/")->scheme, "s3");
  EXPECT_EQ(ParseLocation("s3://bucket/x/")->path, "bucket/x");
  EXPECT_EQ(ParseLocation("S3://bucket/x")->ToString(), "s3://bucket/x");
  EXPECT_EQ(ParseLocation("https://host/x")->ToString(), "https://host/x");
  EXPECT_FALSE(ParseLocation("https://host/x")->is_file());
  EXPECT_ERROR(ParseLocation("s3://"), ErrorKind::kInvalidArgument, "location: s3:// names no bucket");
  EXPECT_ERROR(ParseLocation("gs://bucket/x"), ErrorKind::kUnsupported, "gs://bucket/x", "s3://");
  // Writing over HTTP is refused, naming the location.
  Result<std::shared_ptr<Store>> http = OpenLocationStore(*ParseLocation("http://host/x"), /*create=*/true);
  EXPECT_ERROR(http, ErrorKind::kUnsupported, "http://host/x", "read only");
  EXPECT_ERROR(ParseLocation("ftp://host/x"), ErrorKind::kInvalidArgument, "ftp://host/x", "unknown scheme \"ftp\"");
  EXPECT_ERROR(ParseLocation(""), ErrorKind::kInvalidArgument, "location: empty");
  EXPECT_EQ(FormatFromName(*ParseLocation("scan.H5")), Format::kHdf5);
  EXPECT_EQ(FormatFromName(*ParseLocation("scan.zarr")), Format::kZarr3);
  Result<Format> missing = DetectFormat(*ParseLocation("/nonexistent/tessera/x"));
  EXPECT_ERROR(missing, ErrorKind::kNotFound, "/nonexistent/tessera/x", "no such file or directory");
}

}  // namespace
}  // namespace tessera
