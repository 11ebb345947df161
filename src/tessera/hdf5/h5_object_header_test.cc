// ReadObjectHeader's "fail if unknown" rule, on version 1 headers built byte by byte.
#include "tessera/hdf5/h5_object_header.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cpp_support/status_matchers.h"

namespace tessera::hdf5 {
namespace {

void Put(Bytes* b, uint64_t v, int width) {
  for (int i = 0; i < width; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A version 1 object header at address 0 holding one message of `type` and `flags` with an 8-byte
// body:
//   version 1 | reserved | message count (u16) | reference count (u32) | header size (u32) | pad (4)
//   type (u16) | body size (u16) | flags (u8) | reserved (3) | body (8)
Result<ObjectHeader> ReadHeaderWithMessage(uint16_t type, uint8_t flags) {
  Bytes file;
  Put(&file, 1, 1);
  Put(&file, 0, 1);
  Put(&file, 1, 2);
  Put(&file, 1, 4);
  Put(&file, 16, 4);
  Put(&file, 0, 4);
  Put(&file, type, 2);
  Put(&file, 8, 2);
  Put(&file, flags, 1);
  Put(&file, 0, 3);
  Put(&file, 0x0000000100000001ull, 8);
  const std::string path = testing::TempDir() + "/oh_" + std::to_string(type) + "_" + std::to_string(flags) + ".bin";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(file.data()), file.size());
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<RawFile> raw, RawFile::Open(path));
  return ReadObjectHeader(*raw, 0);
}

constexpr uint8_t kFailIfUnknown = 0x80;

TEST(H5ObjectHeader, TheBogusMessageFlaggedFailIfUnknownRefusesTheObject) {
  // Type 0x0009 lies inside the range the specification numbers, but tessera does not interpret
  // it (nor does an HDF5 library built without H5O_ENABLE_BOGUS): it is not "known".
  EXPECT_ERROR(ReadHeaderWithMessage(0x0009, kFailIfUnknown), ErrorKind::kUnsupported, "object header message at 0x",
               "message type 9", "fail if unknown", "cannot be opened");
  EXPECT_ERROR(ReadHeaderWithMessage(0x0019, kFailIfUnknown), ErrorKind::kUnsupported, "message type 25");
  EXPECT_ERROR(ReadHeaderWithMessage(0x00C8, kFailIfUnknown), ErrorKind::kUnsupported, "message type 200");
}

TEST(H5ObjectHeader, UnflaggedOrKnownMessagesOpen) {
  // Unflagged, an unknown message is skipped, as the HDF5 library skips it.
  Result<ObjectHeader> unflagged = ReadHeaderWithMessage(0x0009, 0);
  ASSERT_TRUE(unflagged.ok()) << unflagged.status().ToString();
  EXPECT_NE(unflagged->Find(0x0009), nullptr);
  // Flagged messages tessera interprets, or that say nothing about values (modification time,
  // comment, reference count, B-tree 'K' values), open.
  for (uint16_t type : {0x0001, 0x0003, 0x0008, 0x000B, 0x000C, 0x000D, 0x000E, 0x0012, 0x0013, 0x0016}) {
    Result<ObjectHeader> oh = ReadHeaderWithMessage(type, kFailIfUnknown);
    EXPECT_TRUE(oh.ok()) << "type " << type << ": " << oh.status().ToString();
  }
  // Bit 3 ("fail if unknown and the file is opened for writing") does not concern a reader.
  EXPECT_TRUE(ReadHeaderWithMessage(0x0009, 0x08).ok());
}

}  // namespace
}  // namespace tessera::hdf5
