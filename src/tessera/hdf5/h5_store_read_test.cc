// HDF5 files read from a store (an object on S3 or HTTP): the same values as from the local file,
// the file's structures fetched in few block requests, chunk data in one range request each, and
// a truncated object an error naming the object and the byte range.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tessera/hdf5/h5_file.h"
#include "tessera/hdf5/h5_reader.h"
#include "tessera/hdf5/h5_writer.h"
#include "tessera/read/hyperslab.h"
#include "tessera/store/store_test_util.h"

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

Result<Bytes> ReadDataset(std::shared_ptr<H5File> file, const std::string& name) {
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
    auto local_file = H5File::Open(local);
    ASSERT_TRUE(local_file.ok());
    Result<Bytes> expected = ReadDataset(*local_file, name);
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    store->requests = 0;
    auto file = H5File::Open(store, "f.h5");
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
    auto file = H5File::Open(store, "cut.h5");
    ASSERT_TRUE(file.ok());
    Result<Bytes> got = ReadDataset(*file, "/big");
    ASSERT_FALSE(got.ok()) << "kept " << keep;
    EXPECT_NE(got.status().message().find("counted://cut.h5"), std::string::npos) << got.status().message();
  }
  auto missing = H5File::Open(store, "absent.h5");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().kind(), ErrorKind::kNotFound);
  EXPECT_NE(missing.status().message().find("counted://absent.h5"), std::string::npos);
}

}  // namespace
}  // namespace tessera::hdf5
