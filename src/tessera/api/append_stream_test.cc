// Continuing an array (mode a): stream, close, append == one stream of all the rows, byte for byte;
// the array only grows while it resumes; a spec that contradicts the stored one is refused naming
// the field.
#include "tessera/api/append_stream.h"

#include <filesystem>
#include <map>
#include <optional>
#include <random>

#include <gtest/gtest.h>

#include "cpp_support/api_helpers.h"
#include "cpp_support/status_matchers.h"
#include "tessera/api/array.h"
#include "tessera/api/stream.h"
#include "tessera/pyramid/downsample.h"

namespace tessera {
namespace {

using api_test::Differing;
using api_test::Files;
using api_test::Uint16;
namespace fs = std::filesystem;

class AppendStreamTest : public api_test::TempDirTest {};

std::vector<uint16_t> Values(int64_t n, uint32_t seed) {
  std::vector<uint16_t> v(static_cast<size_t>(n));
  std::mt19937 rng(seed);
  for (auto& x : v) x = static_cast<uint16_t>(rng() % 50 == 0 ? 0 : 1 + rng() % 60000);
  return v;
}

ByteView Rows(const std::vector<uint16_t>& data, int64_t row_elements, int64_t first, int64_t count) {
  return ByteView(reinterpret_cast<const uint8_t*>(data.data() + first * row_elements),
                  static_cast<size_t>(count * row_elements * 2));
}

Status Stream(const std::string& location, const ArraySpec& spec, Mode mode, ByteView bytes, bool flush_half = false) {
  StreamOptions o;
  o.mode = mode;
  o.threads = 2;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<tessera::Stream> s, CreateStream(location, spec, o));
  if (flush_half) {
    TESSERA_RETURN_IF_ERROR(s->Append(bytes.first(bytes.size() / 2)));
    TESSERA_RETURN_IF_ERROR(s->Flush());
    bytes = bytes.subspan(bytes.size() / 2);
  }
  TESSERA_RETURN_IF_ERROR(s->Append(bytes));
  return s->Close();
}

TEST_F(AppendStreamTest, StreamCloseAppendEqualsOneStreamOfAllRows) {
  struct Case {
    const char* name;
    ArraySpec spec;
    std::vector<int64_t> parts;  // rows per stream: the first creates, the others append
  };
  const std::vector<Case> cases = {
      {"sharded, odd counts", Uint16({0, 12, 10}, {4, 4, 4}, {2, 2, 2}), {13, 5, 1, 9}},
      {"unsharded", Uint16({0, 12, 10}, {3, 8, 8}), {7, 11}},
      {"sharded, on a shard row", Uint16({0, 12, 10}, {2, 8, 8}, {4, 1, 2}), {16, 8, 3}},
      {"bounded first stream", Uint16({10, 12, 10}, {4, 8, 8}, {1, 2, 2}), {10, 6}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    int64_t total = 0;
    for (int64_t n : c.parts) total += n;
    const int64_t row = 12 * 10;
    const std::vector<uint16_t> data = Values(total * row, static_cast<uint32_t>(total));
    const std::string whole = Path(std::string(c.name) + ".whole.zarr"), pieces = Path(std::string(c.name) + ".zarr");
    ArraySpec unbounded = c.spec;
    unbounded.shape[0] = 0;
    ASSERT_TRUE(Stream(whole, unbounded, Mode::kCreate, Rows(data, row, 0, total)).ok());
    int64_t at = 0;
    for (size_t k = 0; k < c.parts.size(); ++k) {
      ArraySpec given;  // the stored spec is used: nothing given
      const Status st = Stream(pieces, k == 0 ? c.spec : given, k == 0 ? Mode::kCreate : Mode::kAppend,
                               Rows(data, row, at, c.parts[k]), /*flush_half=*/k == 2);
      ASSERT_TRUE(st.ok()) << st.ToString();
      at += c.parts[k];
      auto a = OpenArray(pieces);
      ASSERT_TRUE(a.ok());
      ASSERT_EQ((*a)->shape()[0], at);
      std::vector<uint16_t> got(static_cast<size_t>(at * row));
      ASSERT_TRUE((*a)->Read(Hyperslab::All((*a)->shape()), got.data()).ok());
      ASSERT_TRUE(std::equal(got.begin(), got.end(), data.begin())) << "after part " << k;
    }
    if (c.spec.shape[0] == 0) EXPECT_EQ(Differing(Files(pieces), Files(whole)), std::vector<std::string>{});
    if (c.spec.shape[0] != 0) {  // the shards are the same; zarr.json the first stream's
      auto p = Files(pieces), w = Files(whole);
      p.erase("zarr.json");
      w.erase("zarr.json");
      EXPECT_EQ(Differing(p, w), std::vector<std::string>{});
    }
  }
}

TEST_F(AppendStreamTest, TheArrayOnlyGrowsWhileItResumesAndAnAbortKeepsIt) {
  const ArraySpec spec = Uint16({0, 8, 8}, {4, 8, 8}, {2, 1, 1});
  const std::vector<uint16_t> data = Values(30 * 64, 7);
  ASSERT_TRUE(Stream(Path("a.zarr"), spec, Mode::kCreate, Rows(data, 64, 0, 13)).ok());
  StreamOptions o;
  o.mode = Mode::kAppend;
  auto s = CreateStream(Path("a.zarr"), ArraySpec{}, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  // Rows 8..13 were re-fed (the last shard row restarts at 8), and the array still has 13 rows.
  EXPECT_EQ((*s)->stats().rows_published, 13);
  auto a = OpenArray(Path("a.zarr"));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)->shape()[0], 13);
  ASSERT_TRUE((*s)->Append(Rows(data, 64, 13, 2)).ok());
  (*s)->Abort();  // as a crash: the 13 rows stay
  auto b = OpenArray(Path("a.zarr"));
  ASSERT_TRUE(b.ok());
  ASSERT_GE((*b)->shape()[0], 13);
  std::vector<uint16_t> got(static_cast<size_t>((*b)->shape()[0] * 64));
  ASSERT_TRUE((*b)->Read(Hyperslab::All((*b)->shape()), got.data()).ok());
  EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin()));
}

TEST_F(AppendStreamTest, ASpecThatContradictsTheStoredOneIsRefusedNamingTheField) {
  const ArraySpec spec = Uint16({0, 8, 8}, {4, 8, 8}, {2, 1, 1});
  const std::vector<uint16_t> data = Values(8 * 64, 3);
  ASSERT_TRUE(Stream(Path("a.zarr"), spec, Mode::kCreate, Rows(data, 64, 0, 5)).ok());
  StreamOptions o;
  o.mode = Mode::kAppend;
  ArraySpec chunks = spec;
  chunks.chunk_shape = {2, 8, 8};
  EXPECT_ERROR(CreateStream(Path("a.zarr"), chunks, o), ErrorKind::kInvalidArgument, "chunk_shape: 2,8,8",
               "the stored array's 4,8,8");
  ArraySpec shape = spec;
  shape.shape = {0, 8, 9};
  EXPECT_ERROR(CreateStream(Path("a.zarr"), shape, o), ErrorKind::kInvalidArgument, "shape: 0,8,9");
  ArraySpec dtype = spec;
  dtype.dtype = DataType::kUInt8;
  EXPECT_ERROR(CreateStream(Path("a.zarr"), dtype, o), ErrorKind::kInvalidArgument, "dtype: uint8");
  ArraySpec codec = spec;
  codec.codec = Codec::kGzip;
  EXPECT_ERROR(CreateStream(Path("a.zarr"), codec, o), ErrorKind::kInvalidArgument, "codec: gzip");
  // The same spec given whole agrees.
  auto s = CreateStream(Path("a.zarr"), spec, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE((*s)->Append(Rows(data, 64, 5, 3)).ok());
  ASSERT_TRUE((*s)->Close().ok());
  EXPECT_EQ(OpenArray(Path("a.zarr")).value()->shape()[0], 8);
  // A bounded continuation: the array ends with exactly the given rows; fewer than stored: refused.
  ArraySpec bounded = spec;
  bounded.shape[0] = 6;
  EXPECT_ERROR(CreateStream(Path("a.zarr"), bounded, o), ErrorKind::kInvalidArgument, "shape: 6,8,8",
               "mode a only adds rows");
  bounded.shape[0] = 11;
  const std::vector<uint16_t> more = Values(11 * 64, 3);  // rows 0..8 equal `data`'s (same seed)
  ASSERT_TRUE(Stream(Path("a.zarr"), bounded, Mode::kAppend, Rows(more, 64, 8, 3)).ok());
  auto grown = OpenArray(Path("a.zarr"));
  ASSERT_TRUE(grown.ok());
  ASSERT_EQ((*grown)->shape()[0], 11);
  std::vector<uint16_t> all(11 * 64);
  ASSERT_TRUE((*grown)->Read(Hyperslab::All((*grown)->shape()), all.data()).ok());
  EXPECT_TRUE(std::equal(all.begin(), all.begin() + 8 * 64, data.begin()));
  EXPECT_TRUE(std::equal(all.begin() + 8 * 64, all.end(), more.begin() + 8 * 64));
  // Nothing there: mode a creates. Another format there, or a format without resume: refused.
  EXPECT_TRUE(Stream(Path("new.zarr"), spec, Mode::kAppend, Rows(data, 64, 0, 3)).ok());
  o.format = Format::kPrecomputed;
  EXPECT_ERROR(CreateStream(Path("a.zarr"), spec, o), ErrorKind::kAlreadyExists, "a Zarr array", "not precomputed");
  o.format.reset();
  ASSERT_TRUE(Stream(Path("f.h5"), Uint16({0, 8, 8}, {4, 8, 8}), Mode::kCreate, Rows(data, 64, 0, 3)).ok());
  EXPECT_ERROR(CreateStream(Path("f.h5"), ArraySpec{}, o), ErrorKind::kUnsupported, "continuing hdf5 arrays");
  ArraySpec image = Uint16({8, 8, 8}, {4, 4, 4});
  image.pyramid.levels = 2;
  ASSERT_TRUE(Stream(Path("image.zarr"), image, Mode::kCreate, Rows(data, 64, 0, 8)).ok());
  ArraySpec three = image;
  three.pyramid.levels = 3;
  EXPECT_ERROR(CreateStream(Path("image.zarr"), three, o), ErrorKind::kInvalidArgument, "levels: 3",
               "the stored array's 2");
}

TEST_F(AppendStreamTest, ModeAAddsTheScaleAPrecomputedVolumeLacks) {
  const std::vector<uint16_t> data = Values(8 * 64, 5);
  StreamOptions o;
  o.format = Format::kPrecomputed;
  {
    auto s = CreateStream(Path("vol"), Uint16({8, 8, 8}, {4, 4, 4}), o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->Append(Rows(data, 64, 0, 8)).ok());
    ASSERT_TRUE((*s)->Close().ok());
  }
  ArraySpec s1 = Uint16({4, 4, 4}, {4, 4, 4});
  s1.precomputed.scale_key = "s1";
  s1.precomputed.resolution_xyz = {2, 2, 2};
  const std::vector<uint16_t> half = Values(64, 6);
  StreamOptions append;
  append.mode = Mode::kAppend;  // no format named: the volume's
  {
    auto s = CreateStream(Path("vol"), s1, append);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->Append(Rows(half, 16, 0, 4)).ok());
    ASSERT_TRUE((*s)->Close().ok());
  }
  OpenOptions scale1;
  scale1.scale = 1;
  auto a = OpenArray(Path("vol"), scale1);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  std::vector<uint16_t> got(64);
  ASSERT_TRUE((*a)->Read(Hyperslab::All((*a)->shape()), got.data()).ok());
  EXPECT_EQ(got, half);
  auto b = OpenArray(Path("vol"));
  ASSERT_TRUE(b.ok());
  std::vector<uint16_t> got0(data.size());
  ASSERT_TRUE((*b)->Read(Hyperslab::All((*b)->shape()), got0.data()).ok());
  EXPECT_EQ(got0, data);
  // The scale is there now: continuing a precomputed scale is not supported.
  EXPECT_ERROR(CreateStream(Path("vol"), s1, append), ErrorKind::kUnsupported, "continuing", "not supported");
}

// An OME-Zarr pyramid continued: every level ends as one stream of all the frames wrote it (the
// restart row is a shard-row boundary of every level), group and level metadata included.
TEST_F(AppendStreamTest, APyramidContinuedEqualsOneStreamOfAllRows) {
  for (const std::vector<int64_t>& parts : {std::vector<int64_t>{13, 10}, {5, 1, 17}, {16, 7}, {9, 4}}) {
    SCOPED_TRACE(parts.size());
    ArraySpec spec = Uint16({0, 12, 10}, {2, 4, 4}, {2, 2, 2});
    spec.pyramid.levels = parts[0] == 9 ? 1 : 3;  // {9, 4}: a single-level OME-Zarr image
    spec.ome.image = true;
    int64_t total = 0;
    for (int64_t n : parts) total += n;
    const int64_t row = 12 * 10;
    const std::vector<uint16_t> data = Values(total * row, static_cast<uint32_t>(total + parts.size()));
    const std::string tag = std::to_string(parts[0]) + "_" + std::to_string(parts.size());
    // The same name in two folders: the OME image is named after it.
    const std::string whole = Path("whole" + tag + "/img.zarr"), pieces = Path("pieces" + tag + "/img.zarr");
    ASSERT_TRUE(Stream(whole, spec, Mode::kCreate, Rows(data, row, 0, total)).ok());
    int64_t at = 0;
    for (size_t k = 0; k < parts.size(); ++k) {
      const Status st = Stream(pieces, k == 0 ? spec : ArraySpec{}, k == 0 ? Mode::kCreate : Mode::kAppend,
                               Rows(data, row, at, parts[k]));
      ASSERT_TRUE(st.ok()) << st.ToString();
      at += parts[k];
    }
    EXPECT_EQ(Differing(Files(pieces), Files(whole)), std::vector<std::string>{});
  }
}

// An unsharded precomputed scale continued to a given total: the same files as one stream of all
// the rows (the old edge chunk files are gone), and the stored rows readable while it runs.
TEST_F(AppendStreamTest, APrecomputedScaleContinuedEqualsOneStreamOfAllRows) {
  for (const std::vector<int64_t>& parts : {std::vector<int64_t>{13, 10}, {8, 3, 9}}) {
    SCOPED_TRACE(parts[0]);
    int64_t total = 0;
    for (int64_t n : parts) total += n;
    const int64_t row = 12 * 10;
    const std::vector<uint16_t> data = Values(total * row, static_cast<uint32_t>(total * 3));
    StreamOptions o;
    o.format = Format::kPrecomputed;
    o.threads = 2;
    const std::string tag = std::to_string(parts[0]);
    const std::string whole = Path("whole" + tag), pieces = Path("pieces" + tag);
    {
      auto s = CreateStream(whole, Uint16({total, 12, 10}, {4, 4, 4}), o);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      ASSERT_TRUE((*s)->Append(Rows(data, row, 0, total)).ok());
      ASSERT_TRUE((*s)->Close().ok());
    }
    int64_t at = 0;
    for (size_t k = 0; k < parts.size(); ++k) {
      o.mode = k == 0 ? Mode::kCreate : Mode::kAppend;
      auto s = CreateStream(pieces, Uint16({at + parts[k], 12, 10}, {4, 4, 4}), o);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      if (k > 0) {  // the stored rows read back while it runs
        auto a = OpenArray(pieces);
        ASSERT_TRUE(a.ok());
        EXPECT_EQ((*a)->shape()[0], at);
      }
      ASSERT_TRUE((*s)->Append(Rows(data, row, at, parts[k])).ok());
      ASSERT_TRUE((*s)->Close().ok());
      at += parts[k];
    }
    EXPECT_EQ(Differing(Files(pieces), Files(whole)), std::vector<std::string>{});
    // Without the total: an error naming the shape.
    o.mode = Mode::kAppend;
    EXPECT_ERROR(CreateStream(pieces, ArraySpec{}, o), ErrorKind::kInvalidArgument, "shape", "fixed shape");
  }
}

// A sharded precomputed scale (identity Morton boxes and murmurhash3, raw and
// compressed_segmentation, gzip) continued to totals whose chunk grid keeps its compressed Morton
// bits: the same files as one stream of all the rows (the re-fed shard row replaced, murmurhash
// shards merged with their stored chunks), and the stored rows readable while it runs.
TEST_F(AppendStreamTest, AShardedPrecomputedScaleContinuedEqualsOneStreamOfAllRows) {
  struct Case {
    std::string hash, encoding;
    bool gzip;
    std::vector<int64_t> parts;  // 5 to 8 chunks of 4 rows along z: 3 bits of Morton code throughout
  };
  const std::vector<Case> cases = {{"identity", "raw", false, {19, 10}},
                                   {"identity", "compressed_segmentation", true, {17, 3, 9}},
                                   {"identity", "raw", false, {20, 12}},
                                   {"murmurhash3_x86_128", "raw", true, {19, 10}},
                                   {"murmurhash3_x86_128", "compressed_segmentation", false, {17, 3, 9}},
                                   {"murmurhash3_x86_128", "raw", false, {24, 8}}};
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    SCOPED_TRACE(k.hash + " " + k.encoding + " " + std::to_string(k.parts[0]));
    int64_t total = 0;
    for (int64_t n : k.parts) total += n;
    const int64_t row = 12 * 10 * 2;  // uint32 voxels as pairs of uint16
    const std::vector<uint16_t> data = Values(total * row, static_cast<uint32_t>(total * 7 + c));
    auto spec = [&](int64_t rows) {
      ArraySpec s = Uint16({rows, 12, 10}, {4, 4, 4}, {2, 2, 2});
      s.dtype = DataType::kUInt32;
      s.precomputed.hash = k.hash;
      s.precomputed.encoding = k.encoding;
      if (k.gzip) s.codec = Codec::kGzip;
      return s;
    };
    StreamOptions o;
    o.format = Format::kPrecomputed;
    o.threads = 2;
    const std::string whole = Path("whole" + std::to_string(c)), pieces = Path("pieces" + std::to_string(c));
    {
      auto s = CreateStream(whole, spec(total), o);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      ASSERT_TRUE((*s)->Append(Rows(data, row, 0, total)).ok());
      ASSERT_TRUE((*s)->Close().ok());
    }
    int64_t at = 0;
    for (size_t p = 0; p < k.parts.size(); ++p) {
      o.mode = p == 0 ? Mode::kCreate : Mode::kAppend;
      auto s = CreateStream(pieces, spec(at + k.parts[p]), o);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      ASSERT_TRUE((*s)->Append(Rows(data, row, at, k.parts[p])).ok());
      if (p > 0) {  // the stored rows read back, exactly, while it runs
        auto a = OpenArray(pieces);
        ASSERT_TRUE(a.ok()) << a.status().ToString();
        ASSERT_EQ((*a)->shape()[0], at);
        std::vector<uint16_t> got(static_cast<size_t>(at * row));
        ASSERT_TRUE((*a)->Read(Hyperslab::All((*a)->shape()), got.data()).ok());
        EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin()));
      }
      const Status closed = (*s)->Close();
      ASSERT_TRUE(closed.ok()) << closed.ToString();
      at += k.parts[p];
    }
    EXPECT_EQ(Differing(Files(pieces), Files(whole)), std::vector<std::string>{});
  }
}

// Growing a sharded scale's grid past a power of two of chunks along z changes its compressed
// Morton codes (every stored chunk would move): refused before anything is written.
TEST_F(AppendStreamTest, AShardedPrecomputedScaleWhoseMortonBitsChangeIsRefused) {
  for (const std::string hash : {"identity", "murmurhash3_x86_128"}) {
    SCOPED_TRACE(hash);
    ArraySpec spec = Uint16({13, 12, 10}, {4, 4, 4}, {2, 2, 2});
    spec.precomputed.hash = hash;
    const std::vector<uint16_t> data = Values(16 * 120, 9);
    StreamOptions o;
    o.format = Format::kPrecomputed;
    const std::string vol = Path("vol_" + hash);
    auto stream_rows = [&](int64_t first, int64_t n) {
      auto s = CreateStream(vol, spec, o);
      if (!s.ok()) return s.status();
      TESSERA_RETURN_IF_ERROR((*s)->Append(Rows(data, 120, first, n)));
      return (*s)->Close();
    };
    ASSERT_TRUE(stream_rows(0, 13).ok());
    const std::map<std::string, std::string> before = Files(vol);
    spec.shape[0] = 17;  // 4 chunks (2 bits) -> 5 (3 bits)
    o.mode = Mode::kAppend;
    EXPECT_ERROR(CreateStream(vol, spec, o), ErrorKind::kUnsupported, "shape", "4 chunks along z", "to 5",
                 "from 2 to 3", "at most 16 rows");
    EXPECT_EQ(Differing(Files(vol), before), std::vector<std::string>{});
    spec.shape[0] = 16;  // still 4 chunks: continued
    const Status continued = stream_rows(13, 3);
    ASSERT_TRUE(continued.ok()) << continued.ToString();
    auto a = OpenArray(vol);
    ASSERT_TRUE(a.ok());
    std::vector<uint16_t> got(data.size());
    ASSERT_TRUE((*a)->Read(Hyperslab::All((*a)->shape()), got.data()).ok());
    EXPECT_EQ(got, data);
  }
}

// A sharded scale's continuation aborted (or killed) while it re-feeds and adds rows keeps every
// stored row readable and exact: identity boxes are replaced by complete ones (the ones holding
// the stored edge chunk only at Close), murmurhash3 shards only at Close.
TEST_F(AppendStreamTest, AnAbortedShardedPrecomputedContinuationKeepsTheStoredRows) {
  for (const std::string hash : {"identity", "murmurhash3_x86_128"}) {
    SCOPED_TRACE(hash);
    ArraySpec spec = Uint16({19, 12, 10}, {4, 4, 4}, {2, 2, 2});
    spec.precomputed.hash = hash;
    const std::vector<uint16_t> data = Values(32 * 120, 11);
    StreamOptions o;
    o.format = Format::kPrecomputed;
    o.threads = 2;
    const std::string vol = Path("vol_" + hash);
    {
      auto s = CreateStream(vol, spec, o);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      ASSERT_TRUE((*s)->Append(Rows(data, 120, 0, 19)).ok());
      ASSERT_TRUE((*s)->Close().ok());
    }
    spec.shape[0] = 32;
    o.mode = Mode::kAppend;
    {
      auto s = CreateStream(vol, spec, o);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      ASSERT_TRUE((*s)->Append(Rows(data, 120, 19, 12)).ok());  // one row short: every shard row but the last is complete
      ASSERT_TRUE((*s)->Flush().ok());
      (*s)->Abort();
    }
    auto a = OpenArray(vol);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ASSERT_EQ((*a)->shape()[0], 19);
    std::vector<uint16_t> got(19 * 120);
    const Status read = (*a)->Read(Hyperslab::All((*a)->shape()), got.data());
    ASSERT_TRUE(read.ok()) << read.ToString();
    EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin()));
    for (const auto& [key, bytes] : Files(vol)) EXPECT_EQ(key.find(".part-"), std::string::npos) << key;
  }
}

// A precomputed pyramid (the scales of one info) continued to a given total: every scale ends as
// one stream of all the rows wrote it, info included. The method is found from the stored scales
// (the info records none): mean for images, mode for compressed_segmentation, max when the first
// stream asked for it. A scale of fewer rows than a chunk (its chunks cut to them) is written anew
// from its own stored rows; its old chunk files go.
TEST_F(AppendStreamTest, APrecomputedPyramidContinuedEqualsOneStreamOfAllRows) {
  struct Case {
    std::string encoding;
    std::optional<pyramid::DownsampleMethod> method;
    std::vector<int64_t> shards;
    std::vector<int64_t> parts;
    bool keeps_first_chunks = false;  // scale s0's first chunk row is below every restart row
  };
  const std::vector<Case> cases = {
      {"raw", std::nullopt, {}, {13, 10}},
      {"raw", std::nullopt, {}, {5, 1, 17}},
      // s2's chunks are cut to its 3 rows: it is written anew, s0 and s1 restart at row 8 and 4.
      {"raw", std::nullopt, {}, {9, 6}, true},
      {"raw", std::nullopt, {}, {10, 3}, true},
      {"raw", pyramid::DownsampleMethod::kMax, {}, {16, 7, 9}},
      {"compressed_segmentation", std::nullopt, {}, {11, 14}},
      {"raw", pyramid::DownsampleMethod::kMin, {1, 2, 2}, {33, 17}},  // every scale holds a chunk of rows
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    SCOPED_TRACE(k.encoding + " case " + std::to_string(c));
    int64_t total = 0;
    for (int64_t n : k.parts) total += n;
    const int64_t row = 12 * 10 * 2;  // uint32 voxels as pairs of uint16
    std::vector<uint16_t> data = Values(total * row, static_cast<uint32_t>(total * 11 + c));
    for (size_t i = 0; i < data.size(); ++i)  // labels: runs of a few values, so that mode means something
      if (k.encoding != "raw") data[i] = i % 2 ? 0 : static_cast<uint16_t>(data[i] % 3);
    auto spec = [&](int64_t rows) {
      ArraySpec s = Uint16({rows, 12, 10}, {4, 4, 4}, k.shards);
      s.dtype = DataType::kUInt32;
      s.precomputed.encoding = k.encoding;
      s.pyramid.levels = 3;
      s.pyramid.method = k.method;
      return s;
    };
    StreamOptions o;
    o.format = Format::kPrecomputed;
    o.threads = 2;
    const std::string whole = Path("whole" + std::to_string(c)), pieces = Path("pieces" + std::to_string(c));
    {
      auto s = CreateStream(whole, spec(total), o);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      ASSERT_TRUE((*s)->Append(Rows(data, row, 0, total)).ok());
      ASSERT_TRUE((*s)->Close().ok());
    }
    int64_t at = 0;
    const fs::path first_chunk = fs::path(pieces) / "s0" / "0-4_0-4_0-4";
    fs::file_time_type first_chunk_time{};
    for (size_t p = 0; p < k.parts.size(); ++p) {
      if (p == 1 && k.keeps_first_chunks) first_chunk_time = fs::last_write_time(first_chunk);
      o.mode = p == 0 ? Mode::kCreate : Mode::kAppend;
      ArraySpec given = p == 0 ? spec(at + k.parts[p]) : Uint16({at + k.parts[p], 12, 10}, {});
      if (p > 0) given.dtype = DataType::kUInt32;
      auto s = CreateStream(pieces, given, o);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      ASSERT_TRUE((*s)->Append(Rows(data, row, at, k.parts[p])).ok());
      if (p > 0) {  // every scale reads back as stored while it runs
        for (int level = 0; level < 3; ++level) {
          OpenOptions open;
          open.level = level;
          auto a = OpenArray(pieces, open), w = OpenArray(whole, open);
          ASSERT_TRUE(a.ok() && w.ok()) << a.status().ToString();
          ASSERT_EQ((*a)->shape()[0], (at + (int64_t{1} << level) - 1) >> level);
          const int64_t rows = at >> level;  // a last row reducing an incomplete group differs from the whole's
          std::vector<uint32_t> got(static_cast<size_t>(rows * (*a)->shape()[1] * (*a)->shape()[2]));
          std::vector<uint32_t> want(got.size());
          Hyperslab sel = Hyperslab::All((*w)->shape());
          sel.dims[0] = {0, 1, rows};
          Hyperslab mine = Hyperslab::All((*a)->shape());
          mine.dims[0] = {0, 1, rows};
          ASSERT_TRUE((*a)->Read(mine, got.data()).ok());
          ASSERT_TRUE((*w)->Read(sel, want.data()).ok());
          EXPECT_EQ(got, want) << "level " << level;
        }
      }
      const Status closed = (*s)->Close();
      ASSERT_TRUE(closed.ok()) << closed.ToString();
      at += k.parts[p];
    }
    EXPECT_EQ(Differing(Files(pieces), Files(whole)), std::vector<std::string>{});
    if (k.keeps_first_chunks) EXPECT_EQ(fs::last_write_time(first_chunk), first_chunk_time);
  }
}

// What a precomputed pyramid cannot be continued as: a method that does not reproduce its
// scales, scales that are not a pyramid's, a sharded scale whose chunks would change shape.
// Each is refused before anything is written, naming why.
TEST_F(AppendStreamTest, APrecomputedPyramidThatCannotBeContinuedIsRefused) {
  const std::vector<uint16_t> data = Values(20 * 12 * 10, 21);
  StreamOptions o;
  o.format = Format::kPrecomputed;
  auto make = [&](const std::string& name, ArraySpec spec) {
    auto s = CreateStream(Path(name), spec, o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->Append(Rows(data, 120, 0, spec.shape[0])).ok());
    ASSERT_TRUE((*s)->Close().ok());
  };
  ArraySpec mean = Uint16({20, 12, 10}, {4, 4, 4});
  mean.pyramid.levels = 2;
  make("mean", mean);
  ArraySpec sharded = Uint16({6, 12, 10}, {4, 4, 4}, {1, 2, 2});
  sharded.pyramid.levels = 2;
  make("sharded", sharded);
  const std::map<std::string, std::string> mean_files = Files(Path("mean")), sharded_files = Files(Path("sharded"));
  StreamOptions append = o;
  append.mode = Mode::kAppend;
  ArraySpec more = Uint16({30, 12, 10}, {});
  more.pyramid.method = pyramid::DownsampleMethod::kMax;
  EXPECT_ERROR(CreateStream(Path("mean"), more, append), ErrorKind::kInvalidArgument, "method", "max does not reproduce");
  more.pyramid.method = pyramid::DownsampleMethod::kMean;
  EXPECT_TRUE(CreateStream(Path("mean"), more, append).ok());  // opened and dropped: aborted, nothing changes
  // Level 1 rewritten as if another tool had put something else there.
  {
    OpenOptions r_plus;
    r_plus.mode = Mode::kReadWrite;
    r_plus.level = 1;
    auto a = OpenArray(Path("mean"), r_plus);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    const std::vector<uint16_t> noise = Values(10 * 6 * 5, 99);
    ASSERT_TRUE((*a)->Write(Hyperslab::All((*a)->shape()), noise.data()).ok());
  }
  const std::map<std::string, std::string> noisy = Files(Path("mean"));
  more.pyramid.method.reset();
  EXPECT_ERROR(CreateStream(Path("mean"), more, append), ErrorKind::kUnsupported, "not the downsampling of one another");
  EXPECT_EQ(Differing(Files(Path("mean")), noisy), std::vector<std::string>{});
  EXPECT_NE(Differing(noisy, mean_files), std::vector<std::string>{});
  // Level 1 of the sharded pyramid has 3 rows, chunks of 3: at 16 rows its chunks hold 4.
  EXPECT_ERROR(CreateStream(Path("sharded"), Uint16({16, 12, 10}, {}), append), ErrorKind::kUnsupported,
               "level 1's chunks hold 3 rows", "every stored chunk of its shards");
  EXPECT_EQ(Differing(Files(Path("sharded")), sharded_files), std::vector<std::string>{});
}

// The crash window of a sharded continuation: every shard file stored, the info still giving the
// stored rows (Close writes it last). The shard holding the old edge chunk now holds it grown to
// the new rows; the stored rows still read back exactly (the chunk is cut to the info's extent),
// and running the continuation again completes the volume to one stream's files.
TEST_F(AppendStreamTest, ACrashBetweenAContinuationsShardsAndItsInfoKeepsTheStoredRows) {
  for (const std::string hash : {"identity", "murmurhash3_x86_128"})
    for (const std::string encoding : {"raw", "compressed_segmentation"}) {
      SCOPED_TRACE(hash + " " + encoding);
      const int64_t stored = 19, total = 29, row = 12 * 10 * 2;  // uint32 voxels as pairs of uint16
      const std::vector<uint16_t> data = Values(total * row, 31);
      auto spec = [&](int64_t rows) {
        ArraySpec s = Uint16({rows, 12, 10}, {4, 4, 4}, {2, 2, 2});
        s.dtype = DataType::kUInt32;
        s.precomputed.hash = hash;
        s.precomputed.encoding = encoding;
        return s;
      };
      auto write = [&](const std::string& path, int64_t rows, Mode mode, int64_t first) -> Status {
        StreamOptions o;
        o.format = Format::kPrecomputed;
        o.mode = mode;
        TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<tessera::Stream> s, CreateStream(path, spec(rows), o));
        TESSERA_RETURN_IF_ERROR(s->Append(Rows(data, row, first, rows - first)));
        return s->Close();
      };
      const std::string tag = hash.substr(0, 4) + encoding.substr(0, 3);
      const std::string whole = Path("whole" + tag), crashed = Path("crashed" + tag), before = Path("before" + tag);
      ASSERT_TRUE(write(before, stored, Mode::kCreate, 0).ok());
      ASSERT_TRUE(write(whole, total, Mode::kCreate, 0).ok());
      fs::copy(whole, crashed, fs::copy_options::recursive);
      fs::copy_file(fs::path(before) / "info", fs::path(crashed) / "info", fs::copy_options::overwrite_existing);
      auto a = OpenArray(crashed);
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      ASSERT_EQ((*a)->shape()[0], stored);
      std::vector<uint16_t> got(static_cast<size_t>(stored * row));
      const Status read = (*a)->Read(Hyperslab::All((*a)->shape()), got.data());
      ASSERT_TRUE(read.ok()) << read.ToString();
      EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin()));
      const Status rerun = write(crashed, total, Mode::kAppend, stored);
      ASSERT_TRUE(rerun.ok()) << rerun.ToString();
      EXPECT_EQ(Differing(Files(crashed), Files(whole)), std::vector<std::string>{});
    }
}

// A multi-channel volume's stream grows dimension 0, its channel; more channels would rewrite every
// chunk of every scale, so mode a refuses it, naming why, and leaves it as it was.
TEST_F(AppendStreamTest, AMultiChannelPrecomputedVolumeIsNotContinued) {
  const std::vector<uint16_t> data = Values(3 * 8 * 64, 12);
  StreamOptions o;
  o.format = Format::kPrecomputed;
  const std::string vol = Path("vol");
  {
    auto s = CreateStream(vol, Uint16({2, 8, 8, 8}, {4, 4, 4}), o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->Append(Rows(data, 8 * 64, 0, 2)).ok());
    ASSERT_TRUE((*s)->Close().ok());
  }
  const std::map<std::string, std::string> before = Files(vol);
  o.mode = Mode::kAppend;
  EXPECT_ERROR(CreateStream(vol, Uint16({3, 8, 8, 8}, {4, 4, 4}), o), ErrorKind::kUnsupported, "shape",
               "multi-channel volume (shape 2,8,8,8)", "dimension 0, the channel", "mode w");
  EXPECT_ERROR(CreateStream(vol, ArraySpec{}, o), ErrorKind::kUnsupported, "multi-channel");
  EXPECT_EQ(Differing(Files(vol), before), std::vector<std::string>{});
}

}  // namespace
}  // namespace tessera
