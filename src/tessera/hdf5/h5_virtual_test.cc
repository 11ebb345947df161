// The virtual dataset decoders on hand-made bytes: selections in each encoding the HDF5 library
// writes, the mapping list (versions 0 and 1, checksum), and which linked files the policy follows.
#include "tessera/hdf5/h5_virtual.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cpp_support/status_matchers.h"
#include "tessera/hdf5/h5_checksum.h"
#include "tessera/hdf5/h5_linked_files.h"
#include "tessera/hdf5/h5_selection_encoding.h"

namespace tessera::hdf5 {
namespace {

void Put(Bytes* b, uint64_t v, int width) {
  for (int i = 0; i < width; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

Bytes AllSelection() {
  Bytes b;
  Put(&b, 3, 4);  // all
  Put(&b, 1, 4);
  Put(&b, 0, 4);
  Put(&b, 0, 4);
  return b;
}

// Version 3, regular, `width`-byte fields: per dimension start, stride, count, block.
Bytes RegularV3(const std::vector<SelectionDim>& dims, int width) {
  Bytes b;
  Put(&b, 2, 4);
  Put(&b, 3, 4);
  Put(&b, 1, 1);  // regular
  Put(&b, width, 1);
  Put(&b, dims.size(), 4);
  for (const SelectionDim& d : dims) {
    Put(&b, d.start, width);
    Put(&b, d.stride, width);
    Put(&b, d.count, width);
    Put(&b, d.block, width);
  }
  return b;
}

// Version 1: a list of blocks, each start[rank] then end[rank] (inclusive).
Bytes BlocksV1(const std::vector<std::vector<uint32_t>>& blocks, uint32_t rank) {
  Bytes b;
  Put(&b, 2, 4);
  Put(&b, 1, 4);
  Put(&b, 0, 4);
  Put(&b, 8 + blocks.size() * 8 * rank, 4);
  Put(&b, rank, 4);
  Put(&b, blocks.size(), 4);
  for (const auto& corners : blocks)
    for (uint32_t v : corners) Put(&b, v, 4);
  return b;
}

Result<DecodedSelection> Decode(const Bytes& b) {
  size_t pos = 0;
  Result<DecodedSelection> s = DecodeSelection(b, &pos, "f.h5: sel");
  if (s.ok()) EXPECT_EQ(pos, b.size());
  return s;
}

void ExpectDim(const SelectionDim& d, uint64_t start, uint64_t stride, uint64_t count, uint64_t block) {
  EXPECT_EQ(d.start, start);
  EXPECT_EQ(d.stride, stride);
  EXPECT_EQ(d.count, count);
  EXPECT_EQ(d.block, block);
}

TEST(H5SelectionEncoding, AllAndRegularHyperslabsInEveryWidth) {
  Result<DecodedSelection> all = Decode(AllSelection());
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE(all->all);
  ASSERT_EQ(all->Resolve({4, 5}).size(), 2u);
  ExpectDim(all->Resolve({4, 5})[1], 0, 5, 1, 5);
  for (int width : {2, 4, 8}) {
    Result<DecodedSelection> s = Decode(RegularV3({{1, 4, 3, 2}, {0, 1, 1, 7}}, width));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_EQ(s->dims.size(), 2u);
    ExpectDim(s->dims[0], 1, 4, 3, 2);
    ExpectDim(s->dims[1], 0, 1, 1, 7);
    EXPECT_FALSE(s->unlimited());
  }
  // All ones in a narrower field is unlimited, as in the 8-byte one.
  Result<DecodedSelection> unlimited = Decode(RegularV3({{0, 10, 0xffff, 10}}, 2));
  ASSERT_TRUE(unlimited.ok());
  EXPECT_TRUE(unlimited->unlimited());
}

TEST(H5SelectionEncoding, BlockListsThatFormARegularPatternAreRegular) {
  // Rows 0, 2, 4 (one row each) by columns 3..7: what HDF5 writes for [0:6:2, 3:8] in v1.
  Result<DecodedSelection> s = Decode(BlocksV1({{0, 3, 0, 7}, {2, 3, 2, 7}, {4, 3, 4, 7}}, 2));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ExpectDim(s->dims[0], 0, 2, 3, 1);
  ExpectDim(s->dims[1], 3, 5, 1, 5);
  // Blocks of two rows every four.
  Result<DecodedSelection> blocked = Decode(BlocksV1({{0, 1}, {4, 5}, {8, 9}}, 1));
  ASSERT_TRUE(blocked.ok()) << blocked.status().ToString();
  ExpectDim(blocked->dims[0], 0, 4, 3, 2);
  // Not a product of regular sets: kept as the list of blocks.
  Result<DecodedSelection> uneven = Decode(BlocksV1({{0, 1}, {4, 4}}, 1));
  ASSERT_TRUE(uneven.ok()) << uneven.status().ToString();
  EXPECT_EQ(uneven->kind, SelectionKind::kBlocks);
  EXPECT_EQ(uneven->blocks, (std::vector<uint64_t>{0, 1, 4, 4}));
  Result<DecodedSelection> diagonal = Decode(BlocksV1({{0, 0, 0, 0}, {2, 2, 2, 2}}, 2));
  ASSERT_TRUE(diagonal.ok()) << diagonal.status().ToString();
  EXPECT_EQ(diagonal->kind, SelectionKind::kBlocks);
  EXPECT_EQ(diagonal->ToString(), "2 blocks");
  EXPECT_ERROR(Decode(BlocksV1({{5, 4}}, 1)), ErrorKind::kCorruptData, "ends at 4 before its start 5");
}

TEST(H5SelectionEncoding, MalformedAndUnsupportedSelectionsNameThePlace) {
  Bytes points;
  Put(&points, 1, 4);
  Put(&points, 1, 4);
  EXPECT_ERROR(Decode(points), ErrorKind::kCorruptData, "f.h5: sel", "truncated");
  Bytes none;
  Put(&none, 0, 4);
  Put(&none, 1, 4);
  Put(&none, 0, 8);
  EXPECT_ERROR(Decode(none), ErrorKind::kUnsupported, "f.h5: sel", "empty (none) selections");
  Bytes bad_type;
  Put(&bad_type, 9, 4);
  Put(&bad_type, 1, 4);
  EXPECT_ERROR(Decode(bad_type), ErrorKind::kCorruptData, "selection type 9");
  Bytes truncated = RegularV3({{0, 1, 2, 1}}, 8);
  truncated.resize(truncated.size() - 3);
  EXPECT_ERROR(Decode(truncated), ErrorKind::kCorruptData, "f.h5: sel", "truncated");
  EXPECT_ERROR(Decode(RegularV3({{0, 2, 3, 5}}, 4)), ErrorKind::kCorruptData, "not a valid regular hyperslab");
  EXPECT_ERROR(Decode(RegularV3({{0, 0, 3, 1}}, 4)), ErrorKind::kCorruptData, "not a valid regular hyperslab");
  Bytes huge = BlocksV1({{0, 1}}, 1);
  huge[20] = 0xff;  // block count
  huge[21] = 0xff;
  EXPECT_ERROR(Decode(huge), ErrorKind::kCorruptData, "do not fit");
}

// A mapping list: version, entries, then per entry (flags,) names and selections, then checksum.
Bytes MappingList(uint8_t version, const std::vector<std::tuple<uint8_t, std::string, std::string>>& entries) {
  Bytes b;
  Put(&b, version, 1);
  Put(&b, entries.size(), 8);
  for (const auto& [flags, file, dataset] : entries) {
    if (version == 1) Put(&b, flags, 1);
    if (!(flags & 0x04)) {
      b.insert(b.end(), file.begin(), file.end());
      b.push_back(0);
    }
    b.insert(b.end(), dataset.begin(), dataset.end());
    b.push_back(0);
    Bytes src = AllSelection();
    Bytes dst = RegularV3({{2, 1, 1, 1}, {0, 1, 1, 10}}, 4);
    b.insert(b.end(), src.begin(), src.end());
    b.insert(b.end(), dst.begin(), dst.end());
  }
  Put(&b, Lookup3Hash(b), 4);
  return b;
}

TEST(H5VirtualMappings, VersionsZeroAndOneDecode) {
  Result<std::vector<VirtualMapping>> v0 = DecodeVirtualMappings(MappingList(0, {{0, "a.h5", "/d"}, {0, ".", "/x"}}), "f.h5: dataset /v");
  ASSERT_TRUE(v0.ok()) << v0.status().ToString();
  ASSERT_EQ(v0->size(), 2u);
  EXPECT_EQ((*v0)[0].source_file, "a.h5");
  EXPECT_EQ((*v0)[0].source_dataset, "/d");
  EXPECT_TRUE((*v0)[0].source.all);
  ExpectDim((*v0)[0].virtual_selection.dims[0], 2, 1, 1, 1);
  EXPECT_EQ((*v0)[1].source_file, ".");
  // Version 1: flag 0x04 leaves the file name out (the same file).
  Result<std::vector<VirtualMapping>> v1 = DecodeVirtualMappings(MappingList(1, {{0x04, "", "/x"}, {0, "b.h5", "/y"}}), "f.h5: dataset /v");
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ((*v1)[0].source_file, ".");
  EXPECT_EQ((*v1)[0].source_dataset, "/x");
  EXPECT_EQ((*v1)[1].source_file, "b.h5");
}

TEST(H5VirtualMappings, DamageIsRefusedNamingTheDataset) {
  Bytes list = MappingList(0, {{0, "a.h5", "/d"}});
  Bytes flipped = list;
  flipped[12] ^= 1;
  EXPECT_ERROR(DecodeVirtualMappings(flipped, "f.h5: dataset /v"), ErrorKind::kCorruptData, "f.h5: dataset /v",
               "checksum mismatch");
  EXPECT_ERROR(DecodeVirtualMappings(MappingList(2, {}), "f.h5: dataset /v"), ErrorKind::kCorruptData, "encoding version 2");
  EXPECT_ERROR(DecodeVirtualMappings(MappingList(1, {{0x02, "a.h5", "/d"}}), "f.h5: dataset /v"), ErrorKind::kUnsupported,
               "flags 0x02");
  EXPECT_ERROR(DecodeVirtualMappings(Bytes(5, 0), "f.h5: dataset /v"), ErrorKind::kCorruptData, "truncated");
  // An entry count the bytes cannot hold.
  Bytes many = MappingList(0, {{0, "a.h5", "/d"}});
  many[1] = 0xff;
  many.resize(many.size() - 4);
  Put(&many, Lookup3Hash(many), 4);
  EXPECT_ERROR(DecodeVirtualMappings(many, "f.h5: dataset /v"), ErrorKind::kCorruptData, "entries in");
}

TEST(H5VirtualMappings, PercentEscapesAndPrintfNames) {
  Result<std::vector<VirtualMapping>> escaped =
      DecodeVirtualMappings(MappingList(0, {{0, "a%%b.h5", "/d%%%%x"}}), "f.h5: dataset /v");
  ASSERT_TRUE(escaped.ok()) << escaped.status().ToString();
  EXPECT_EQ((*escaped)[0].source_file, "a%b.h5");
  EXPECT_EQ((*escaped)[0].source_dataset, "/d%%x");
  EXPECT_FALSE((*escaped)[0].printf_names);
  // "%b" asks for a source per block: only with an unlimited count of blocks in the virtual selection.
  EXPECT_ERROR(DecodeVirtualMappings(MappingList(0, {{0, "part%b.h5", "/d"}}), "f.h5: dataset /v"),
               ErrorKind::kUnsupported, "f.h5: dataset /v", "printf-style", "part%b.h5");
}

namespace fs = std::filesystem;

TEST(H5LinkedFiles, OnlyTheOwnTreeUnlessAllowed) {
  const fs::path root = fs::path(testing::TempDir()) / "linked_files_test";
  fs::remove_all(root);
  fs::create_directories(root / "in" / "sub");
  fs::create_directories(root / "out");
  std::ofstream(root / "out" / "secret.h5") << "x";
  std::ofstream(root / "in" / "sub" / "s.h5") << "x";
  fs::create_symlink(root / "out" / "secret.h5", root / "in" / "link.h5");
  const std::string referrer = (root / "in" / "vds.h5").string();
  const fs::path real_in = fs::canonical(root / "in");
  LinkedFilePolicy policy;

  Result<std::string> inside = ResolveLinkedFile(referrer, "sub/s.h5", policy, "f.h5: dataset /v: source 0");
  ASSERT_TRUE(inside.ok()) << inside.status().ToString();
  EXPECT_EQ(*inside, (real_in / "sub" / "s.h5").string());
  EXPECT_TRUE(ResolveLinkedFile(referrer, "sub/../sub/s.h5", policy, "w").ok());
  EXPECT_TRUE(ResolveLinkedFile(referrer, "not_yet_there.h5", policy, "w").ok());  // missing: found out on read

  const std::string secret = fs::canonical(root / "out" / "secret.h5").string();
  EXPECT_ERROR(ResolveLinkedFile(referrer, secret, policy, "f.h5: dataset /v: source 0"), ErrorKind::kFailedPrecondition,
               "f.h5: dataset /v: source 0", secret, real_in.string(), "hdf5_allowed_paths");
  EXPECT_ERROR(ResolveLinkedFile(referrer, "../out/secret.h5", policy, "w"), ErrorKind::kFailedPrecondition,
               "\"../out/secret.h5\"", secret);
  EXPECT_ERROR(ResolveLinkedFile(referrer, "link.h5", policy, "w"), ErrorKind::kFailedPrecondition, "\"link.h5\"", secret);
  EXPECT_ERROR(ResolveLinkedFile(referrer, "", policy, "w"), ErrorKind::kInvalidArgument, "empty");
  // A sibling directory whose name starts like the own one is not inside it.
  fs::create_directories(root / "in2");
  EXPECT_ERROR(ResolveLinkedFile(referrer, "../in2/x.h5", policy, "w"), ErrorKind::kFailedPrecondition, "in2");

  policy.allowed_paths = {(root / "out").string()};
  for (const char* name : {"link.h5", "../out/secret.h5"}) {
    Result<std::string> allowed = ResolveLinkedFile(referrer, name, policy, "w");
    ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
    EXPECT_EQ(*allowed, secret);
  }
  policy.allowed_paths = {secret};  // one file
  EXPECT_TRUE(ResolveLinkedFile(referrer, secret, policy, "w").ok());
}

TEST(H5LinkedFiles, OnAStoreOnlyTheOwnPrefix) {
  Result<std::string> key = ResolveLinkedKey("data/run1/vds.h5", "sub/s.h5", "w");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(*key, "data/run1/sub/s.h5");
  EXPECT_EQ(*ResolveLinkedKey("vds.h5", "s.h5", "w"), "s.h5");
  EXPECT_EQ(*ResolveLinkedKey("data/run1/vds.h5", "a/../s.h5", "w"), "data/run1/s.h5");
  EXPECT_ERROR(ResolveLinkedKey("data/run1/vds.h5", "../run2/s.h5", "s3://b/data/run1/vds.h5: source 0"),
               ErrorKind::kFailedPrecondition, "s3://b/data/run1/vds.h5: source 0", "\"../run2/s.h5\"", "data/run1/");
  EXPECT_ERROR(ResolveLinkedKey("data/run1/vds.h5", "/etc/passwd", "w"), ErrorKind::kFailedPrecondition, "/etc/passwd");
  EXPECT_ERROR(ResolveLinkedKey("vds.h5", "../x.h5", "w"), ErrorKind::kFailedPrecondition, "../x.h5");
}

}  // namespace
}  // namespace tessera::hdf5
