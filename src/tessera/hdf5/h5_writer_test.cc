#include "tessera/hdf5/h5_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cpp_support/status_matchers.h"
#include "tessera/hdf5/h5_structures.h"
#include "tessera/store/file_store.h"
#include "tessera/store/memory_store.h"

namespace tessera::hdf5 {
namespace {

std::string TempPath(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessera_h5w_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

uint16_t DecodeFixed16LE(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

Bytes ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

TEST(Hdf5Structures, SuperblockV0HandChecked) {
  SymbolEntry root;
  root.header_address = 0x60;
  root.is_group = true;
  root.btree_address = 0x88;
  root.heap_address = 0x2a8;
  const Bytes b = EncodeSuperblockV0(0x1000, root);
  ASSERT_EQ(b.size(), kSuperblockV0Bytes);
  const Bytes expected_head = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0, 0, 8, 8, 0, 4, 0, 16, 0, 0, 0, 0, 0};
  EXPECT_EQ(Bytes(b.begin(), b.begin() + 24), expected_head);
  EXPECT_EQ(DecodeFixed64LE(b.data() + 40), 0x1000u);                 // end of file
  EXPECT_EQ(DecodeFixed64LE(b.data() + 56 + 8), 0x60u);               // root object header
  EXPECT_EQ(DecodeFixed32LE(b.data() + 56 + 16), 1u);                 // cache type
  EXPECT_EQ(DecodeFixed64LE(b.data() + 56 + 24), 0x88u);              // B-tree
  EXPECT_EQ(DecodeFixed64LE(b.data() + 56 + 32), 0x2a8u);             // heap
}

TEST(Hdf5Structures, MessagesHandChecked) {
  EXPECT_EQ(*EncodeNumericDatatype(DataType::kInt16), (Bytes{0x10, 0x08, 0, 0, 2, 0, 0, 0, 0, 0, 16, 0}));
  EXPECT_EQ(*EncodeNumericDatatype(DataType::kFloat32),
            (Bytes{0x11, 0x20, 31, 0, 4, 0, 0, 0, 0, 0, 32, 0, 23, 8, 0, 23, 127, 0, 0, 0}));
  EXPECT_ERROR(EncodeNumericDatatype(DataType::kBool), ErrorKind::kUnsupported, "HDF5 writer", "data type bool");
  EXPECT_EQ(EncodeChunkedLayout(0x1234, {4, 5}, 2),
            (Bytes{3, 2, 3, 0x34, 0x12, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0}));
  const Bytes space = EncodeDataspace({10}, {kUnlimited});
  EXPECT_EQ(space, (Bytes{1, 1, 1, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                          0xff}));
  // deflate level 1: id 1, name "deflate" padded to 8, flags optional, one value + 4 padding bytes.
  const Bytes pipeline = EncodeFilterPipeline({DeflateFilter(1)});
  EXPECT_EQ(pipeline, (Bytes{1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 8, 0, 1, 0, 1, 0, 'd', 'e', 'f', 'l', 'a', 't', 'e', 0, 1,
                             0, 0, 0, 0, 0, 0, 0}));
  const Bytes header = EncodeObjectHeaderV1({{MessageType::kSymbolTable, EncodeSymbolTableMessage(0x88, 0x2a8)}});
  EXPECT_EQ(header.size(), 16u + 8 + 16);
  EXPECT_EQ(DecodeFixed32LE(header.data() + 8), 24u);  // header size counts the messages only
}

TEST(Hdf5Structures, LocalHeapAndSymbolNode) {
  std::vector<uint64_t> offsets;
  Bytes segment;
  const Bytes heap = EncodeLocalHeap({"a", "long_name_here"}, 0x500, &offsets, &segment);
  EXPECT_EQ(offsets, (std::vector<uint64_t>{8, 16}));
  EXPECT_EQ(segment.size(), 32u);
  EXPECT_EQ(DecodeFixed64LE(heap.data() + 8), 32u);
  EXPECT_EQ(DecodeFixed64LE(heap.data() + 24), 0x500u);
  EXPECT_EQ(EncodeSymbolNode({SymbolEntry{8, 0x320}}).size(), SymbolNodeBytes());
  EXPECT_EQ(SymbolNodeBytes(), 328u);
  EXPECT_EQ(GroupBTreeNodeBytes(), 544u);
}

TEST(Hdf5ChunkBTree, LevelsGrowPast64Chunks) {
  EXPECT_EQ(ChunkBTreeLevelSizes(1), (std::vector<uint64_t>{1}));
  EXPECT_EQ(ChunkBTreeLevelSizes(64), (std::vector<uint64_t>{1}));
  EXPECT_EQ(ChunkBTreeLevelSizes(65), (std::vector<uint64_t>{2, 1}));
  EXPECT_EQ(ChunkBTreeLevelSizes(200000), (std::vector<uint64_t>{3125, 49, 1}));
}

TEST(Hdf5ChunkBTree, NodesCarrySortedKeysAndSiblings) {
  std::vector<StoredChunk> chunks;
  for (uint64_t i = 130; i-- > 0;) chunks.push_back({{i / 10, i % 10}, 1000 + i, static_cast<uint32_t>(i + 1), 0});
  std::map<uint64_t, Bytes> written;
  uint64_t end = 0;
  auto root = WriteChunkBTree(&chunks, {4, 3}, 0x100, [&](uint64_t a, ByteView b) {
    written[a] = Bytes(b.begin(), b.end());
    return Status::Ok();
  }, &end);
  ASSERT_TRUE(root.ok());
  const uint64_t node = ChunkBTreeNodeBytes(2);
  ASSERT_EQ(written.size(), 4u);  // three leaves, one root
  EXPECT_EQ(*root, 0x100 + 3 * node);
  EXPECT_EQ(end, 0x100 + 4 * node);
  const Bytes& leaf1 = written.at(0x100 + node);
  EXPECT_EQ(leaf1[5], 0);                                // level
  EXPECT_EQ(DecodeFixed16LE(leaf1.data() + 6), 64u);     // entries
  EXPECT_EQ(DecodeFixed64LE(leaf1.data() + 8), 0x100u);  // left sibling
  EXPECT_EQ(DecodeFixed64LE(leaf1.data() + 16), 0x100 + 2 * node);
  // First key of leaf 1: chunk 64 = (6, 4) -> offsets (24, 12, 0), size 65; child address 1064.
  EXPECT_EQ(DecodeFixed32LE(leaf1.data() + 24), 65u);
  EXPECT_EQ(DecodeFixed64LE(leaf1.data() + 32), 24u);
  EXPECT_EQ(DecodeFixed64LE(leaf1.data() + 40), 12u);
  EXPECT_EQ(DecodeFixed64LE(leaf1.data() + 56), 1064u);
  const Bytes& top = written.at(*root);
  EXPECT_EQ(top[5], 1);
  EXPECT_EQ(DecodeFixed16LE(top.data() + 6), 3u);
  // Final key of the root: after chunk (12, 9) -> (52, 30, 0).
  const size_t key = 8 + 8 * 3;
  const uint8_t* final_key = top.data() + 24 + 3 * (key + 8);
  EXPECT_EQ(DecodeFixed64LE(final_key + 8), 52u);
  EXPECT_EQ(DecodeFixed64LE(final_key + 16), 30u);
}

TEST(Hdf5AutoChunk, AboutOneMebibyteAndWithinBounds) {
  EXPECT_EQ(AutoChunkShape({1000, 1000, 1000}, false, 1), (std::vector<int64_t>{102, 102, 102}));
  EXPECT_EQ(AutoChunkShape({0, 512, 512}, true, 2), (std::vector<int64_t>{2, 512, 512}));
  EXPECT_EQ(AutoChunkShape({10, 20}, false, 4), (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(AutoChunkShape({3, 100000000}, false, 8), (std::vector<int64_t>{1, 131072}));
  for (const auto& shape : std::vector<std::vector<int64_t>>{{7, 1, 300000}, {100, 200, 300, 400}, {1 << 30}}) {
    const auto c = AutoChunkShape(shape, false, 4);
    int64_t bytes = 4;
    for (size_t d = 0; d < c.size(); ++d) {
      EXPECT_GE(c[d], 1);
      EXPECT_LE(c[d], shape[d]);
      bytes *= c[d];
    }
    EXPECT_LE(bytes, 2 << 20);
    EXPECT_GE(bytes, 1 << 19);
  }
}

TEST(Hdf5Writer, WritesGroupsDatasetsAndRenamesAtClose) {
  const std::string path = TempPath("basic.h5");
  std::filesystem::remove(path);
  auto w = H5Writer::Create(path);
  ASSERT_TRUE(w.ok());
  DatasetOptions o;
  o.dtype = DataType::kUInt16;
  o.shape = {5, 7};
  o.chunk_shape = {2, 3};
  o.filters = {ShuffleFilter(2), DeflateFilter(1)};
  o.attributes.push_back(Attribute::String("units", "counts"));
  auto ds = (*w)->CreateDataset("/grp/sub/data", o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  EXPECT_ERROR((*w)->CreateDataset("/grp/sub/data", o), ErrorKind::kInvalidArgument, "/grp/sub/data already exists");
  EXPECT_ERROR((*w)->CreateGroup("/grp/sub/data/x"), ErrorKind::kInvalidArgument,
               "/grp/sub/data is a dataset, not a group");
  Bytes chunk((*ds)->chunk_bytes(), 7);
  EXPECT_ERROR((*ds)->WriteChunk({3, 0}, chunk), ErrorKind::kOutOfRange, "/grp/sub/data",
               "chunk coordinate 3 of dimension 0", "chunk grid of 3");
  EXPECT_ERROR((*ds)->WriteChunk({0, 0}, ByteView(chunk).first(3)), ErrorKind::kInvalidArgument, "/grp/sub/data",
               "a chunk holds 12 bytes, got 3");
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j) ASSERT_TRUE((*ds)->WriteChunk({i, j}, chunk).ok());
  EXPECT_FALSE(std::filesystem::exists(path));  // not before Close
  ASSERT_TRUE((*w)->Close().ok());
  const Bytes file = ReadFile(path);
  ASSERT_GT(file.size(), kSuperblockV0Bytes);
  EXPECT_EQ(DecodeFixed64LE(file.data() + 40), file.size());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()),
                          std::filesystem::directory_iterator{}),
            1);  // no temporary left behind
}

// A fresh, empty directory apart from TempPath's (other tests count the files beside theirs).
std::string OwnDir(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tessera_h5w_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Groups, a filtered 2-D dataset and a 1-D one, written chunk by chunk; then Close.
Status WriteSample(H5Writer& w) {
  TESSERA_RETURN_IF_ERROR(w.CreateGroup("/meta", {Attribute::String("note", "sample")}));
  DatasetOptions o;
  o.dtype = DataType::kUInt16;
  o.shape = {9, 10};
  o.chunk_shape = {4, 4};
  o.filters = {ShuffleFilter(2), DeflateFilter(3)};
  TESSERA_ASSIGN_OR_RETURN(H5DatasetWriter * a, w.CreateDataset("/grp/a", o));
  for (int64_t i = 2; i >= 0; --i)
    for (int64_t j = 0; j < 3; ++j) {
      Bytes chunk(a->chunk_bytes());
      for (size_t k = 0; k < chunk.size(); ++k) chunk[k] = static_cast<uint8_t>(k * 3 + i * 17 + j);
      TESSERA_RETURN_IF_ERROR(a->WriteChunk({i, j}, chunk));
    }
  DatasetOptions b;
  b.dtype = DataType::kFloat64;
  b.shape = {5};
  b.chunk_shape = {2};
  TESSERA_ASSIGN_OR_RETURN(H5DatasetWriter * d, w.CreateDataset("/b", b));
  for (int64_t c = 0; c < 3; ++c) TESSERA_RETURN_IF_ERROR(d->WriteChunk({c}, Bytes(d->chunk_bytes(), c + 1)));
  return Status::Ok();
}

// Through a store's writable file the writer stores the same bytes as through a path, and only at
// Close; an abandoned one stores nothing.
TEST(Hdf5Writer, WritesTheSameBytesThroughAStoresWritableFile) {
  const std::string base = OwnDir("store_seam");
  const std::string path = base + "/through_path.h5";
  auto by_path = H5Writer::Create(path);
  ASSERT_TRUE(by_path.ok()) << by_path.status().ToString();
  EXPECT_EQ((*by_path)->path(), path);
  ASSERT_TRUE(WriteSample(**by_path).ok());
  ASSERT_TRUE((*by_path)->Close().ok());
  const Bytes expected = ReadFile(path);
  ASSERT_GT(expected.size(), kSuperblockV0Bytes);

  MemoryStore memory;
  auto file = memory.OpenWritableFile("out/f.h5");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto w = H5Writer::Create(std::move(*file));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ((*w)->path(), "memory://out/f.h5");
  ASSERT_TRUE(WriteSample(**w).ok());
  EXPECT_EQ(*memory.Get("out/f.h5"), std::nullopt);  // not before Close
  ASSERT_TRUE((*w)->Close().ok());
  EXPECT_EQ(*memory.Get("out/f.h5"), expected);
  EXPECT_ERROR((*w)->Close(), ErrorKind::kFailedPrecondition, "memory://out/f.h5", "closed twice");

  const std::string dir = base + "/through_store";
  FileStore files(dir);
  auto on_disk = files.OpenWritableFile("f.h5");
  ASSERT_TRUE(on_disk.ok()) << on_disk.status().ToString();
  auto fw = H5Writer::Create(std::move(*on_disk));
  ASSERT_TRUE(fw.ok());
  ASSERT_TRUE(WriteSample(**fw).ok());
  ASSERT_TRUE((*fw)->Close().ok());
  EXPECT_EQ(ReadFile(dir + "/f.h5"), expected);

  auto abandoned = memory.OpenWritableFile("gone.h5");
  ASSERT_TRUE(abandoned.ok());
  {
    auto aw = H5Writer::Create(std::move(*abandoned));
    ASSERT_TRUE(aw.ok());
    ASSERT_TRUE(WriteSample(**aw).ok());
  }  // destroyed without Close
  EXPECT_EQ(*memory.Get("gone.h5"), std::nullopt);
  EXPECT_ERROR(H5Writer::Create(std::unique_ptr<WritableFile>()), ErrorKind::kInvalidArgument, "no file");
}

// As when the writer opened its temporary file itself: the target's directory must exist.
TEST(Hdf5Writer, MissingDirectoryIsAnIoError) {
  const std::string base = OwnDir("missing_dir");
  const std::string path = base + "/no/such/dir/f.h5";
  EXPECT_ERROR(H5Writer::Create(path), ErrorKind::kIo, path, "cannot create a temporary file beside it",
               "No such file or directory");
  EXPECT_FALSE(std::filesystem::exists(base + "/no"));
  std::ofstream(base + "/plain") << "x";
  EXPECT_ERROR(H5Writer::Create(base + "/plain/f.h5"), ErrorKind::kIo, "Not a directory");
  EXPECT_ERROR(H5Writer::Create(""), ErrorKind::kInvalidArgument, "empty file path");
}

TEST(Hdf5Writer, AbandonLeavesNothing) {
  const std::string path = TempPath("abandoned.h5");
  std::filesystem::remove(path);
  {
    auto w = H5Writer::Create(path);
    ASSERT_TRUE(w.ok());
    DatasetOptions o;
    o.shape = {4};
    ASSERT_TRUE((*w)->CreateDataset("d", o).ok());
  }  // destroyed without Close
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    EXPECT_EQ(e.path().string().find("abandoned"), std::string::npos) << e.path();
}

}  // namespace
}  // namespace tessera::hdf5

namespace tessera::hdf5 {
namespace {

// Writes a file with many groups and datasets for tests/interop/test_hdf5_write_peers.py, which
// runs this test with TESSERA_HDF5_FIXTURE_DIR set and checks the file with h5py and h5dump.
TEST(Hdf5WriterFixtures, ManyGroupsAndDatasets) {
  const char* dir = std::getenv("TESSERA_HDF5_FIXTURE_DIR");
  const std::string path = dir ? std::string(dir) + "/many.h5" : TempPath("many.h5");
  auto file = H5Writer::Create(path);
  ASSERT_TRUE(file.ok());
  H5Writer& w = **file;
  ASSERT_TRUE(w.CreateGroup("/a", {Attribute::String("note", "nested groups")}).ok());
  // 300 datasets in one group: 38 symbol table nodes under a two-level group B-tree.
  for (int i = 0; i < 300; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "/many/d%03d", i);
    DatasetOptions o;
    o.dtype = DataType::kInt32;
    o.shape = {3};
    o.chunk_shape = {2};
    o.attributes.push_back(*Attribute::Numeric("index", DataType::kInt32, {}, Bytes{static_cast<uint8_t>(i),
                                                                                      static_cast<uint8_t>(i >> 8), 0, 0}));
    auto ds = w.CreateDataset(name, o);
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    for (int64_t c = 0; c < 2; ++c) {
      Bytes chunk(8, 0);
      for (int k = 0; k < 2; ++k) EncodeFixed32LE(chunk.data() + 4 * k, static_cast<uint32_t>(i + 2 * c + k));
      ASSERT_TRUE((*ds)->WriteChunk({c}, chunk).ok());
    }
  }
  {  // A deflated float64 dataset three groups down, values 0.5 * flat index.
    DatasetOptions o;
    o.dtype = DataType::kFloat64;
    o.shape = {4, 5};
    o.chunk_shape = {3, 2};
    o.filters = {DeflateFilter(6)};
    auto ds = w.CreateDataset("/a/b/c/deep", o);
    ASSERT_TRUE(ds.ok());
    for (int64_t ci = 0; ci < 2; ++ci)
      for (int64_t cj = 0; cj < 3; ++cj) {
        Bytes chunk(6 * 8);
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < 2; ++j) {
            const double v = 0.5 * static_cast<double>((ci * 3 + i) * 5 + cj * 2 + j);
            std::memcpy(chunk.data() + 8 * (i * 2 + j), &v, 8);
          }
        ASSERT_TRUE((*ds)->WriteChunk({ci, cj}, chunk).ok());
      }
  }
  {  // Never written: reads as its fill value 7.
    DatasetOptions o;
    o.dtype = DataType::kInt16;
    o.shape = {5, 5};
    o.chunk_shape = {2, 2};
    o.fill.bytes = Bytes{7, 0};
    ASSERT_TRUE(w.CreateDataset("/empty", o).ok());
  }
  {  // Only chunk (1, 1) written (all 9s); one chunk written and then removed.
    DatasetOptions o;
    o.dtype = DataType::kUInt8;
    o.shape = {6, 6};
    o.chunk_shape = {3, 3};
    auto ds = w.CreateDataset("/partial", o);
    ASSERT_TRUE(ds.ok());
    ASSERT_TRUE((*ds)->WriteChunk({1, 1}, Bytes(9, 9)).ok());
    ASSERT_TRUE((*ds)->WriteChunk({0, 0}, Bytes(9, 1)).ok());
    (*ds)->RemoveChunk({0, 0});
  }
  ASSERT_TRUE(w.CreateGroup("/empty_group").ok());
  ASSERT_TRUE(w.Close().ok());
}

}  // namespace
}  // namespace tessera::hdf5
