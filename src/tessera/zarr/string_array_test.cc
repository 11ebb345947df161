#include "tessera/zarr/string_array.h"

#include <gtest/gtest.h>

#include "tessera/store/memory_store.h"
#include "tessera/zarr/vlen_chunk.h"

namespace tessera::zarr {
namespace {

void Put(MemoryStore& store, const std::string& key, const std::string& text) {
  ASSERT_TRUE(store.Set(key, AsView(text)).ok());
}

void PutChunk(MemoryStore& store, const std::string& key, const std::vector<std::string>& elements) {
  Bytes encoded = EncodeVlenChunk(elements);
  ASSERT_TRUE(store.Set(key, encoded).ok());
}

const char* kV3 = R"({"zarr_format": 3, "node_type": "array", "shape": [5], "data_type": "string",
  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
  "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
  "fill_value": "-", "codecs": [{"name": "vlen-utf8", "configuration": {}}]})";

TEST(StringArrayTest, ReadsV3ChunksAndFillsMissingOnes) {
  auto store = std::make_shared<MemoryStore>();
  Put(*store, "zarr.json", kV3);
  PutChunk(*store, "c/0", {"a", "h\xc3\xa9"});
  PutChunk(*store, "c/2", {"z", ""});  // the edge chunk is stored whole
  Result<std::unique_ptr<StringArray>> a = StringArray::OpenIfVariableLength(store, "");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_NE(*a, nullptr);
  EXPECT_EQ((*a)->object_type().kind, ObjectKind::kString);
  std::vector<std::string> out;
  ASSERT_TRUE(ReadObjectHyperslab(**a, Hyperslab::All({5}), &out).ok());
  EXPECT_EQ(out, (std::vector<std::string>{"a", "h\xc3\xa9", "-", "-", "z"}));
}

TEST(StringArrayTest, ReadsV2ObjectArraysWithTheVlenFilter) {
  auto store = std::make_shared<MemoryStore>();
  Put(*store, ".zarray", R"({"zarr_format": 2, "shape": [3], "chunks": [3], "dtype": "|O", "fill_value": null,
    "order": "C", "filters": [{"id": "vlen-bytes"}], "compressor": null})");
  PutChunk(*store, "0", {std::string("\0x", 2), "", "y"});
  Result<std::unique_ptr<StringArray>> a = StringArray::OpenIfVariableLength(store, "");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->object_type().kind, ObjectKind::kBytes);
  EXPECT_EQ((*a)->fill_value(), "");
  std::vector<std::string> out;
  ASSERT_TRUE(ReadObjectHyperslab(**a, Hyperslab::All({3}), &out).ok());
  EXPECT_EQ(out, (std::vector<std::string>{std::string("\0x", 2), "", "y"}));
}

TEST(StringArrayTest, OtherArraysAreNotVariableLength) {
  auto store = std::make_shared<MemoryStore>();
  Put(*store, "zarr.json", R"({"zarr_format": 3, "node_type": "array", "shape": [5], "data_type": "uint8",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
    "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]})");
  Result<std::unique_ptr<StringArray>> a = StringArray::OpenIfVariableLength(store, "");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, nullptr);
}

TEST(StringArrayTest, CorruptChunkNamesItsKey) {
  auto store = std::make_shared<MemoryStore>();
  Put(*store, "zarr.json", kV3);
  PutChunk(*store, "c/1", {"only one"});
  Result<std::unique_ptr<StringArray>> a = StringArray::OpenIfVariableLength(store, "");
  ASSERT_TRUE(a.ok());
  std::vector<std::string> out;
  Status st = ReadObjectHyperslab(**a, Hyperslab::All({5}), &out);
  ASSERT_EQ(st.kind(), ErrorKind::kCorruptData);
  EXPECT_NE(st.message().find("c/1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("holds 1 elements, the chunk has 2"), std::string::npos) << st.message();
}

TEST(StringArrayTest, RefusesObjectFiltersBeforeTheVlenCodec) {
  auto store = std::make_shared<MemoryStore>();
  Put(*store, ".zarray", R"({"zarr_format": 2, "shape": [3], "chunks": [3], "dtype": "|O", "fill_value": null,
    "order": "C", "filters": [{"id": "pickle"}], "compressor": null})");
  Result<std::unique_ptr<StringArray>> a = StringArray::OpenIfVariableLength(store, "");
  ASSERT_EQ(a.status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(a.status().message().find("vlen-utf8 or vlen-bytes"), std::string::npos);
}

}  // namespace
}  // namespace tessera::zarr
