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

// A datatype message built field by field, each little-endian, as the format specification lays
// them out ("Datatype Message"): the 8-byte header, then the class's properties.
class Message {
 public:
  // Class/version byte, 3 bytes of class bits, 4 bytes of size.
  Message(int cls, int version, uint32_t bits, uint32_t size) {
    U(static_cast<uint64_t>(cls | (version << 4)), 1);
    U(bits, 3);
    U(size, 4);
  }
  Message& U(uint64_t v, int width) {
    // Bytes past the eighth (a 16-byte field) are zero: shifting a uint64_t by 64 or more is undefined.
    for (int i = 0; i < width; ++i) bytes_.push_back(i < 8 ? static_cast<uint8_t>(v >> (8 * i)) : 0);
    return *this;
  }
  // A null-terminated name, padded (from its start) to a multiple of `padded_to` bytes.
  Message& Text(const std::string& s, size_t padded_to) {
    const size_t start = bytes_.size();
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    bytes_.push_back(0);
    while (padded_to && (bytes_.size() - start) % padded_to) bytes_.push_back(0);
    return *this;
  }
  // A nested datatype message (a member's type, an array's or enumeration's base).
  Message& Type(const Bytes& type) {
    bytes_.insert(bytes_.end(), type.begin(), type.end());
    return *this;
  }
  // A version-3 compound member: its name, a 1-byte offset (elements under 256 bytes), its type.
  Message& Member(const std::string& name, uint8_t offset, const Bytes& type) {
    return Text(name, 0).U(offset, 1).Type(type);
  }
  operator Bytes() const { return bytes_; }  // NOLINT: a message is its bytes

 private:
  Bytes bytes_;
};

// A fixed-point type: bit offset, precision.
Bytes Integer(uint32_t size, bool is_signed, bool big_endian, uint16_t offset = 0, uint16_t precision = 0) {
  return Message(0, 1, (big_endian ? 1 : 0) | (is_signed ? 8 : 0), size).U(offset, 2).U(precision ? precision : size * 8, 2);
}
// An IEEE float: bit offset, precision, exponent location and size, mantissa location and size, bias.
Bytes IeeeFloat(uint32_t size, bool big_endian, int exponent_bits, int mantissa_bits, uint32_t bias) {
  return Message(1, 1, (big_endian ? 1 : 0) | 0x20 | ((size * 8 - 1) << 8), size)
      .U(0, 2)
      .U(size * 8, 2)
      .U(static_cast<uint64_t>(mantissa_bits), 1)
      .U(static_cast<uint64_t>(exponent_bits), 1)
      .U(0, 1)
      .U(static_cast<uint64_t>(mantissa_bits), 1)
      .U(bias, 4);
}
Bytes Float64(bool big_endian) { return IeeeFloat(8, big_endian, 11, 52, 1023); }
Bytes Float32() { return IeeeFloat(4, false, 8, 23, 127); }

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
  // The message parsed and mapped to its numpy form.
  Result<NumpyElement> ParseAndMap(const Bytes& body) {
    TESSERA_ASSIGN_OR_RETURN(H5Type t, Parse(body));
    return MapToNumpy(t, "here");
  }
  std::shared_ptr<RawFile> file_;
};

TEST_F(DatatypeTest, CompoundVersion1MembersInFileOrderConvertToLittleEndian) {
  // {a: >i4 at 8, b: <f8 at 0}, 16 bytes (4 of padding at 12).
  Message b(6, 1, 2, 16);
  for (auto [name, offset, type] : {std::tuple<std::string, uint32_t, Bytes>{"a", 8, Integer(4, true, true)},
                                    std::tuple<std::string, uint32_t, Bytes>{"b", 0, Float64(false)}}) {
    // Version 1: the name padded to 8 bytes, a 4-byte offset, dimensionality + reserved,
    // permutation, reserved, four dimension sizes (unused), the type.
    b.Text(name, 8).U(offset, 4).U(0, 4 + 4 + 4).U(0, 8).U(0, 8).Type(type);
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
  const Bytes utf8_string = Message(3, 1, 0x01 | (1 << 4), 5);  // UTF-8, null-padded (as numpy's), 5 bytes
  auto e_or = ParseAndMap(Message(6, 3, 2, 9).Member("name", 0, utf8_string).Member("v", 5, Integer(4, false, false)));
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  NumpyElement e = std::move(e_or).value();
  EXPECT_EQ(e.numpy["formats"], nlohmann::json::parse(R"(["|S5", "<u4"])"));
  EXPECT_EQ(e.numpy["offsets"], nlohmann::json::parse("[0, 5]"));
  EXPECT_TRUE(e.steps.empty());
}

TEST_F(DatatypeTest, PaddedIntegersUnpackAndSignExtend) {
  // 12 signed bits at bit 4 of a big-endian 2-byte integer.
  auto e_or = ParseAndMap(Integer(2, true, true, 4, 12));
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
  // Version 3: the base type, the names, then the values (one base element each).
  auto e_or = ParseAndMap(Message(8, 3, 2, 1).Type(Integer(1, false, false)).Text("RED", 0).Text("GREEN", 0).U(0, 1).U(7, 1));
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  NumpyElement e = std::move(e_or).value();
  EXPECT_EQ(e.dtype, DataType::kUInt8);
  EXPECT_NE(e.description.find("RED = 0, GREEN = 7"), std::string::npos) << e.description;
}

TEST_F(DatatypeTest, TopLevelArrayBecomesTrailingDimensions) {
  // Version 3: rank, the dimension sizes, the base type.
  auto e_or = ParseAndMap(Message(10, 3, 0, 24).U(2, 1).U(2, 4).U(3, 4).Type(Integer(4, true, true)));
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  NumpyElement e = std::move(e_or).value();
  EXPECT_EQ(e.dtype, DataType::kInt32);
  EXPECT_EQ(e.trailing_dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(e.item_bytes, 4u);
}

TEST_F(DatatypeTest, CompoundOfFloatsNamedRAndIIsComplex) {
  auto e_or = ParseAndMap(Message(6, 3, 2, 8).Member("r", 0, Float32()).Member("i", 4, Float32()));
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  NumpyElement e = std::move(e_or).value();
  EXPECT_EQ(e.dtype, DataType::kComplex64);
  EXPECT_EQ(e.numpy, "<c8");
}

TEST_F(DatatypeTest, OpaqueIsVoidAndVariableLengthInsideACompoundIsItsStoredBytes) {
  auto t_or = Parse(Message(5, 1, 8, 3).Text("tag", 8));
  ASSERT_TRUE(t_or.ok()) << t_or.status().message();
  H5Type t = std::move(t_or).value();
  EXPECT_EQ(t.opaque_tag, "tag");
  auto e_or = MapToNumpy(t, "here");
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  NumpyElement e = std::move(e_or).value();
  EXPECT_EQ(e.numpy, "|V3");

  const Bytes v = Message(9, 1, 1, 16).Type(Integer(1, false, false));  // a string of 1-byte characters
  auto vt_or = Parse(v);
  ASSERT_TRUE(vt_or.ok()) << vt_or.status().message();
  H5Type vt = std::move(vt_or).value();
  EXPECT_EQ(vt.cls, H5TypeClass::kVariableLength);
  EXPECT_TRUE(vt.vlen_string);
  // Inside a compound (a field h5py reads as an object) the element reads as its stored bytes,
  // which the object reader resolves (h5_vlen_value.h).
  Result<NumpyElement> mapped = ParseAndMap(Message(6, 3, 1, 16).Member("s", 0, v));
  ASSERT_TRUE(mapped.ok()) << mapped.status().message();
  EXPECT_EQ(mapped->numpy, "|V16");
  EXPECT_EQ(mapped->description, "compound {s: vlen string (ASCII)}");
}

TEST_F(DatatypeTest, NullTerminatedAndSpacePaddedStringsReadNullPadded) {
  for (auto [padding, stored, want] : {std::tuple<int, std::string, std::string>{0, std::string("ab\0cd", 5), std::string("ab\0\0\0", 5)},
                                       {2, "ab   ", std::string("ab\0\0\0", 5)},
                                       {1, std::string("ab\0cd", 5), std::string("ab\0cd", 5)}}) {
    auto e_or = ParseAndMap(Message(3, 1, static_cast<uint32_t>(padding), 5));
    ASSERT_TRUE(e_or.ok()) << e_or.status().message();
    EXPECT_EQ(e_or->numpy, "|S5");
    std::string value = stored;
    ConvertToNumpy(e_or->steps, reinterpret_cast<uint8_t*>(value.data()), 1, 5);
    EXPECT_EQ(value, want) << "padding " << padding;
  }
}

TEST_F(DatatypeTest, NamesThatAreNotUtf8AreEscapedForJson) {
  auto e_or = ParseAndMap(Message(6, 3, 1, 1).Member("caf\xe9", 0, Integer(1, false, false)));  // Latin-1
  ASSERT_TRUE(e_or.ok()) << e_or.status().message();
  EXPECT_EQ(e_or->numpy["names"][0], "caf\\xe9");
  EXPECT_NO_THROW((void)nlohmann::json(e_or->description).dump());
}

TEST_F(DatatypeTest, X87LongDoubleIsNumpysFloat128AndOtherPaddedFloatsAreConverted) {
  auto long_double = [](uint16_t precision) -> Bytes {
    return Message(1, 1, 0x20 | (79 << 8), 16).U(0, 2).U(precision, 2).U(64, 1).U(15, 1).U(0, 1).U(64, 1).U(16383, 4);
  };
  auto e_or = ParseAndMap(long_double(80));
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
  Result<H5Type> t = Parse(Message(6, 3, 1, 4).Member("x", 2, Integer(4, false, false)));
  EXPECT_EQ(t.status().kind(), ErrorKind::kCorruptData);
  EXPECT_NE(t.status().message().find("\"x\""), std::string::npos) << t.status().message();

  // Arrays nested beyond the depth limit.
  Bytes deep = Integer(4, false, false);
  for (int d = 0; d <= kMaxTypeDepth + 1; ++d) deep = Message(10, 3, 0, 4).U(1, 1).U(1, 4).Type(deep);  // [1] of it
  EXPECT_EQ(Parse(deep).status().kind(), ErrorKind::kCorruptData);

  // A truncated message.
  Bytes cut = Integer(4, false, false);
  cut.resize(9);
  EXPECT_EQ(Parse(cut).status().kind(), ErrorKind::kCorruptData);
}

}  // namespace
}  // namespace tessera::hdf5

namespace tessera::hdf5 {
namespace {

H5Type X87In12Bytes(bool big_endian) {
  H5Type t;
  t.cls = H5TypeClass::kFloatingPoint;
  t.size = 12;
  t.big_endian = big_endian;
  t.precision = 80;
  t.sign_location = 79;
  t.exponent_location = 64;
  t.exponent_size = 15;
  t.mantissa_location = 0;
  t.mantissa_size = 64;
  t.exponent_bias = 16383;
  t.mantissa_normalization = 0;
  return t;
}

TEST(LongDouble12Test, WidensToNumpysFloat128InEitherByteOrder) {
  // 1.5 as x87: mantissa 0xC000000000000000, exponent 0x3FFF; the file's last 2 bytes are padding.
  const uint8_t le[12] = {0, 0, 0, 0, 0, 0, 0, 0xc0, 0xff, 0x3f, 0xaa, 0xbb};
  for (bool big_endian : {false, true}) {
    auto e_or = MapToNumpy(X87In12Bytes(big_endian), "here");
    ASSERT_TRUE(e_or.ok()) << e_or.status().message();
    const NumpyElement& e = *e_or;
    EXPECT_EQ(e.numpy, "<f16");
    EXPECT_EQ(e.item_bytes, 16u);
    EXPECT_EQ(e.widened_from_bytes, 12u);
    EXPECT_TRUE(e.steps.empty());
    EXPECT_EQ(NumpyBytesOf(e, 36), 48u);
    Bytes data;
    for (int i = 0; i < 3; ++i) {
      for (int k = 0; k < 12; ++k) data.push_back(big_endian ? le[11 - k] : le[k]);
    }
    WidenToNumpy(e, &data);
    ASSERT_EQ(data.size(), 48u);
    for (int i = 0; i < 3; ++i) {
      for (int k = 0; k < 16; ++k) EXPECT_EQ(data[i * 16 + k], k < 10 ? le[k] : 0) << i << " " << k;
    }
  }
}

TEST(LongDouble12Test, InsideACompoundIsRefusedByName) {
  // Widening inside a compound would move the members after it: refused, not misread.
  auto f_or = FloatLayoutOf(X87In12Bytes(false), "here");
  ASSERT_FALSE(f_or.ok());
  EXPECT_NE(f_or.status().message().find("12-byte floating point"), std::string::npos) << f_or.status().message();
}

}  // namespace
}  // namespace tessera::hdf5
