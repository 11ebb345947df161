// Global heap collections built byte by byte: objects found by index, the free-space object and
// short tails ending the list, and every malformed collection refused naming the file and range.
#include "tessera/hdf5/h5_global_heap.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cpp_support/status_matchers.h"

namespace tessera::hdf5 {
namespace {

#define GH_CONCAT_INNER(a, b) a##b
#define GH_CONCAT(a, b) GH_CONCAT_INNER(a, b)
#define ASSERT_OK_AND_ASSIGN(lhs, expr) ASSERT_OK_AND_ASSIGN_IMPL(GH_CONCAT(result_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL(tmp, lhs, expr)    \
  auto tmp = (expr);                                 \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString(); \
  lhs = std::move(*tmp)

void Put(Bytes* b, uint64_t v, int width) {
  for (int i = 0; i < width; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

struct HeapObject {
  uint16_t index;
  std::string data;
};

// "GCOL" | version | reserved (3) | size (8) | objects (index u16, refcount u16, reserved 4,
// size 8, data padded to 8) | free-space object (index 0) filling the rest up to `total_bytes`.
Bytes Collection(const std::vector<HeapObject>& objects, uint64_t total_bytes = 4096, uint8_t version = 1) {
  Bytes b;
  b.insert(b.end(), {'G', 'C', 'O', 'L'});
  Put(&b, version, 1);
  Put(&b, 0, 3);
  Put(&b, total_bytes, 8);
  for (const HeapObject& o : objects) {
    Put(&b, o.index, 2);
    Put(&b, 1, 2);
    Put(&b, 0, 4);
    Put(&b, o.data.size(), 8);
    b.insert(b.end(), o.data.begin(), o.data.end());
    while (b.size() % 8 != 0) b.push_back(0);
  }
  if (b.size() + 16 <= total_bytes) {
    Put(&b, 0, 2);
    Put(&b, 0, 2);
    Put(&b, 0, 4);
    Put(&b, total_bytes - b.size() - 8, 8);
  }
  while (b.size() < total_bytes) b.push_back(0);
  return b;
}

// Writes `bytes` at `addr` of a new file and opens it.
std::shared_ptr<RawFile> FileWith(const Bytes& bytes, uint64_t addr, const std::string& name) {
  const std::string path = testing::TempDir() + "/gheap_" + name + ".bin";
  Bytes file(addr, 0);
  file.insert(file.end(), bytes.begin(), bytes.end());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(file.data()), file.size());
  Result<std::shared_ptr<RawFile>> raw = RawFile::Open(path);
  EXPECT_TRUE(raw.ok()) << raw.status().ToString();
  return *raw;
}

std::string Text(ByteView v) { return std::string(v.begin(), v.end()); }

TEST(H5GlobalHeap, ObjectsAreFoundByIndex) {
  auto file = FileWith(Collection({{1, "hello"}, {2, ""}, {7, "exactly8"}, {3, "a longer string of text"}}), 64, "ok");
  ASSERT_OK_AND_ASSIGN(GlobalHeapCollection c, ReadGlobalHeapCollection(*file, 64));
  EXPECT_EQ(c.object_count(), 4u);
  EXPECT_EQ(c.size_bytes(), 4096u);
  ASSERT_OK_AND_ASSIGN(ByteView one, c.Object(1));
  EXPECT_EQ(Text(one), "hello");
  ASSERT_OK_AND_ASSIGN(ByteView two, c.Object(2));
  EXPECT_EQ(two.size(), 0u);
  ASSERT_OK_AND_ASSIGN(ByteView seven, c.Object(7));
  EXPECT_EQ(Text(seven), "exactly8");
  ASSERT_OK_AND_ASSIGN(ByteView three, c.Object(3));
  EXPECT_EQ(Text(three), "a longer string of text");
  EXPECT_EQ(c.ReferenceCount(3), 1);
  EXPECT_ERROR(c.Object(4), ErrorKind::kCorruptData, file->path(), "global heap collection at 0x40",
               "no object 4", "indices 1..7");
}

TEST(H5GlobalHeap, ATailTooShortForAnObjectHeaderEndsTheList) {
  // No room for a free-space object: the last object ends 8 bytes before the collection does.
  Bytes b = Collection({{1, "abcdefgh"}}, 16 + 16 + 8 + 8);
  auto file = FileWith(b, 0, "tail");
  ASSERT_OK_AND_ASSIGN(GlobalHeapCollection c, ReadGlobalHeapCollection(*file, 0));
  EXPECT_EQ(c.object_count(), 1u);
  // An object whose padding is cut off by the end of the collection still reads.
  Bytes cut = Collection({{1, "abc"}}, 16 + 16 + 3);
  auto cut_file = FileWith(cut, 0, "cut");
  ASSERT_OK_AND_ASSIGN(GlobalHeapCollection c2, ReadGlobalHeapCollection(*cut_file, 0));
  ASSERT_OK_AND_ASSIGN(ByteView abc, c2.Object(1));
  EXPECT_EQ(Text(abc), "abc");
}

TEST(H5GlobalHeap, MalformedCollectionsAreRefusedNamingTheRange) {
  Bytes bad_signature = Collection({{1, "x"}});
  bad_signature[0] = 'X';
  EXPECT_ERROR(ReadGlobalHeapCollection(*FileWith(bad_signature, 8, "sig"), 8), ErrorKind::kCorruptData,
               "global heap collection at 0x8", "bad signature");
  EXPECT_ERROR(ReadGlobalHeapCollection(*FileWith(Collection({{1, "x"}}, 4096, 2), 0, "ver"), 0),
               ErrorKind::kCorruptData, "global heap collection at 0x0..0x1000", "version 2");
  // The size claims more than the file holds.
  Bytes big = Collection({{1, "x"}});
  big[8] = 0;
  big[9] = 0x20;  // 8192
  EXPECT_ERROR(ReadGlobalHeapCollection(*FileWith(big, 0, "big"), 0), ErrorKind::kCorruptData,
               "global heap collection at 0x0..0x2000", "outside the file");
  Bytes tiny = Collection({{1, "x"}});
  tiny[8] = 4;
  tiny[9] = 0;
  EXPECT_ERROR(ReadGlobalHeapCollection(*FileWith(tiny, 0, "tiny"), 0), ErrorKind::kCorruptData,
               "smaller than its header");
  // An object claiming more bytes than remain.
  Bytes overrun = Collection({{1, "abc"}}, 64);
  overrun[16 + 8] = 200;
  EXPECT_ERROR(ReadGlobalHeapCollection(*FileWith(overrun, 0, "overrun"), 0), ErrorKind::kCorruptData,
               "global heap collection at 0x0..0x40", "object 1 at byte 16 has 200 bytes", "only 32 remain");
  EXPECT_ERROR(ReadGlobalHeapCollection(*FileWith(Collection({{5, "a"}, {5, "b"}}), 0, "dup"), 0),
               ErrorKind::kCorruptData, "object index 5 appears twice");
  EXPECT_ERROR(ReadGlobalHeapCollection(*FileWith(Collection({}), 0, "undef"), kUndefinedAddress),
               ErrorKind::kCorruptData, "undefined address");
}

TEST(H5GlobalHeap, IdsDecodeFromTwelveBytes) {
  Bytes id;
  Put(&id, 0x1122334455667788ull, 8);
  Put(&id, 9, 4);
  ASSERT_OK_AND_ASSIGN(GlobalHeapId decoded, DecodeGlobalHeapId(id, "layout message"));
  EXPECT_EQ(decoded.collection_addr, 0x1122334455667788ull);
  EXPECT_EQ(decoded.index, 9u);
  id.pop_back();
  EXPECT_ERROR(DecodeGlobalHeapId(id, "layout message"), ErrorKind::kCorruptData, "layout message", "needs 12 bytes");
}

TEST(H5GlobalHeap, OneCachePerFileSharedAcrossThreads) {
  Bytes b = Collection({{1, "first"}, {2, "second"}});
  Bytes second = Collection({{1, "other"}});
  b.insert(b.end(), second.begin(), second.end());
  auto file = FileWith(b, 0, "threads");
  std::shared_ptr<GlobalHeap> heap = GlobalHeap::Of(file);
  EXPECT_EQ(GlobalHeap::Of(file), heap);
  std::vector<std::thread> threads;
  std::vector<std::string> got(16);
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      Result<Bytes> data = heap->Read({t % 2 == 0 ? 0u : 4096u, t % 2 == 0 ? 2u : 1u});
      got[t] = data.ok() ? std::string(data->begin(), data->end()) : data.status().ToString();
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 16; ++t) EXPECT_EQ(got[t], t % 2 == 0 ? "second" : "other");
  ASSERT_OK_AND_ASSIGN(auto c1, heap->Collection(0));
  ASSERT_OK_AND_ASSIGN(auto c2, heap->Collection(0));
  EXPECT_EQ(c1.get(), c2.get());  // parsed once
  EXPECT_ERROR(heap->Read({0, 3}), ErrorKind::kCorruptData, "no object 3");
}

}  // namespace
}  // namespace tessera::hdf5
