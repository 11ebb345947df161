// HDF5 files read from a store (an object on S3 or HTTP): the same values as from the local file,
// the file's structures fetched in few block requests, chunk data in one range request each (only
// of the chunks a selection touches), and a truncated object an error naming the object and the
// byte range.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "cpp_support/status_matchers.h"
#include "tessera/hdf5/h5_raw_file.h"
#include "tessera/hdf5/h5_reader.h"
#include "tessera/hdf5/h5_writer.h"
#include "tessera/read/selection_read.h"
#include "cpp_support/selection_helpers.h"
#include "cpp_support/store_helpers.h"

namespace tessera::hdf5 {
namespace {

// A file with a 40 x 36 uint16 dataset in 10 x 9 chunks (shuffle + deflate) and one 600 x 600
// uint8 dataset of incompressible 300 x 300 chunks (larger than a cache block).
Bytes MakeFile() {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tessera_h5s_" + std::to_string(::getpid()) + ".h5")).string();
  auto w = H5Writer::Create(path);
  EXPECT_TRUE(w.ok());
  DatasetOptions small;
  small.dtype = DataType::kUInt16;
  small.shape = {40, 36};
  small.chunk_shape = {10, 9};
  small.filters = {ShuffleFilter(2), DeflateFilter(4)};
  auto a = (*w)->CreateDataset("/grp/small", small);
  EXPECT_TRUE(a.ok());
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      Bytes chunk((*a)->chunk_bytes());
      for (size_t k = 0; k < chunk.size(); ++k) chunk[k] = static_cast<uint8_t>(k * 7 + i * 31 + j * 5);
      EXPECT_TRUE((*a)->WriteChunk({i, j}, chunk).ok());
    }
  DatasetOptions big;
  big.dtype = DataType::kUInt8;
  big.shape = {600, 600};
  big.chunk_shape = {300, 300};
  auto b = (*w)->CreateDataset("/big", big);
  EXPECT_TRUE(b.ok());
  uint32_t x = 12345;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      Bytes chunk((*b)->chunk_bytes());
      for (uint8_t& v : chunk) v = static_cast<uint8_t>((x = x * 1103515245 + 12345) >> 16);
      EXPECT_TRUE((*b)->WriteChunk({i, j}, chunk).ok());
    }
  EXPECT_TRUE((*w)->Close().ok());
  std::ifstream f(path, std::ios::binary);
  Bytes bytes(std::istreambuf_iterator<char>(f), {});
  std::filesystem::remove(path);
  return bytes;
}

Result<Bytes> ReadDataset(std::shared_ptr<RawFile> file, const std::string& name) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Hdf5File> h5, Hdf5File::Open(std::move(file)));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Hdf5Dataset> ds, h5->OpenDataset(name));
  Bytes out(static_cast<size_t>(Hyperslab::All(ds->shape()).NumElements()) * ItemSize(ds->dtype()));
  TESSERA_RETURN_IF_ERROR(ReadHyperslab(*ds, Hyperslab::All(ds->shape()), out.data()));
  return out;
}

TEST(Hdf5StoreRead, SameValuesAsTheLocalFileInFewRequests) {
  const Bytes bytes = MakeFile();
  const std::string local = testing::TempDir() + "/local.h5";
  std::ofstream(local, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  auto store = std::make_shared<store_test::CountingStore>();
  ASSERT_TRUE(store->Set("f.h5", bytes).ok());

  for (const std::string name : {"/grp/small", "/big"}) {
    auto local_file = RawFile::Open(local);
    ASSERT_TRUE(local_file.ok());
    Result<Bytes> expected = ReadDataset(*local_file, name);
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    store->requests = 0;
    auto file = RawFile::Open(store, "f.h5");
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_EQ((*file)->path(), "counted://f.h5");
    EXPECT_TRUE(LooksLikeHdf5(**file));
    Result<Bytes> got = ReadDataset(*file, name);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, *expected) << name;
    // The size, the superblock's block, the blocks of the headers and chunk index (written at
    // the end of the file); the big dataset's 4 chunks of 90000 bytes are a range request each.
    EXPECT_LE(store->requests.load(), name == "/big" ? 4 + 4 : 4) << name;
  }
}

TEST(Hdf5StoreRead, TruncatedOrMissingObjectsAreClearErrors) {
  const Bytes bytes = MakeFile();
  auto store = std::make_shared<store_test::CountingStore>();
  for (size_t keep : {size_t{0}, size_t{7}, size_t{100}, bytes.size() / 2, bytes.size() - 1}) {
    ASSERT_TRUE(store->Set("cut.h5", ByteView(bytes).first(keep)).ok());
    auto file = RawFile::Open(store, "cut.h5");
    ASSERT_TRUE(file.ok());
    Result<Bytes> got = ReadDataset(*file, "/big");
    if (keep < 8) {  // not even the signature
      EXPECT_ERROR(got, ErrorKind::kInvalidArgument, "counted://cut.h5", "not an HDF5 file") << "kept " << keep;
    } else {  // shorter than the superblock says: the object's size
      EXPECT_ERROR(got, ErrorKind::kCorruptData, "counted://cut.h5", "truncated", std::to_string(keep) + " bytes")
          << "kept " << keep;
    }
  }
  EXPECT_ERROR(RawFile::Open(store, "absent.h5"), ErrorKind::kNotFound, "counted://absent.h5");
}


// A file with one 900 x 1200 uint8 dataset "/data" in 300 x 300 chunks (a 3 x 4 grid) of random,
// unfiltered bytes: each chunk (90000 bytes, more than a cache block) is read in its own range
// request, and its place in the file is found by its bytes.
struct BigChunkFile {
  Bytes bytes;
  std::map<std::vector<int64_t>, Bytes> chunks;                       // by grid position
  std::map<std::vector<int64_t>, std::pair<uint64_t, uint64_t>> at;  // its byte range in the file
};
BigChunkFile MakeBigChunkFile() {
  BigChunkFile f;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tessera_h5big_" + std::to_string(::getpid()) + ".h5")).string();
  auto w = H5Writer::Create(path);
  EXPECT_TRUE(w.ok());
  DatasetOptions o;
  o.dtype = DataType::kUInt8;
  o.shape = {900, 1200};
  o.chunk_shape = {300, 300};
  auto ds = (*w)->CreateDataset("/data", o);
  EXPECT_TRUE(ds.ok());
  std::mt19937 rng(4);
  for (const std::vector<int64_t>& c : selection_test::CrossProduct({{0, 1, 2}, {0, 1, 2, 3}})) {
    Bytes chunk(300 * 300);
    for (uint8_t& v : chunk) v = static_cast<uint8_t>(rng());
    EXPECT_TRUE((*ds)->WriteChunk(c, chunk).ok());
    f.chunks[c] = std::move(chunk);
  }
  EXPECT_TRUE((*w)->Close().ok());
  std::ifstream in(path, std::ios::binary);
  f.bytes.assign(std::istreambuf_iterator<char>(in), {});
  std::filesystem::remove(path);
  for (const auto& [c, chunk] : f.chunks) {
    auto it = std::search(f.bytes.begin(), f.bytes.end(), chunk.begin(), chunk.end());
    EXPECT_NE(it, f.bytes.end()) << selection_test::Join(c);
    const uint64_t begin = static_cast<uint64_t>(it - f.bytes.begin());
    EXPECT_EQ(std::search(it + 1, f.bytes.end(), chunk.begin(), chunk.end()), f.bytes.end());
    f.at[c] = {begin, begin + chunk.size()};
  }
  return f;
}

// Opening the file and reading a selection asks for the object's size, blocks of the file's
// structures (the superblock, headers, chunk index: each block holds bytes that are no chunk's),
// and then, per chunk the selection touches, exactly that chunk's bytes: nothing of the others.
TEST(Hdf5StoreRead, AReadFetchesOnlyTheTouchedChunksBesidesTheMetadata) {
  const BigChunkFile f = MakeBigChunkFile();
  auto store = std::make_shared<store_test::CountingStore>();
  ASSERT_TRUE(store->Set("f.h5", f.bytes).ok());
  const uint64_t size = f.bytes.size();
  auto in_a_chunk = [&](uint64_t pos) {
    for (const auto& [c, range] : f.at)
      if (pos >= range.first && pos < range.second) return true;
    return false;
  };
  const std::vector<int64_t> shape = {900, 1200}, chunk = {300, 300};
  std::vector<std::string> exprs = {"310:320, 460:470",   // inside chunk (1, 1)
                                    "::600, 100::600",    // rows 0 600, columns 100 700: chunks 0 2 x 0 2
                                    "899, ::-250",        // chunk row 2, every chunk column
                                    "450, 1150", ""};
  std::mt19937 rng(8);
  for (int t = 0; t < 20; ++t) {
    const int64_t r0 = rng() % 900, c0 = rng() % 1200;
    exprs.push_back(std::to_string(r0) + ":" + std::to_string(r0 + 1 + rng() % (900 - r0)) + ":" +
                    std::to_string(1 + rng() % 400) + ", " + std::to_string(c0) + "::" + std::to_string(1 + rng() % 700));
  }
  for (const std::string& expr : exprs) {
    SCOPED_TRACE(expr);
    store->ClearRequests();
    auto file = RawFile::Open(store, "f.h5");
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    auto h5 = Hdf5File::Open(*file);
    ASSERT_TRUE(h5.ok()) << h5.status().ToString();
    auto ds = (*h5)->OpenDataset("/data");
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    Result<Hyperslab> sel = ParseSliceExpression(expr, shape);
    ASSERT_TRUE(sel.ok());
    Bytes out(static_cast<size_t>(sel->NumElements()));
    ASSERT_TRUE(ReadHyperslab(**ds, *sel, out.data()).ok());
    for (int64_t i = 0; i < sel->NumElements(); ++i) {
      const int64_t r = sel->dims[0].start + (i / sel->dims[1].count) * sel->dims[0].step;
      const int64_t c = sel->dims[1].start + (i % sel->dims[1].count) * sel->dims[1].step;
      ASSERT_EQ(out[i], f.chunks.at({r / 300, c / 300})[(r % 300) * 300 + c % 300]) << "element " << i;
    }

    std::multiset<std::pair<uint64_t, uint64_t>> expected_chunks, got_chunks;
    for (const std::vector<int64_t>& c : selection_test::ChunksOf(*sel, chunk)) expected_chunks.insert(f.at.at(c));
    int blocks = 0;
    for (const store_test::StoreRequest& r : store->SortedRequests()) {
      EXPECT_EQ(r.key, "f.h5");
      if (r.op == store_test::StoreRequest::Op::kSize) continue;
      ASSERT_EQ(r.op, store_test::StoreRequest::Op::kGetRange) << r;
      bool is_chunk = false;
      for (const auto& [c, range] : f.at) is_chunk = is_chunk || range == std::make_pair(r.begin, r.end);
      if (is_chunk) {
        got_chunks.insert({r.begin, r.end});
        continue;
      }
      // A block of the cache, fetched for the structures it holds.
      ++blocks;
      EXPECT_EQ(r.begin % RawFile::kBlockBytes, 0u) << r;
      EXPECT_EQ(r.end, std::min(r.begin + RawFile::kBlockBytes, size)) << r;
      bool holds_metadata = false;
      for (uint64_t pos = r.begin; pos < r.end && !holds_metadata; ++pos) holds_metadata = !in_a_chunk(pos);
      EXPECT_TRUE(holds_metadata) << r << " holds chunk data only";
    }
    EXPECT_EQ(got_chunks, expected_chunks);
    EXPECT_LE(blocks, 3);
  }
}

}  // namespace
}  // namespace tessera::hdf5
