#include "tessera/hdf5/h5_vlen.h"

#include <gtest/gtest.h>

#include "cpp_support/h5_vlen_helpers.h"
#include "tessera/store/memory_store.h"

namespace tessera::hdf5 {
namespace {

using hdf5_test::Collection;
using hdf5_test::PutLE;
using hdf5_test::VlenString;

Bytes Reference(uint32_t count, uint64_t collection, uint32_t index) {
  Bytes out;
  PutLE(&out, count, 4);
  PutLE(&out, collection, 8);
  PutLE(&out, index, 4);
  return out;
}

class ReferenceChunk final : public ChunkSource {
 public:
  explicit ReferenceChunk(Bytes refs)
      : shape_{static_cast<int64_t>(refs.size() / kVlenReferenceBytes), static_cast<int64_t>(kVlenReferenceBytes)},
        refs_(std::move(refs)),
        fill_{Bytes(1, 0)} {}
  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& read_chunk_shape() const override { return shape_; }
  DataType dtype() const override { return DataType::kUInt8; }
  const FillValue& fill_value() const override { return fill_; }
  Result<bool> ReadChunk(std::span<const int64_t>, Bytes* out) const override {
    *out = refs_;
    return true;
  }

 private:
  std::vector<int64_t> shape_;
  Bytes refs_;
  FillValue fill_;
};

Result<std::vector<std::string>> ReadAll(const Bytes& file_bytes, const Bytes& refs) {
  auto store = std::make_shared<MemoryStore>();
  EXPECT_TRUE(store->Set("v.h5", file_bytes).ok());
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<RawFile> file, RawFile::Open(store, "v.h5"));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<VlenElements> elements,
                           VlenElements::Make(std::make_shared<ReferenceChunk>(refs), file, VlenString(), "v.h5: dataset /s"));
  std::vector<std::string> out;
  const int64_t coords[1] = {0};
  TESSERA_ASSIGN_OR_RETURN(bool stored, elements->ReadChunk(coords, &out));
  EXPECT_TRUE(stored);
  return out;
}

TEST(H5VlenTest, ResolvesStringsThroughTheGlobalHeap) {
  Bytes file = Collection({"abc", "", "h\xc3\xa9llo"});
  Bytes refs = Reference(3, 0, 1);
  for (uint8_t b : Reference(0, kUndefinedAddress, 0)) refs.push_back(b);  // empty: never looked up
  for (uint8_t b : Reference(6, 0, 3)) refs.push_back(b);
  for (uint8_t b : Reference(2, 0, 1)) refs.push_back(b);  // a prefix of an object
  Result<std::vector<std::string>> out = ReadAll(file, refs);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, (std::vector<std::string>{"abc", "", "h\xc3\xa9llo", "ab"}));
}

TEST(H5VlenTest, LengthBeyondTheHeapObjectIsCorruptNamingTheElement) {
  Result<std::vector<std::string>> out = ReadAll(Collection({"abc"}), Reference(9, 0, 1));
  ASSERT_EQ(out.status().kind(), ErrorKind::kCorruptData);
  EXPECT_NE(out.status().message().find("v.h5: dataset /s: element 0 of chunk (0): 9 x 1 bytes (9) past the end of its "
                                        "global heap object (collection 0x0, index 1, 3 bytes)"),
            std::string::npos)
      << out.status().message();
}

TEST(H5VlenTest, MissingIndexAndBadCollectionAreCorruptNamingTheElement) {
  Result<std::vector<std::string>> missing = ReadAll(Collection({"abc"}), Reference(1, 0, 7));
  ASSERT_EQ(missing.status().kind(), ErrorKind::kCorruptData);
  EXPECT_NE(missing.status().message().find("element 0 of chunk (0)"), std::string::npos);
  Result<std::vector<std::string>> nowhere = ReadAll(Collection({"abc"}), Reference(1, 4096, 1));
  EXPECT_FALSE(nowhere.ok());
  EXPECT_NE(nowhere.status().message().find("element 0 of chunk (0)"), std::string::npos) << nowhere.status().message();
}

TEST(H5VlenTest, DecodesAReferenceAndRefusesAShortOne) {
  Result<VlenReference> ref = DecodeVlenReference(Reference(5, 0x1234, 9), "x");
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->count, 5u);
  EXPECT_EQ(ref->id.collection_addr, 0x1234u);
  EXPECT_EQ(ref->id.index, 9u);
  Bytes short_ref(10, 0);
  EXPECT_EQ(DecodeVlenReference(short_ref, "x").status().kind(), ErrorKind::kCorruptData);
}

}  // namespace
}  // namespace tessera::hdf5
