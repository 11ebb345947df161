#include "tessera/spec/array_spec_json.h"

#include <gtest/gtest.h>

#include "tessera/api/driver_registry.h"
#include "cpp_support/status_matchers.h"
#include "tessera/spec/spec_error.h"

namespace tessera {
namespace {

using nlohmann::json;

void ExpectSameSpec(const ArraySpec& a, const ArraySpec& b) {
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.shape, b.shape);
  EXPECT_EQ(a.chunk_shape, b.chunk_shape);
  EXPECT_EQ(a.shard_chunks, b.shard_chunks);
  EXPECT_EQ(a.codec, b.codec);
  EXPECT_EQ(a.level, b.level);
  EXPECT_EQ(a.fill_value, b.fill_value);
  EXPECT_EQ(a.dimension_names, b.dimension_names);
  EXPECT_EQ(a.arrival_order, b.arrival_order);
  EXPECT_EQ(a.attributes, b.attributes);
  EXPECT_TRUE(a.zarr == b.zarr);
  EXPECT_TRUE(a.precomputed == b.precomputed);
  EXPECT_TRUE(a.hdf5 == b.hdf5);
  EXPECT_TRUE(a.pyramid == b.pyramid);
  EXPECT_TRUE(a.ome == b.ome);
}

// ArraySpecFromJson(ArraySpecToJson(spec resolved for `format`)) is the resolved spec.
void ExpectRoundTrip(const ArraySpec& spec, Format format) {
  Result<ArraySpec> resolved = ResolveSpec(spec, format);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  const json j = ArraySpecToJson(*resolved);
  Result<ArraySpec> back = ArraySpecFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << " from " << j.dump();
  ExpectSameSpec(*back, *resolved);
  // And through text, as `tessera info --json` prints it and `tessera stream --spec` reads it.
  Result<ArraySpec> reread = ArraySpecFromJson(json::parse(j.dump(2)));
  ASSERT_TRUE(reread.ok()) << reread.status().ToString();
  ExpectSameSpec(*reread, *resolved);
  EXPECT_EQ(ArraySpecToJson(*reread), j);
}

// An error of `kind` whose Status names `path` as its field and whose message starts with it.
void ExpectPathError(const json& j, ErrorKind kind, const std::string& path, const std::string& text = "") {
  Result<ArraySpec> r = ArraySpecFromJson(j);
  ASSERT_ERROR(r, kind, text);
  EXPECT_EQ(r.status().field(), path) << r.status().ToString() << " from " << j.dump();
  if (!path.empty()) EXPECT_EQ(r.status().message().rfind(path + ": ", 0), 0u) << r.status().ToString();
}

TEST(ArraySpecJsonTest, ZarrRoundTripsEveryField) {
  ArraySpec s;
  s.dtype = DataType::kFloat32;
  s.shape = {0, 64, 96};
  s.chunk_shape = {4, 16, 32};
  s.shard_chunks = {2, 4, 3};
  s.codec = Codec::kBloscZstd;
  s.level = 7;
  s.fill_value = "NaN";
  s.dimension_names = {"t", "y", "x"};
  s.arrival_order = {0, 2, 1};
  s.attributes = {{"scan", "a"}, {"gain", 1.5}, {"nested", {{"k", json::array({1, 2})}}}};
  s.zarr.index_at_start = true;
  ExpectRoundTrip(s, Format::kZarr3);
  // Chunk codecs carried as stored (a source's blosclz + bitshuffle).
  s.zarr.chunk_codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                     {{"name", "blosc"},
                                      {"configuration",
                                       {{"cname", "blosclz"}, {"clevel", 9}, {"shuffle", "bitshuffle"},
                                        {"typesize", 4}, {"blocksize", 0}}}}});
  ExpectRoundTrip(s, Format::kZarr3);
  // Unsharded, defaults left to the format.
  ArraySpec u;
  u.dtype = DataType::kUInt16;
  u.shape = {100, 200};
  ExpectRoundTrip(u, Format::kZarr3);
}

TEST(ArraySpecJsonTest, PyramidAndOmeRoundTrip) {
  ArraySpec s;
  s.dtype = DataType::kUInt16;
  s.shape = {0, 64, 64, 64};
  s.chunk_shape = {1, 16, 16, 16};
  s.pyramid.levels = 3;
  s.pyramid.method = pyramid::DownsampleMethod::kMax;
  s.pyramid.factors = {1, 1, 2, 2};
  s.ome.axes = {{"t", "time", "second"}, {"z", "space", "micrometer"}, {"y", "space", "micrometer"}, {"x", "space", ""}};
  s.ome.voxel_size = {1, 2, 0.5, 0.5};
  s.ome.offset = {0, 10, -3.5, 0};
  s.ome.name = "scan";
  ExpectRoundTrip(s, Format::kZarr3);
  // Auto levels resolve to a count; an image without a pyramid.
  ArraySpec a;
  a.shape = {64, 64};
  a.chunk_shape = {8, 8};
  a.pyramid.levels = 0;
  ExpectRoundTrip(a, Format::kZarr3);
  ArraySpec image;
  image.shape = {8, 8, 8};
  image.ome.image = true;
  ExpectRoundTrip(image, Format::kZarr3);
}

TEST(ArraySpecJsonTest, PrecomputedRoundTripsEveryOption) {
  ArraySpec s;
  s.dtype = DataType::kUInt64;
  s.shape = {64, 64, 64};
  s.chunk_shape = {8, 8, 8};
  s.shard_chunks = {2, 2, 2};
  s.codec = Codec::kGzip;
  s.precomputed.encoding = "compressed_segmentation";
  s.precomputed.cseg_block_xyz = {4, 4, 2};
  s.precomputed.hash = "murmurhash3_x86_128";
  s.precomputed.resolution_xyz = {4, 4.5, 40};
  s.precomputed.voxel_offset_xyz = {-5, 0, 12};
  s.precomputed.scale_key = "8_8_40";
  s.pyramid.levels = 2;
  ExpectRoundTrip(s, Format::kPrecomputed);
  const json j = ArraySpecToJson(s);
  EXPECT_EQ(j["precomputed"]["resolution_xyz"], json::array({4, 4.5, 40}));
  EXPECT_EQ(j["precomputed"]["cseg_block_xyz"], json::array({4, 4, 2}));
  EXPECT_EQ(j["pyramid"]["levels"], 2);
}

TEST(ArraySpecJsonTest, Hdf5RoundTripsEveryOption) {
  ArraySpec s;
  s.dtype = DataType::kInt32;
  s.shape = {0, 30, 7};
  s.chunk_shape = {4, 10, 7};
  s.codec = Codec::kGzip;
  s.level = 6;
  s.fill_value = -1;
  s.attributes = {{"units", "counts"}, {"offsets", json::array({1, 2, 3})}};
  s.hdf5.dataset = "/group/data";
  s.hdf5.shuffle = true;
  s.hdf5.fletcher32 = true;
  ExpectRoundTrip(s, Format::kHdf5);
  const json j = ArraySpecToJson(s);
  EXPECT_EQ(j["hdf5"], (json{{"dataset", "/group/data"}, {"shuffle", true}, {"fletcher32", true}}));
}

TEST(ArraySpecJsonTest, DefaultsAreLeftOutAndNullIsTheDefault) {
  ArraySpec s;
  s.shape = {4};
  EXPECT_EQ(ArraySpecToJson(s), (json{{"dtype", "uint8"}, {"shape", {4}}}));
  const json nulls = {{"dtype", "int16"},      {"shape", {2, 3}},     {"chunk_shape", nullptr},
                      {"shard_chunks", nullptr}, {"codec", nullptr},  {"level", nullptr},
                      {"fill_value", nullptr}, {"attributes", nullptr}, {"zarr3", nullptr},
                      {"precomputed", {{"hash", nullptr}}},           {"pyramid", json::object()}};
  Result<ArraySpec> r = ArraySpecFromJson(nulls);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ArraySpec want;
  want.dtype = DataType::kInt16;
  want.shape = {2, 3};
  ExpectSameSpec(*r, want);
  // Levels: "auto" is 0; axes may be given as text.
  r = ArraySpecFromJson({{"pyramid", {{"levels", "auto"}}}, {"ome", {{"axes", "t:time:second,y:space,x:space"}}}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->pyramid.levels, 0);
  ASSERT_EQ(r->ome.axes.size(), 3u);
  EXPECT_EQ(r->ome.axes[0], (pyramid::OmeAxis{"t", "time", "second"}));
}

TEST(ArraySpecJsonTest, BadTypesNameTheJsonPath) {
  constexpr ErrorKind kInvalid = ErrorKind::kInvalidArgument;
  ExpectPathError(json::array({1}), kInvalid, "", "JSON object");
  ExpectPathError({{"dtype", 16}}, kInvalid, "dtype", "must be a string");
  ExpectPathError({{"dtype", "int4"}}, ErrorKind::kUnsupported, "dtype", "int4");
  ExpectPathError({{"shape", "4,4"}}, kInvalid, "shape", "must be an array of integers");
  ExpectPathError({{"chunk_shape", {1, 2.5}}}, kInvalid, "chunk_shape[1]", "must be an integer, not 2.5");
  ExpectPathError({{"shard_chunks", {true}}}, kInvalid, "shard_chunks[0]", "must be an integer");
  ExpectPathError({{"shape", {uint64_t{1} << 63}}}, kInvalid, "shape[0]", "out of range");
  ExpectPathError({{"codec", 3}}, kInvalid, "codec", "must be a string");
  ExpectPathError({{"codec", "lzma"}}, ErrorKind::kUnsupported, "codec", "\"lzma\" (supported:");
  ExpectPathError({{"level", "3"}}, kInvalid, "level", "must be an integer");
  ExpectPathError({{"level", int64_t{1} << 40}}, kInvalid, "level", "out of range");
  ExpectPathError({{"dimension_names", {"y", 1}}}, kInvalid, "dimension_names[1]", "must be a string");
  ExpectPathError({{"attributes", {1}}}, kInvalid, "attributes", "must be an object");
  ExpectPathError({{"zarr3", true}}, kInvalid, "zarr3", "must be an object");
  ExpectPathError({{"zarr3", {{"index_at_start", 1}}}}, kInvalid, "zarr3.index_at_start", "true or false");
  ExpectPathError({{"zarr3", {{"chunk_codecs", "zstd"}}}}, kInvalid, "zarr3.chunk_codecs", "a list of codecs");
  ExpectPathError({{"precomputed", {{"resolution_xyz", {1, "x", 1}}}}}, kInvalid, "precomputed.resolution_xyz[1]",
                  "must be a number");
  ExpectPathError({{"precomputed", {{"resolution_xyz", {1, 1}}}}}, kInvalid, "precomputed.resolution_xyz",
                  "3 numbers");
  ExpectPathError({{"precomputed", {{"voxel_offset_xyz", {0, 0, 0.5}}}}}, kInvalid, "precomputed.voxel_offset_xyz[2]",
                  "integer");
  ExpectPathError({{"precomputed", {{"cseg_block_xyz", 8}}}}, kInvalid, "precomputed.cseg_block_xyz", "3 integers");
  ExpectPathError({{"precomputed", {{"encoding", 1}}}}, kInvalid, "precomputed.encoding", "a string");
  ExpectPathError({{"precomputed", {{"hash", false}}}}, kInvalid, "precomputed.hash", "a string");
  ExpectPathError({{"precomputed", {{"scale_key", {"s0"}}}}}, kInvalid, "precomputed.scale_key", "a string");
  ExpectPathError({{"hdf5", {{"dataset", 5}}}}, kInvalid, "hdf5.dataset", "a string");
  ExpectPathError({{"hdf5", {{"shuffle", "yes"}}}}, kInvalid, "hdf5.shuffle", "true or false");
  ExpectPathError({{"hdf5", {{"fletcher32", 0}}}}, kInvalid, "hdf5.fletcher32", "true or false");
  ExpectPathError({{"pyramid", {{"levels", "many"}}}}, kInvalid, "pyramid.levels", "\"auto\"");
  ExpectPathError({{"pyramid", {{"levels", 1.5}}}}, kInvalid, "pyramid.levels", "level count");
  ExpectPathError({{"pyramid", {{"method", "bogus"}}}}, kInvalid, "pyramid.method", "bogus");
  ExpectPathError({{"pyramid", {{"factors", {2, "2"}}}}}, kInvalid, "pyramid.factors[1]", "integer");
  ExpectPathError({{"ome", {{"image", "yes"}}}}, kInvalid, "ome.image", "true or false");
  ExpectPathError({{"ome", {{"axes", 3}}}}, kInvalid, "ome.axes", "axes");
  ExpectPathError({{"ome", {{"axes", {{{"name", "y"}}}}}}}, kInvalid, "ome.axes[0].type", "non-empty");
  ExpectPathError({{"ome", {{"axes", {{{"name", "y"}, {"type", 2}}}}}}}, kInvalid, "ome.axes[0].type", "a string");
  ExpectPathError({{"ome", {{"axes", "t:time:parsec,y:space,x:space"}}}}, kInvalid, "ome.axes", "parsec");
  ExpectPathError({{"ome", {{"voxel_size", {1, nullptr}}}}}, kInvalid, "ome.voxel_size[1]", "a number");
  ExpectPathError({{"ome", {{"offset", "0"}}}}, kInvalid, "ome.offset", "array of numbers");
  ExpectPathError({{"ome", {{"name", 1}}}}, kInvalid, "ome.name", "a string");
}

TEST(ArraySpecJsonTest, UnknownKeysAreErrors) {
  constexpr ErrorKind kInvalid = ErrorKind::kInvalidArgument;
  ExpectPathError({{"chunks", {1}}}, kInvalid, "chunks", "unknown field");
  ExpectPathError({{"zarr", {{"index_at_start", true}}}}, kInvalid, "zarr", "unknown field");
  ExpectPathError({{"zarr3", {{"index_location", "start"}}}}, kInvalid, "zarr3.index_location", "index_at_start");
  ExpectPathError({{"precomputed", {{"resolution", {1, 1, 1}}}}}, kInvalid, "precomputed.resolution",
                  "resolution_xyz");
  ExpectPathError({{"hdf5", {{"compression", "gzip"}}}}, kInvalid, "hdf5.compression", "unknown field");
  ExpectPathError({{"pyramid", {{"downsample", "mean"}}}}, kInvalid, "pyramid.downsample", "method");
  ExpectPathError({{"ome", {{"axes", {{{"name", "y"}, {"type", "space"}, {"units", "nm"}}}}}}}, kInvalid,
                  "ome.axes[0].units", "unknown field");
  ExpectPathError({{"ome", {{"scale", {1}}}}}, kInvalid, "ome.scale", "voxel_size");
}

TEST(ArraySpecJsonTest, PatchReplacesFieldsAndPatchesObjectsKeyByKey) {
  json spec = {{"dtype", "uint8"},
               {"shape", {4, 4}},
               {"level", 3},
               {"attributes", {{"a", 1}}},
               {"precomputed", {{"hash", "murmurhash3_x86_128"}, {"scale_key", "s1"}}},
               {"zarr3", {{"index_at_start", true}}}};
  const json patch = {{"shape", {8, 8}},
                      {"level", nullptr},
                      {"attributes", {{"b", 2}}},
                      {"precomputed", {{"hash", nullptr}, {"encoding", "raw"}}},
                      {"zarr3", {{"index_at_start", nullptr}}},
                      {"pyramid", {{"levels", 2}}}};
  ASSERT_TRUE(PatchSpecJson(&spec, patch).ok());
  EXPECT_EQ(spec, (json{{"dtype", "uint8"},
                        {"shape", {8, 8}},
                        {"attributes", {{"b", 2}}},
                        {"precomputed", {{"scale_key", "s1"}, {"encoding", "raw"}}},
                        {"pyramid", {{"levels", 2}}}}));
  json bad = {{"hdf5", 1}};
  Status st = PatchSpecJson(&bad, {{"hdf5", {{"shuffle", true}}}});
  EXPECT_ERROR(st, ErrorKind::kInvalidArgument, "hdf5: must be an object");
  EXPECT_EQ(st.field(), "hdf5");
  json array = json::array();
  EXPECT_ERROR(PatchSpecJson(&array, json::object()), ErrorKind::kInvalidArgument, "JSON object");
}

TEST(ArraySpecJsonTest, StatusCarriesItsFieldThroughContext) {
  const Status st = InvalidField("chunk_shape", "entries must be > 0");
  EXPECT_EQ(st.message(), "chunk_shape: entries must be > 0");
  EXPECT_EQ(st.field(), "chunk_shape");
  EXPECT_TRUE(st.field_leads_message());
  const Status ctx = st.WithContext("converting a.zarr");
  EXPECT_EQ(ctx.field(), "chunk_shape");
  EXPECT_FALSE(ctx.field_leads_message());
  EXPECT_EQ(SpecFieldOfError(ctx), "chunk_shape");
  EXPECT_EQ(RespellSpecField(ctx, "--chunk").message(), ctx.message());  // context first: not respelled
  const Status flag = RespellSpecField(st, "--chunk");
  EXPECT_EQ(flag.message(), "--chunk: entries must be > 0");
  EXPECT_EQ(flag.field(), "--chunk");
  EXPECT_EQ(flag.kind(), ErrorKind::kInvalidArgument);
  // A message that only looks like a field's is not one: no field is read out of text.
  const Status text = InvalidArgument("chunk_shape: spelled in the text only");
  EXPECT_EQ(SpecFieldOfError(text), "");
  EXPECT_EQ(RespellSpecField(text, "--chunk").message(), text.message());
  // A JSON path's field is the path up to its first index.
  Result<ArraySpec> r = ArraySpecFromJson({{"precomputed", {{"resolution_xyz", {1, "x", 1}}}}});
  EXPECT_EQ(SpecFieldOfError(r.status()), "precomputed.resolution_xyz");
  EXPECT_TRUE(Status::Ok().WithField("x").field().empty());
}

}  // namespace
}  // namespace tessera
