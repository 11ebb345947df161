// The datatype parser and its numpy mapping, on datatype messages built byte by byte.
#include "tessera/hdf5/h5_datatype.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>

#include "cpp_support/status_matchers.h"
#include "tessera/hdf5/h5_datatype_numpy.h"

namespace tessera::hdf5 {
namespace {

void Put(Bytes* b, uint64_t v, int width) {
  // Bytes past the eighth (a 16-byte field) are zero: shifting a uint64_t by 64 or more is undefined.
  for (int i = 0; i < width; ++i) b->push_back(i < 8 ? static_cast<uint8_t>(v >> (8 * i)) : 0);
}
// A null-terminated name, padded (from its start) to a multiple of `padded_to` bytes.
void PutText(Bytes* b, const std::string& s, size_t padded_to) {
  const size_t start = b->size();
  b->insert(b->end(), s.begin(), s.end());
  b->push_back(0);
  while (padded_to && (b->size() - start) % padded_to) b->push_back(0);
}

// Class/version byte, 3 bytes of class bits, 4 bytes of size.
void Header(Bytes* b, int cls, int version, uint32_t bits, uint32_t size) {
  Put(b, static_cast<uint64_t>(cls | (version << 4)), 1);
  Put(b, bits, 3);
  Put(b, size, 4);
}
// A fixed-point type: bit offset, precision.
Bytes Integer(uint32_t size, bool is_signed, bool big_endian, uint16_t offset = 0, uint16_t precision = 0) {
  Bytes b;
  Header(&b, 0, 1, (big_endian ? 1 : 0) | (is_signed ? 8 : 0), size);
  Put(&b, offset, 2);
  Put(&b, precision ? precision : size * 8, 2);
  return b;
}
Bytes Float64(bool big_endian) {
  Bytes b;
  Header(&b, 1, 1, (big_endian ? 1 : 0) | 0x20 | (63 << 8), 8);
  Put(&b, 0, 2);
  Put(&b, 64, 2);
  for (int v : {52, 11, 0, 52}) Put(&b, v, 1);
  Put(&b, 1023, 4);
  return b;
}
Bytes Float32() {
  Bytes b;
  Header(&b, 1, 1, 0x20 | (31 << 8), 4);
  Put(&b, 0, 2);
  Put(&b, 32, 2);
  for (int v : {23, 8, 0, 23}) Put(&b, v, 1);
  Put(&b, 127, 4);
  return b;
}

class DatatypeTest : public testing::Test {
 protected:
  void SetUp() override {
    const std::string path = testing::TempDir() + "/datatype_test.bin";
    std::ofstream(path, std::ios::binary).write("x", 1);
    file_ = RawFile::Open(path).value();
  }
  Result<H5Type> Parse(const Bytes& body) {
    FieldReader r(body, *file_, "datatype message", 0);
    return ParseH5Type(r, "test datatype");
  }
  std::shared_ptr<RawFile> file_;
};

TEST_F(DatatypeTest, CompoundVersion1MembersInFileOrderConvertToLittleEndian) {
  // {a: >i4 at 8, b: <f8 at 0}, 16 bytes (4 of padding at 12).
  Bytes b;
  Header(&b, 6, 1, 2, 16);
  for (auto [name, offset, type] : {std::tuple<std::string, uint32_t, Bytes>{"a", 8, Integer(4, true, true)},
                                    std::tuple<std::string, uint32_t, Bytes>{"b", 0, Float64(false)}}) {
    PutText(&b, name, 8);
    Put(&b, offset, 4);
    Put(&b, 0, 4 + 4 + 4);  // dimensionality + reserved, permutation, reserved
    Put(&b, 0, 8);          // dimension sizes
    Put(&b, 0, 8);
    b.insert(b.end(), type.begin(), type.end());
  }
  auto t_or = Parse(b);
  ASSERT_TRUE(t_or.ok()) << t_or.status().message();
  H5Type t = std::move(t_or).value();
  ASSERT_EQ(t.members.size(), 2u);
  auto e_or = MapToNumpy(t, "here");
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  NumpyElement e = std::move(e_or).value();
  EXPECT_FALSE(e.dtype.has_value());
  EXPECT_EQ(e.item_bytes, 16u);
  EXPECT_EQ(e.numpy, nlohmann::json::parse(R"({"names": ["a", "b"], "formats": ["<i4", "<f8"], "offsets": [8, 0],
                                                "itemsize": 16})"));
  uint8_t element[16] = {};
  element[8] = 0x01;  // big-endian 0x01020304
  element[9] = 0x02;
  element[10] = 0x03;
  element[11] = 0x04;
  ConvertToNumpy(e.steps, element, 1, 16);
  uint32_t a = 0;
  std::memcpy(&a, element + 8, 4);
  EXPECT_EQ(a, 0x01020304u);
}

TEST_F(DatatypeTest, CompoundVersion3OffsetsTakeOneByteForSmallElements) {
  Bytes b;
  Header(&b, 6, 3, 2, 9);
  PutText(&b, "name", 0);
  Put(&b, 0, 1);
  Bytes s;
  Header(&s, 3, 1, 0x01 | (1 << 4), 5);  // UTF-8, null-padded (as numpy's), 5 bytes
  b.insert(b.end(), s.begin(), s.end());
  PutText(&b, "v", 0);
  Put(&b, 5, 1);
  Bytes i = Integer(4, false, false);
  b.insert(b.end(), i.begin(), i.end());
  auto t_or = Parse(b);
  ASSERT_TRUE(t_or.ok()) << t_or.status().message();
  H5Type t = std::move(t_or).value();
  auto e_or = MapToNumpy(t, "here");
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  NumpyElement e = std::move(e_or).value();
  EXPECT_EQ(e.numpy["formats"], nlohmann::json::parse(R"(["|S5", "<u4"])"));
  EXPECT_EQ(e.numpy["offsets"], nlohmann::json::parse("[0, 5]"));
  EXPECT_TRUE(e.steps.empty());
}

TEST_F(DatatypeTest, PaddedIntegersUnpackAndSignExtend) {
  // 12 signed bits at bit 4 of a big-endian 2-byte integer.
  auto t_or = Parse(Integer(2, true, true, 4, 12));
  ASSERT_TRUE(t_or.ok()) << t_or.status().message();
  H5Type t = std::move(t_or).value();
  auto e_or = MapToNumpy(t, "here");
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  NumpyElement e = std::move(e_or).value();
  EXPECT_EQ(e.dtype, DataType::kInt16);
  // -3 in 12 bits is 0xffd; shifted by 4: 0xffd0, stored big-endian, low nibble garbage 0x5.
  uint8_t v[2] = {0xff, 0xd5};
  ConvertToNumpy(e.steps, v, 1, 2);
  int16_t out = 0;
  std::memcpy(&out, v, 2);
  EXPECT_EQ(out, -3);
}

TEST_F(DatatypeTest, EnumerationReadsAsItsBaseWithNamesInTheDescription) {
  Bytes b;
  Header(&b, 8, 3, 2, 1);
  Bytes base = Integer(1, false, false);
  b.insert(b.end(), base.begin(), base.end());
  PutText(&b, "RED", 0);
  PutText(&b, "GREEN", 0);
  Put(&b, 0, 1);
  Put(&b, 7, 1);
  auto t_or = Parse(b);
  ASSERT_TRUE(t_or.ok()) << t_or.status().message();
  H5Type t = std::move(t_or).value();
  auto e_or = MapToNumpy(t, "here");
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  NumpyElement e = std::move(e_or).value();
  EXPECT_EQ(e.dtype, DataType::kUInt8);
  EXPECT_NE(e.description.find("RED = 0, GREEN = 7"), std::string::npos) << e.description;
}

TEST_F(DatatypeTest, TopLevelArrayBecomesTrailingDimensions) {
  Bytes b;
  Header(&b, 10, 3, 0, 24);
  Put(&b, 2, 1);
  Put(&b, 2, 4);
  Put(&b, 3, 4);
  Bytes base = Integer(4, true, true);
  b.insert(b.end(), base.begin(), base.end());
  auto t_or = Parse(b);
  ASSERT_TRUE(t_or.ok()) << t_or.status().message();
  H5Type t = std::move(t_or).value();
  auto e_or = MapToNumpy(t, "here");
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  NumpyElement e = std::move(e_or).value();
  EXPECT_EQ(e.dtype, DataType::kInt32);
  EXPECT_EQ(e.trailing_dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(e.item_bytes, 4u);
}

TEST_F(DatatypeTest, CompoundOfFloatsNamedRAndIIsComplex) {
  Bytes b;
  Header(&b, 6, 3, 2, 8);
  for (auto [name, offset] : {std::pair<std::string, int>{"r", 0}, {"i", 4}}) {
    PutText(&b, name, 0);
    Put(&b, offset, 1);
    Bytes f = Float32();
    b.insert(b.end(), f.begin(), f.end());
  }
  auto t_or = Parse(b);
  ASSERT_TRUE(t_or.ok()) << t_or.status().message();
  H5Type t = std::move(t_or).value();
  auto e_or = MapToNumpy(t, "here");
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  NumpyElement e = std::move(e_or).value();
  EXPECT_EQ(e.dtype, DataType::kComplex64);
  EXPECT_EQ(e.numpy, "<c8");
}

TEST_F(DatatypeTest, OpaqueIsVoidAndVariableLengthInsideACompoundIsItsStoredBytes) {
  Bytes b;
  Header(&b, 5, 1, 8, 3);
  PutText(&b, "tag", 8);
  auto t_or = Parse(b);
  ASSERT_TRUE(t_or.ok()) << t_or.status().message();
  H5Type t = std::move(t_or).value();
  EXPECT_EQ(t.opaque_tag, "tag");
  auto e_or = MapToNumpy(t, "here");
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  NumpyElement e = std::move(e_or).value();
  EXPECT_EQ(e.numpy, "|V3");

  Bytes v;
  Header(&v, 9, 1, 1, 16);  // a string
  Bytes c;
  Header(&c, 0, 1, 0, 1);
  Put(&c, 0, 2);
  Put(&c, 8, 2);
  v.insert(v.end(), c.begin(), c.end());
  auto vt_or = Parse(v);
  ASSERT_TRUE(vt_or.ok()) << vt_or.status().message();
  H5Type vt = std::move(vt_or).value();
  EXPECT_EQ(vt.cls, H5TypeClass::kVariableLength);
  EXPECT_TRUE(vt.vlen_string);
  // Inside a compound (a field h5py reads as an object) the element reads as its stored bytes,
  // which the object reader resolves (h5_vlen_value.h).
  Bytes compound;
  Header(&compound, 6, 3, 1, 16);
  PutText(&compound, "s", 0);
  Put(&compound, 0, 1);
  compound.insert(compound.end(), v.begin(), v.end());
  auto ct_or = Parse(compound);
  ASSERT_TRUE(ct_or.ok()) << ct_or.status().message();
  Result<NumpyElement> mapped = MapToNumpy(*ct_or, "here");
  ASSERT_TRUE(mapped.ok()) << mapped.status().message();
  EXPECT_EQ(mapped->numpy, "|V16");
  EXPECT_EQ(mapped->description, "compound {s: vlen string (ASCII)}");
}

TEST_F(DatatypeTest, NullTerminatedAndSpacePaddedStringsReadNullPadded) {
  for (auto [padding, stored, want] : {std::tuple<int, std::string, std::string>{0, std::string("ab\0cd", 5), std::string("ab\0\0\0", 5)},
                                       {2, "ab   ", std::string("ab\0\0\0", 5)},
                                       {1, std::string("ab\0cd", 5), std::string("ab\0cd", 5)}}) {
    Bytes b;
    Header(&b, 3, 1, static_cast<uint32_t>(padding), 5);
    auto t_or = Parse(b);
    ASSERT_TRUE(t_or.ok()) << t_or.status().message();
    auto e_or = MapToNumpy(*t_or, "here");
    ASSERT_TRUE(e_or.ok()) << e_or.status().message();
    EXPECT_EQ(e_or->numpy, "|S5");
    std::string value = stored;
    ConvertToNumpy(e_or->steps, reinterpret_cast<uint8_t*>(value.data()), 1, 5);
    EXPECT_EQ(value, want) << "padding " << padding;
  }
}

TEST_F(DatatypeTest, NamesThatAreNotUtf8AreEscapedForJson) {
  Bytes b;
  Header(&b, 6, 3, 1, 1);
  PutText(&b, "caf\xe9", 0);  // Latin-1
  Put(&b, 0, 1);
  Bytes i = Integer(1, false, false);
  b.insert(b.end(), i.begin(), i.end());
  auto t_or = Parse(b);
  ASSERT_TRUE(t_or.ok()) << t_or.status().message();
  auto e_or = MapToNumpy(*t_or, "here");
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  EXPECT_EQ(e_or->numpy["names"][0], "caf\\xe9");
  EXPECT_NO_THROW((void)nlohmann::json(e_or->description).dump());
}

TEST_F(DatatypeTest, X87LongDoubleIsNumpysFloat128AndOtherPaddedFloatsAreConverted) {
  auto long_double = [](uint16_t precision) {
    Bytes b;
    Header(&b, 1, 1, 0x20 | (79 << 8), 16);
    Put(&b, 0, 2);
    Put(&b, precision, 2);
    for (int v : {64, 15, 0, 64}) Put(&b, v, 1);
    Put(&b, 16383, 4);
    return b;
  };
  auto t_or = Parse(long_double(80));
  ASSERT_TRUE(t_or.ok()) << t_or.status().message();
  auto e_or = MapToNumpy(*t_or, "here");
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  EXPECT_EQ(e_or->numpy, "<f16");
  EXPECT_FALSE(e_or->dtype.has_value());

  auto padded = Parse(long_double(79));
  ASSERT_TRUE(padded.ok()) << padded.status().message();
  // A 79-bit value in 16 bytes is no x87 number: the general conversion (h5_float_layout.h) reads it.
  auto e_padded = MapToNumpy(*padded, "here");
  ASSERT_TRUE(e_padded.ok()) << e_padded.status().message();
  EXPECT_EQ(e_padded->numpy, "<f16");
  ASSERT_EQ(e_padded->steps.size(), 1u);
  EXPECT_EQ(e_padded->steps[0].kind, ConvertStep::Kind::kConvertFloat);
}

TEST_F(DatatypeTest, CorruptTypesNameWhatIsWrong) {
  // A member that ends past the element.
  Bytes b;
  Header(&b, 6, 3, 1, 4);
  PutText(&b, "x", 0);
  Put(&b, 2, 1);
  Bytes i = Integer(4, false, false);
  b.insert(b.end(), i.begin(), i.end());
  Result<H5Type> t = Parse(b);
  EXPECT_EQ(t.status().kind(), ErrorKind::kCorruptData);
  EXPECT_NE(t.status().message().find("\"x\""), std::string::npos) << t.status().message();

  // Arrays nested beyond the depth limit.
  Bytes deep;
  for (int d = 0; d <= kMaxTypeDepth + 1; ++d) {
    Header(&deep, 10, 3, 0, 4);
    Put(&deep, 1, 1);
    Put(&deep, 1, 4);
  }
  Bytes leaf = Integer(4, false, false);
  deep.insert(deep.end(), leaf.begin(), leaf.end());
  EXPECT_EQ(Parse(deep).status().kind(), ErrorKind::kCorruptData);

  // A truncated message.
  Bytes cut = Integer(4, false, false);
  cut.resize(9);
  EXPECT_EQ(Parse(cut).status().kind(), ErrorKind::kCorruptData);
}

}  // namespace
}  // namespace tessera::hdf5
