#include "tessera/hdf5/h5_reader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "cpp_support/status_matchers.h"
#include "tessera/hdf5/h5_checksum.h"
#include "tessera/hdf5/h5_chunk_index.h"
#include "tessera/hdf5/h5_object_header.h"

namespace tessera::hdf5 {
namespace {

std::string WriteTemp(const std::string& name, const Bytes& bytes) {
  const std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return path;
}

void Put(Bytes* b, uint64_t v, int width) {
  for (int i = 0; i < width; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void PutStr(Bytes* b, const char* s) { b->insert(b->end(), s, s + std::strlen(s)); }
void PutChecksum(Bytes* b, size_t from) { Put(b, Lookup3Hash(ByteView(*b).subspan(from)), 4); }

// A complete tiny file: superblock v2, whose root object is a v2 ("OHDR") header describing a
// contiguous 3 x 4 int16 dataset holding 0..11; `extra`: more messages (type, size, flags, body)
// after the layout message.
Bytes TinyFile(bool big_endian = false, const Bytes& extra = {}) {
  const uint64_t grow = extra.size();
  Bytes b;
  for (uint8_t c : kHdf5Signature) b.push_back(c);
  Put(&b, 2, 1);  // version
  Put(&b, 8, 1);
  Put(&b, 8, 1);
  Put(&b, 0, 1);
  Put(&b, 0, 8);                  // base address
  Put(&b, kUndefinedAddress, 8);  // extension
  Put(&b, 145 + grow, 8);         // end of file
  Put(&b, 48, 8);                 // root object header
  PutChecksum(&b, 0);
  EXPECT_EQ(b.size(), 48u);
  PutStr(&b, "OHDR");
  Put(&b, 2, 1);
  Put(&b, 0, 1);   // flags: 1-byte chunk-0 size
  Put(&b, 62 + grow, 1);  // chunk 0: three messages (and the extra ones)
  // Dataspace v2, rank 2: 3 x 4.
  Put(&b, kMsgDataspace, 1); Put(&b, 20, 2); Put(&b, 0, 1);
  Put(&b, 2, 1); Put(&b, 2, 1); Put(&b, 0, 1); Put(&b, 1, 1); Put(&b, 3, 8); Put(&b, 4, 8);
  // Datatype: fixed-point v1, signed, 2 bytes.
  Put(&b, kMsgDatatype, 1); Put(&b, 12, 2); Put(&b, 0, 1);
  Put(&b, 0x10, 1); Put(&b, 0x08 | (big_endian ? 1 : 0), 1); Put(&b, 0, 2); Put(&b, 2, 4); Put(&b, 0, 2); Put(&b, 16, 2);
  // Layout v3, contiguous at 121, 24 bytes.
  Put(&b, kMsgLayout, 1); Put(&b, 18, 2); Put(&b, 0, 1);
  Put(&b, 3, 1); Put(&b, 1, 1); Put(&b, 121 + grow, 8); Put(&b, 24, 8);
  b.insert(b.end(), extra.begin(), extra.end());
  PutChecksum(&b, 48);
  EXPECT_EQ(b.size(), 121u + grow);
  for (int i = 0; i < 12; ++i) Put(&b, big_endian ? (i << 8) : i, 2);
  return b;
}

Result<Bytes> ReadAll(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Hdf5File> file, Hdf5File::Open(path));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Hdf5Dataset> ds, file->OpenDataset("/"));
  Bytes out(static_cast<size_t>(Hyperslab::All(ds->shape()).NumElements()) * ItemSize(ds->dtype()));
  TESSERA_RETURN_IF_ERROR(ReadHyperslab(*ds, Hyperslab::All(ds->shape()), out.data()));
  return out;
}

TEST(Hdf5ReaderChecksum, Lookup3CheckValues) {
  EXPECT_EQ(Lookup3Hash(ByteView()), 0xdeadbeefu);
  EXPECT_EQ(Lookup3Hash(AsView("Four score and seven years ago")), 0x17770551u);
  EXPECT_EQ(Lookup3Hash(AsView("Four score and seven years ago"), 1), 0xcd628161u);
}

TEST(Hdf5Reader, HandBuiltSuperblockV2AndObjectHeaderV2) {
  const std::string path = WriteTemp("tiny.h5", TinyFile());
  Result<std::shared_ptr<Hdf5File>> file = Hdf5File::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->superblock().version, 2);
  EXPECT_EQ((*file)->superblock().root_object_header, 48u);
  Result<std::unique_ptr<Hdf5Dataset>> ds = (*file)->OpenDataset("/");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ((*ds)->dtype(), DataType::kInt16);
  EXPECT_EQ((*ds)->LayoutText(), "contiguous");
  Result<Bytes> data = ReadAll(path);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  ASSERT_EQ(data->size(), 24u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ((*data)[2 * i] | (*data)[2 * i + 1] << 8, i);
}

// One v2 header message: type, body size, flags, body.
Bytes Message(uint8_t type, uint8_t flags, const Bytes& body) {
  Bytes m;
  Put(&m, type, 1);
  Put(&m, body.size(), 2);
  Put(&m, flags, 1);
  m.insert(m.end(), body.begin(), body.end());
  return m;
}

TEST(Hdf5Reader, AnUnknownMessageFlaggedFailIfUnknownRefusesTheObject) {
  const Bytes body = {1, 2, 3, 4};
  // Unflagged, an unknown message is skipped, as the HDF5 library does.
  ASSERT_TRUE(ReadAll(WriteTemp("unknown_ok.h5", TinyFile(false, Message(0xC8, 0, body)))).ok());
  const std::string path = WriteTemp("unknown_fail.h5", TinyFile(false, Message(0xC8, 0x80, body)));
  EXPECT_ERROR(ReadAll(path), ErrorKind::kUnsupported, path, "object header message at 0x", "message type 200",
               "fail if unknown");
}

// `file` (a TinyFile) with a superblock extension holding `message`, appended at its end.
Bytes WithSuperblockExtension(Bytes file, const Bytes& message) {
  const uint64_t at = file.size();
  PutStr(&file, "OHDR");
  Put(&file, 2, 1);
  Put(&file, 0, 1);
  Put(&file, message.size(), 1);
  file.insert(file.end(), message.begin(), message.end());
  PutChecksum(&file, at);
  auto patch = [&](size_t offset, uint64_t v) {
    for (int i = 0; i < 8; ++i) file[offset + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  patch(20, at);           // superblock extension address
  patch(28, file.size());  // end of file
  const uint32_t sum = Lookup3Hash(ByteView(file).first(44));
  for (int i = 0; i < 4; ++i) file[44 + i] = static_cast<uint8_t>(sum >> (8 * i));
  return file;
}

TEST(Hdf5Reader, AMetadataCacheImageIsNamed) {
  // An extension without a cache image opens as before.
  ASSERT_TRUE(ReadAll(WriteTemp("ext_ok.h5", WithSuperblockExtension(TinyFile(), Message(0x0A, 0, {0, 0})))).ok());
  Bytes image;
  Put(&image, 0, 1);        // version
  Put(&image, 4096, 8);     // image address
  Put(&image, 1024, 8);     // image length
  const std::string path = WriteTemp("cache_image.h5", WithSuperblockExtension(TinyFile(), Message(0x18, 0x80, image)));
  EXPECT_ERROR(ReadAll(path), ErrorKind::kUnsupported, path, "superblock extension at 0x", "metadata cache image");
}

TEST(Hdf5Reader, AnOldFillValueMessageWithAnUndefinedSizeMeansNoFillValue) {
  Bytes undefined;
  Put(&undefined, 0xFFFFFFFF, 4);  // older PyTables files
  const std::string path = WriteTemp("old_fill.h5", TinyFile(false, Message(kMsgFillValueOld, 0, undefined)));
  auto file = Hdf5File::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto ds = (*file)->OpenDataset("/");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_TRUE((*ds)->fill_value().IsZero());
  Bytes seven;
  Put(&seven, 2, 4);
  Put(&seven, 7, 2);
  auto file7 = Hdf5File::Open(WriteTemp("old_fill7.h5", TinyFile(false, Message(kMsgFillValueOld, 0, seven))));
  ASSERT_TRUE(file7.ok());
  auto ds7 = (*file7)->OpenDataset("/");
  ASSERT_TRUE(ds7.ok()) << ds7.status().ToString();
  ASSERT_EQ((*ds7)->fill_value().bytes.size(), 2u);
  EXPECT_EQ((*ds7)->fill_value().bytes[0], 7);
  EXPECT_EQ((*ds7)->fill_value().bytes[1], 0);
}

TEST(Hdf5Reader, BigEndianElementsAreSwapped) {
  const std::string path = WriteTemp("tiny_be.h5", TinyFile(true));
  Result<Bytes> data = ReadAll(path);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  for (int i = 0; i < 12; ++i) EXPECT_EQ((*data)[2 * i], i);
}

TEST(Hdf5Reader, SuperblockChecksumMismatchIsCorrupt) {
  Bytes b = TinyFile();
  b[13] ^= 1;  // base address
  const std::string path = WriteTemp("bad_sb.h5", b);
  EXPECT_ERROR(Hdf5File::Open(path), ErrorKind::kCorruptData, path, "superblock at 0x0..0x30: checksum mismatch");
}

TEST(Hdf5Reader, ObjectHeaderChecksumMismatchNamesTheRange) {
  Bytes b = TinyFile();
  b[60] ^= 0x20;  // inside the dataspace message
  const std::string path = WriteTemp("bad_oh.h5", b);
  EXPECT_ERROR(ReadAll(path), ErrorKind::kCorruptData, path, "object header at 0x30..0x79: checksum mismatch");
}

TEST(Hdf5Reader, VersionOneObjectHeaderWithContinuation) {
  // Header at 0: one continuation message to a block at 48 holding a 16-byte NIL message.
  Bytes b;
  Put(&b, 1, 1); Put(&b, 0, 1); Put(&b, 2, 2); Put(&b, 1, 4); Put(&b, 24, 4); Put(&b, 0, 4);
  Put(&b, kMsgContinuation, 2); Put(&b, 16, 2); Put(&b, 0, 4); Put(&b, 48, 8); Put(&b, 24, 8);
  ASSERT_EQ(b.size(), 40u);
  Put(&b, 0, 8);  // padding up to 48
  Put(&b, kMsgNil, 2); Put(&b, 16, 2); Put(&b, 0, 4); Put(&b, 0x1122334455667788, 8); Put(&b, 0, 8);
  auto file = RawFile::Open(WriteTemp("v1.oh", b));
  ASSERT_TRUE(file.ok());
  Result<ObjectHeader> oh = ReadObjectHeader(**file, 0);
  ASSERT_TRUE(oh.ok()) << oh.status().ToString();
  ASSERT_EQ(oh->messages.size(), 2u);
  EXPECT_EQ(oh->messages[0].type, kMsgContinuation);
  EXPECT_EQ(oh->messages[1].type, kMsgNil);
  EXPECT_EQ(oh->messages[1].addr, 56u);

  // A continuation back to the first chunk is a loop, not an endless walk.
  Bytes loop = b;
  EncodeFixed64LE(loop.data() + 24, 16);
  EncodeFixed64LE(loop.data() + 32, 24);
  auto loop_file = RawFile::Open(WriteTemp("v1loop.oh", loop));
  EXPECT_ERROR(ReadObjectHeader(**loop_file, 0), ErrorKind::kCorruptData, "v1loop.oh", "0x10..0x28",
               "continuation loop");

  // A continuation to the undefined address, of any length, is an error before anything is allocated
  // (found by fuzzing: the length was allocated first).
  Bytes undefined = b;
  EncodeFixed64LE(undefined.data() + 24, kUndefinedAddress);
  EncodeFixed64LE(undefined.data() + 32, uint64_t{1} << 62);
  auto undefined_file = RawFile::Open(WriteTemp("v1undef.oh", undefined));
  EXPECT_ERROR(ReadObjectHeader(**undefined_file, 0), ErrorKind::kCorruptData, "v1undef.oh", "object header chunk",
               "undefined address");
}

// A chunk B-tree (v1, type 1) for a 1-D dataset of 4 chunks of 2 bytes: a level-1 root at 0 with
// two leaves; chunk data after them.
Bytes ChunkBTree(uint64_t second_child) {
  auto node = [](Bytes* b, int level, const std::vector<std::pair<uint64_t, uint64_t>>& entries, uint64_t end) {
    PutStr(b, "TREE");
    Put(b, 1, 1); Put(b, level, 1); Put(b, entries.size(), 2);
    Put(b, kUndefinedAddress, 8); Put(b, kUndefinedAddress, 8);
    for (auto [offset, child] : entries) {
      Put(b, 2, 4); Put(b, 0, 4); Put(b, offset, 8); Put(b, 0, 8);
      Put(b, child, 8);
    }
    Put(b, 2, 4); Put(b, 0, 4); Put(b, end, 8); Put(b, 0, 8);
  };
  // Node sizes: 24 + n * 32 + 24.
  Bytes b;
  node(&b, 1, {{0, 112}, {4, second_child}}, 8);   // 112 bytes
  node(&b, 0, {{0, 336}, {2, 338}}, 4);             // at 112, 112 bytes
  node(&b, 0, {{4, 340}, {6, 342}}, 8);             // at 224
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(10 + i));  // at 336
  return b;
}

Result<ChunkMap> LoadBTree(const Bytes& bytes, const std::string& name) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<RawFile> file, RawFile::Open(WriteTemp(name, bytes)));
  Layout l;
  l.cls = LayoutClass::kChunked;
  l.address = 0;
  l.chunk_dims = {2};
  ChunkGeometry g;
  g.dims = g.max_dims = {8};
  g.chunk_dims = {2};
  g.chunk_bytes = 2;
  return LoadChunkIndex(*file, l, g, "dataset /x");
}

TEST(Hdf5Reader, ChunkBTreeOfTwoLevels) {
  Result<ChunkMap> map = LoadBTree(ChunkBTree(224), "btree.bin");
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  ASSERT_EQ(map->size(), 4u);
  for (uint64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(map->at(i).addr, 336 + 2 * i);
    EXPECT_EQ(map->at(i).size, 2u);
  }
}

TEST(Hdf5Reader, ChunkBTreeLoopsAndBadAddressesAreCorrupt) {
  // child = the root itself
  EXPECT_ERROR(LoadBTree(ChunkBTree(0), "btree_loop.bin"), ErrorKind::kCorruptData, "btree_loop.bin",
               "chunk B-tree node at 0x0..0x18", "loop");
  // the same leaf twice
  EXPECT_ERROR(LoadBTree(ChunkBTree(112), "btree_dup.bin"), ErrorKind::kCorruptData, "btree_dup.bin",
               "chunk B-tree node at 0x70..0x88", "loop");
  EXPECT_ERROR(LoadBTree(ChunkBTree(1 << 30), "btree_far.bin"), ErrorKind::kCorruptData, "btree_far.bin",
               "at 0x40000000", "outside the file");
}

// A damaged file fails cleanly: bad input (corrupt, or a feature the corruption made up), never an
// I/O error or a crash, and the message names the file.
bool IsCleanFailure(const Status& st, const std::string& path) {
  return (st.kind() == ErrorKind::kCorruptData || st.kind() == ErrorKind::kUnsupported) &&
         st.message().find(path) != std::string::npos;
}
void ExpectCleanFailure(const Result<Bytes>& r, const std::string& path, const std::string& trace) {
  ASSERT_FALSE(r.ok()) << trace;
  EXPECT_TRUE(IsCleanFailure(r.status(), path)) << trace << ": " << r.status().ToString();
}

TEST(Hdf5Reader, EveryTruncationAndByteFlipFailsCleanly) {
  const Bytes good = TinyFile();
  for (size_t len = 0; len < good.size(); ++len) {
    Bytes cut(good.begin(), good.begin() + len);
    const std::string path = WriteTemp("cut.h5", cut);
    const std::string trace = "length " + std::to_string(len);
    if (len < 8) {  // not even the signature
      EXPECT_ERROR(ReadAll(path), ErrorKind::kInvalidArgument, path, "not an HDF5 file") << trace;
    } else {
      ExpectCleanFailure(ReadAll(path), path, trace);
    }
  }
  // With the end-of-file check out of the way (undefined), truncations reach the header parser.
  Bytes open_ended = good;
  EncodeFixed64LE(open_ended.data() + 28, kUndefinedAddress);
  EncodeFixed32LE(open_ended.data() + 44, Lookup3Hash(ByteView(open_ended).subspan(0, 44)));
  for (size_t len = 48; len < good.size(); ++len) {
    Bytes cut(open_ended.begin(), open_ended.begin() + len);
    const std::string path = WriteTemp("cut2.h5", cut);
    ExpectCleanFailure(ReadAll(path), path, "length " + std::to_string(len));
  }
  // A flipped byte: the data reads (flips in the elements, or in fields nothing checks) as the
  // 3 x 4 int16 it is, or fails cleanly; never a crash or hang.
  std::mt19937 rng(1);
  int failed = 0;
  for (size_t i = 8; i < good.size(); ++i) {
    Bytes flipped = good;
    flipped[i] ^= static_cast<uint8_t>(1 + rng() % 255);
    const std::string path = WriteTemp("flip.h5", flipped);
    Result<Bytes> r = ReadAll(path);
    if (r.ok()) {
      EXPECT_EQ(r->size(), 24u) << "byte " << i;
    } else {
      ++failed;
      ExpectCleanFailure(r, path, "byte " + std::to_string(i));
    }
  }
  // The superblock and the object header are checksummed: a flip in either is caught.
  EXPECT_GE(failed, 121 - 8 - 24);
}

TEST(Hdf5Reader, RandomBytesAfterASignatureAreErrors) {
  std::mt19937 rng(42);
  int refused_at_open = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Bytes b(kHdf5Signature, kHdf5Signature + 8);
    const size_t n = rng() % 600;
    for (size_t i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(rng()));
    if (trial % 2 == 0 && b.size() > 8) b[8] = static_cast<uint8_t>(trial % 4);  // a valid version
    const std::string path = WriteTemp("random.h5", b);
    const std::string trace = "trial " + std::to_string(trial);
    // Random bytes fail cleanly, naming the file, wherever the parse gives up.
    Result<std::shared_ptr<Hdf5File>> file = Hdf5File::Open(path);
    if (!file.ok()) {
      ++refused_at_open;
      EXPECT_TRUE(IsCleanFailure(file.status(), path)) << trace << ": " << file.status().ToString();
      continue;
    }
    Result<std::vector<std::string>> names = (*file)->ListDatasets();
    if (!names.ok()) EXPECT_TRUE(IsCleanFailure(names.status(), path)) << trace << ": " << names.status().ToString();
    Result<Bytes> data = ReadAll(path);
    if (!data.ok()) EXPECT_TRUE(IsCleanFailure(data.status(), path)) << trace << ": " << data.status().ToString();
  }
  EXPECT_GT(refused_at_open, 150);
  EXPECT_FALSE(LooksLikeHdf5(WriteTemp("plain.bin", Bytes(100, 7))));
  EXPECT_TRUE(LooksLikeHdf5(WriteTemp("sig.bin", TinyFile())));
}

TEST(Hdf5Reader, SignatureAfterAUserBlock) {
  Bytes b(512, 0);
  Bytes tiny = TinyFile();
  EncodeFixed64LE(tiny.data() + 28, 145 + 512);  // the library records the end counting the user block
  EncodeFixed32LE(tiny.data() + 44, Lookup3Hash(ByteView(tiny).subspan(0, 44)));
  b.insert(b.end(), tiny.begin(), tiny.end());
  Result<Bytes> data = ReadAll(WriteTemp("userblock.h5", b));
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ((*data)[22], 11);
}

}  // namespace
}  // namespace tessera::hdf5
