#include <gtest/gtest.h>

#include <functional>

#include "cpp_support/status_matchers.h"
#include "tessera/hdf5/filter_decoders.h"

namespace tessera::hdf5 {
namespace {

const std::string kWhat = "chunk (0) of f.h5 at 0x100..0x180";

Filter Nbit(std::vector<uint32_t> client_data) {
  return {kFilterNbit, kFilterOptional, "nbit", std::move(client_data)};
}

// Three little-endian uint16 with 5 significant bits at bit offset 3: values 0b10110, 0b00001,
// 0b11111 packed most significant bit first: 10110 00001 11111 -> 1011 0000 0111 1110 (+ zero pad).
TEST(Hdf5NbitFilter, UnpacksAtomicBitsToTheirOffset) {
  Bytes out;
  const Bytes packed = {0xB0, 0x7E};
  ASSERT_TRUE(DecodeNbit(Nbit({8, 0, 3, 1, 2, 0, 5, 3}), packed, 6, true, kWhat, &out).ok());
  EXPECT_EQ(out, (Bytes{0x16 << 3, 0, 0x01 << 3, 0, 0xF8, 0}));
  // Big-endian: the same bits, the element's bytes in the other order.
  ASSERT_TRUE(DecodeNbit(Nbit({8, 0, 3, 1, 2, 1, 5, 3}), packed, 6, true, kWhat, &out).ok());
  EXPECT_EQ(out, (Bytes{0, 0x16 << 3, 0, 0x01 << 3, 0, 0xF8}));
}

TEST(Hdf5NbitFilter, CompoundMembersUnpackInClientDataOrderAndNoOpBytesWhole) {
  // A 3-byte compound: member at byte 2 (atomic uint8, 4 bits at offset 0), then a no-op member of
  // 2 bytes at byte 0. Stream: 1001 | 0xAB | 0xCD -> 1001 1010 1011 1100 1101 0000.
  Bytes out;
  const Bytes packed = {0x9A, 0xBC, 0xD0};
  ASSERT_TRUE(DecodeNbit(Nbit({14, 0, 1, 3, 3, 2, 2, 1, 1, 0, 4, 0, 0, 4, 2}), packed, 3, true, kWhat, &out).ok());
  EXPECT_EQ(out, (Bytes{0xAB, 0xCD, 0x09}));
}

TEST(Hdf5NbitFilter, NoPackingPassesBytesThrough) {
  Bytes out;
  ASSERT_TRUE(DecodeNbit(Nbit({8, 1, 2, 1, 4, 0, 32, 0}), Bytes{1, 2, 3}, 8, true, kWhat, &out).ok());
  EXPECT_EQ(out, (Bytes{1, 2, 3}));  // the filter before it (a compressor) gave the size
}

TEST(Hdf5NbitFilter, DamagedStreamsAndClientDataAreCorruptNamingTheChunk) {
  Bytes out;
  EXPECT_ERROR(DecodeNbit(Nbit({8, 0, 4, 1, 2, 0, 5, 3}), Bytes{0xB0, 0x7C}, 8, true, kWhat, &out),
               ErrorKind::kCorruptData, kWhat, "2 stored bytes end before the chunk's 4 elements");
  EXPECT_ERROR(DecodeNbit(Nbit({8, 0, 3, 1, 2, 0, 5, 3}), Bytes{0xB0, 0x7C}, 8, true, kWhat, &out),
               ErrorKind::kCorruptData, "3 elements of 2 bytes", "8 bytes");
  EXPECT_ERROR(DecodeNbit(Nbit({8, 0, 1, 1, 2, 0, 13, 4}), Bytes{0, 0}, 2, true, kWhat, &out),
               ErrorKind::kCorruptData, "precision 13 at bit offset 4", "2-byte type");
  EXPECT_ERROR(DecodeNbit(Nbit({8, 0, 1, 7, 2}), Bytes{0}, 2, true, kWhat, &out), ErrorKind::kCorruptData,
               "type class 7");
  EXPECT_ERROR(DecodeNbit(Nbit({8, 0, 1, 3, 4, 1, 0}), Bytes{0}, 4, true, kWhat, &out), ErrorKind::kCorruptData,
               "client data ends", "type class");
  EXPECT_ERROR(DecodeNbit(Nbit({8, 0, 1, 1, 16, 0, 80, 0}), Bytes(10, 0), 16, true, kWhat, &out),
               ErrorKind::kUnsupported, "16-byte atomic type");
}

TEST(Hdf5NbitFilter, OverlappingCompoundMembersCannotMultiplyTheWork) {
  // A hostile description: 4-byte compounds whose two members both sit at byte 0 and are again such
  // a compound, 12 levels deep, over a 32-bit integer: 2^12 leaves of 32 bits in one 4-byte element.
  // Refused from the bit count before anything is unpacked.
  std::vector<uint32_t> cd = {0, 0, 1};
  std::function<void(int)> level = [&](int depth) {
    if (depth == 12) {
      cd.insert(cd.end(), {1, 4, 0, 32, 0});
      return;
    }
    cd.insert(cd.end(), {3, 4, 2});
    for (int m = 0; m < 2; ++m) {
      cd.push_back(0);  // member offset
      level(depth + 1);
    }
  };
  level(0);
  Bytes out;
  EXPECT_ERROR(DecodeNbit(Nbit(cd), Bytes(64, 0), 4, true, kWhat, &out), ErrorKind::kCorruptData,
               "64 stored bytes end before the chunk's 1 elements are unpacked (131072 bits)");
}

TEST(Hdf5NbitFilter, EmptyCompoundsCannotMultiplyTheWorkEither) {
  // Compounds of no members pack 0 bits, so the bit count cannot bound them: one 65536-byte array of
  // 1-byte compounds, each of 1000 members that are again empty 1-byte compounds, all at byte 0,
  // would have Unpack visit 65 million types for a 64 KiB chunk of 16 stored bytes. Refused from the
  // node count before anything is unpacked.
  std::vector<uint32_t> cd = {0, 0, 1, 2, 65536, 3, 1, 1000};
  for (int m = 0; m < 1000; ++m) cd.insert(cd.end(), {0, 3, 1, 0});
  Bytes out;
  EXPECT_ERROR(DecodeNbit(Nbit(cd), Bytes(16, 0), 65536, true, kWhat, &out), ErrorKind::kCorruptData,
               "the client data's type visits 65601537 types for 1 elements of 65536 bytes");
}

}  // namespace
}  // namespace tessera::hdf5
