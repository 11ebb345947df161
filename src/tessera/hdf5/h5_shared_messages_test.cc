// The shared-message table ("SMTB") and messages kept in the shared-message heap, on files built
// byte by byte: a table of one index, a fractal heap header with a root direct block, and a
// dataspace message stored in it.
#include "tessera/hdf5/h5_shared_messages.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cpp_support/status_matchers.h"
#include "tessera/hdf5/h5_checksum.h"
#include "tessera/hdf5/h5_dataset_messages.h"

namespace tessera::hdf5 {
namespace {

void Put(Bytes* b, uint64_t v, int width) {
  for (int i = 0; i < width; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void PutChecksum(Bytes* b, size_t from) {
  Put(b, Lookup3Hash(ByteView(*b).subspan(from)), 4);
}
void PadTo(Bytes* b, size_t n) { b->resize(n, 0); }

constexpr uint64_t kTableAt = 0;
constexpr uint64_t kHeapAt = 64;
constexpr uint64_t kBlockAt = 256;
constexpr uint64_t kObjectOffset = 20;
constexpr uint16_t kDataspaceFlag = 1 << 0x1;
constexpr uint16_t kDatatypeFlag = 1 << 0x3;

// The file: "SMTB" with one list index sharing `message_types` | a fractal heap header (32-bit
// heap offsets, 512-byte direct blocks, root a direct block) | the root block, holding at offset
// 20 a version 1 dataspace message of shape [3, 5].
Bytes SharedMessageFile(uint16_t message_types, bool corrupt_table_checksum = false) {
  Bytes b;
  b.insert(b.end(), {'S', 'M', 'T', 'B'});
  Put(&b, 0, 1);              // index version
  Put(&b, 0, 1);              // index type: list
  Put(&b, message_types, 2);  // message type flags
  Put(&b, 0, 4);              // minimum message size
  Put(&b, 50, 2);             // list cutoff
  Put(&b, 40, 2);             // B-tree cutoff
  Put(&b, 1, 2);              // messages
  Put(&b, 1000, 8);           // index address (not read by a reader)
  Put(&b, kHeapAt, 8);        // heap address
  PutChecksum(&b, 0);
  if (corrupt_table_checksum) b.back() ^= 1;
  PadTo(&b, kHeapAt);
  b.insert(b.end(), {'F', 'R', 'H', 'P'});
  Put(&b, 0, 1);      // version
  Put(&b, 8, 2);      // heap ID length
  Put(&b, 0, 2);      // I/O filters' encoded length
  Put(&b, 0, 1);      // flags
  Put(&b, 4096, 4);   // maximum managed object size
  for (int i = 0; i < 4; ++i) Put(&b, ~uint64_t{0}, 8);  // next huge id, huge B-tree, free space, manager
  for (int i = 0; i < 8; ++i) Put(&b, 0, 8);             // space and object counts
  Put(&b, 4, 2);      // table width
  Put(&b, 512, 8);    // starting block size
  Put(&b, 65536, 8);  // maximum direct block size
  Put(&b, 32, 2);     // maximum heap size (bits)
  Put(&b, 0, 2);      // starting rows of the root indirect block
  Put(&b, kBlockAt, 8);
  Put(&b, 0, 2);      // root rows: the root is a direct block
  PutChecksum(&b, kHeapAt);
  PadTo(&b, kBlockAt + kObjectOffset);
  Put(&b, 1, 1);  // dataspace version 1
  Put(&b, 2, 1);  // rank
  Put(&b, 0, 1);  // flags
  Put(&b, 0, 5);  // reserved
  Put(&b, 3, 8);
  Put(&b, 5, 8);
  PadTo(&b, kBlockAt + 512);
  return b;
}

std::shared_ptr<RawFile> WriteFile(const Bytes& bytes, const std::string& name) {
  const std::string path = testing::TempDir() + "/sohm_" + name + ".bin";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  Result<std::shared_ptr<RawFile>> raw = RawFile::Open(path);
  EXPECT_TRUE(raw.ok()) << raw.status().ToString();
  return *raw;
}

// The superblock extension's message 0x000F: version 0, table address, index count.
HeaderMessage TableMessage(uint8_t count, uint8_t version = 0) {
  HeaderMessage m;
  m.type = kMsgSharedMessageTable;
  Put(&m.body, version, 1);
  Put(&m.body, kTableAt, 8);
  Put(&m.body, count, 1);
  return m;
}

// A dataspace message flagged shared whose body is the version 3 encoding of "in the heap" with
// the heap ID of the object at offset 20, 26 bytes long.
HeaderMessage SharedDataspace() {
  HeaderMessage m;
  m.type = kMsgDataspace;
  m.flags = kMsgFlagShared;
  m.addr = 4000;
  Put(&m.body, 3, 1);  // shared message version
  Put(&m.body, 1, 1);  // type: in the shared-message heap
  Put(&m.body, 0, 1);  // heap ID: version 0, managed
  Put(&m.body, kObjectOffset, 4);
  Put(&m.body, 26, 2);
  Put(&m.body, 0, 1);  // ID padding to 8 bytes
  return m;
}

TEST(H5SharedMessages, ReadsTheTableAndResolvesAHeapMessage) {
  std::shared_ptr<RawFile> file = WriteFile(SharedMessageFile(kDataspaceFlag | kDatatypeFlag), "ok");
  Result<SharedMessageTable> table = ReadSharedMessageTable(*file, TableMessage(1));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ(table->indexes.size(), 1u);
  EXPECT_EQ(table->indexes[0].index_type, 0);
  EXPECT_EQ(table->indexes[0].message_types, kDataspaceFlag | kDatatypeFlag);
  EXPECT_EQ(table->indexes[0].list_cutoff, 50);
  EXPECT_EQ(table->indexes[0].btree_cutoff, 40);
  EXPECT_EQ(table->indexes[0].heap_addr, kHeapAt);
  EXPECT_EQ(table->heaps[0].root_addr, kBlockAt);
  file->set_shared_messages(std::make_shared<const SharedMessageTable>(*table));

  EXPECT_TRUE(IsInSharedHeap(SharedDataspace()));
  Result<HeaderMessage> resolved = ResolveSharedHeapMessage(*file, SharedDataspace());
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  EXPECT_EQ(resolved->flags & kMsgFlagShared, 0);
  Result<Dataspace> space = ParseDataspace(*file, *resolved);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  EXPECT_EQ(space->dims, (std::vector<uint64_t>{3, 5}));
}

TEST(H5SharedMessages, TinyHeapObjectsAreReadFromTheId) {
  // A short message (a fill value, say) is stored in the heap ID itself: flags 0x20 | (length - 1).
  std::shared_ptr<RawFile> file = WriteFile(SharedMessageFile(kDataspaceFlag), "tiny");
  Result<SharedMessageTable> table = ReadSharedMessageTable(*file, TableMessage(1));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  const Bytes id = {0x20 | 4, 1, 2, 3, 4, 5, 0, 0};
  Result<Bytes> tiny = ReadHeapObject(*file, table->heaps[0], id);
  ASSERT_TRUE(tiny.ok()) << tiny.status().ToString();
  EXPECT_EQ(*tiny, (Bytes{1, 2, 3, 4, 5}));
  const Bytes too_long = {0x20 | 9, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_ERROR(ReadHeapObject(*file, table->heaps[0], too_long), ErrorKind::kCorruptData, "fractal heap object id");
}

TEST(H5SharedMessages, UnsharedAndCommittedMessagesPassThrough) {
  std::shared_ptr<RawFile> file = WriteFile(SharedMessageFile(kDataspaceFlag), "pass");
  HeaderMessage committed = SharedDataspace();
  committed.body[1] = 2;  // type 2: another object header
  EXPECT_FALSE(IsInSharedHeap(committed));
  HeaderMessage plain = SharedDataspace();
  plain.flags = 0;
  EXPECT_FALSE(IsInSharedHeap(plain));
  Result<HeaderMessage> same = ResolveSharedHeapMessage(*file, committed);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->body, committed.body);
}

TEST(H5SharedMessages, ErrorsNameWhatIsWrong) {
  // A shared message in a file without a table.
  std::shared_ptr<RawFile> bare = WriteFile(SharedMessageFile(kDataspaceFlag), "bare");
  EXPECT_ERROR(ResolveSharedHeapMessage(*bare, SharedDataspace()), ErrorKind::kCorruptData, "shared message at 0x",
               "message type 1", "no shared message table");
  // No index shares dataspaces.
  std::shared_ptr<RawFile> types_only = WriteFile(SharedMessageFile(kDatatypeFlag), "types");
  Result<SharedMessageTable> table = ReadSharedMessageTable(*types_only, TableMessage(1));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  types_only->set_shared_messages(std::make_shared<const SharedMessageTable>(*table));
  EXPECT_ERROR(ResolveSharedHeapMessage(*types_only, SharedDataspace()), ErrorKind::kCorruptData,
               "no shared message index holds message type 1");
  // A heap ID cut short.
  HeaderMessage short_id = SharedDataspace();
  short_id.body.resize(6);
  EXPECT_ERROR(ResolveSharedHeapMessage(*types_only, short_id), ErrorKind::kCorruptData, "shorter than its heap ID");
  // The table's checksum, version and index count.
  std::shared_ptr<RawFile> bad = WriteFile(SharedMessageFile(kDataspaceFlag, true), "badsum");
  EXPECT_ERROR(ReadSharedMessageTable(*bad, TableMessage(1)), ErrorKind::kCorruptData, "shared message table at 0x0",
               "checksum");
  EXPECT_ERROR(ReadSharedMessageTable(*types_only, TableMessage(1, 1)), ErrorKind::kCorruptData, "version 1");
  EXPECT_ERROR(ReadSharedMessageTable(*types_only, TableMessage(0)), ErrorKind::kCorruptData, "0 shared message indexes");
  EXPECT_ERROR(ReadSharedMessageTable(*types_only, TableMessage(9)), ErrorKind::kCorruptData, "9 shared message indexes");
}

}  // namespace
}  // namespace tessera::hdf5
