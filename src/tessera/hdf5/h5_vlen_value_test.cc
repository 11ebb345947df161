// Hand-made datatypes and heap objects through VlenValuePlan: the numpy layout h5py gives a
// record holding variable-length members, the encodings of nested values, and the refusals.
#include "tessera/hdf5/h5_vlen_value.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cpp_support/h5_vlen_helpers.h"
#include "tessera/hdf5/h5_vlen.h"
#include "tessera/read/object_value_encoding.h"
#include "tessera/store/memory_store.h"

namespace tessera::hdf5 {
namespace {

using hdf5_test::ArrayOf;
using hdf5_test::Collection;
using hdf5_test::Integer;
using hdf5_test::PutLE;
using hdf5_test::VlenOf;
using hdf5_test::VlenString;

void PutReference(Bytes* out, uint32_t count, uint32_t index) {
  PutLE(out, count, 4);
  PutLE(out, 0, 8);  // the collection at address 0
  PutLE(out, index, 4);
}

H5Type Compound(uint32_t size, std::vector<std::pair<std::string, std::pair<uint32_t, H5Type>>> members) {
  H5Type t;
  t.cls = H5TypeClass::kCompound;
  t.size = size;
  for (auto& [name, at] : members) t.members.push_back(H5Member{name, at.first, {at.second}});
  return t;
}

class VlenValueTest : public ::testing::Test {
 protected:
  void SetUp() override { UseHeap({"abc", std::string("\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00", 12)}); }
  void UseHeap(const std::vector<std::string>& objects) {
    auto store = std::make_shared<MemoryStore>();
    ASSERT_TRUE(store->Set("v.h5", Collection(objects)).ok());
    Result<std::shared_ptr<RawFile>> file = RawFile::Open(store, "v.h5");
    ASSERT_TRUE(file.ok());
    heap_ = GlobalHeap::Of(*file);
  }
  Result<std::string> Encode(const VlenValuePlan& plan, const Bytes& stored) {
    HeapObjects objects(*heap_);
    std::string out;
    TESSERA_RETURN_IF_ERROR(plan.Encode(stored, objects, "v.h5: element 0", &out));
    return out;
  }
  std::shared_ptr<GlobalHeap> heap_;
};

TEST_F(VlenValueTest, CompoundLaysOutAsHdf5MemoryAndH5pyDo) {
  // {n: int16 BE @0, s: vlen string @2, v: vlen int32 @18, k: int8 @34}, 36 bytes stored. In
  // memory the string takes 8 bytes (a pointer), the sequence 16: v moves to 10, k to 26.
  const H5Type type = Compound(36, {{"n", {0, Integer(2, true)}},
                                    {"s", {2, VlenString()}},
                                    {"v", {18, VlenOf(Integer(4, false))}},
                                    {"k", {34, Integer(1, false)}}});
  Result<std::unique_ptr<VlenValuePlan>> plan = VlenValuePlan::Make(type, true, "v.h5: dataset /c");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const ObjectType& o = (*plan)->object_type();
  EXPECT_EQ(o.kind, ObjectKind::kRecord);
  EXPECT_EQ(nlohmann::json::parse(o.record_dtype),
            nlohmann::json::parse(R"({"names":["n","s","v","k"],"formats":["<i2","|O","|O","|i1"],)"
                                  R"("offsets":[0,2,10,26],"itemsize":28})"));
  EXPECT_EQ(o.record_bytes, 28u);
  EXPECT_EQ(o.slot_offsets, (std::vector<uint32_t>{2, 10}));
  ASSERT_EQ(o.slot_types.size(), 2u);
  EXPECT_EQ(o.slot_types[0].kind, ObjectKind::kBytes);  // nested strings are bytes, as h5py gives them
  EXPECT_EQ(o.slot_types[1].kind, ObjectKind::kSequence);
  EXPECT_EQ(o.slot_types[1].sequence_dtype, "<i4");
  EXPECT_EQ(o.name, "compound {n: int16 (big-endian), s: vlen string (UTF-8), v: vlen sequence of int32 (little-endian), k: int8}");

  Bytes stored = {0x01, 0x02};
  PutReference(&stored, 2, 1);  // "ab" of "abc"
  PutReference(&stored, 3, 2);
  stored.push_back(0xff);
  stored.push_back(0);  // padding
  Result<std::string> encoded = Encode(**plan, stored);
  ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
  ObjectPartReader parts(*encoded, "test");
  Result<std::string_view> fixed = parts.Raw(28);
  ASSERT_TRUE(fixed.ok());
  std::string want_fixed(28, '\0');
  want_fixed[0] = 0x02;  // swapped to little-endian
  want_fixed[1] = 0x01;
  want_fixed[26] = '\xff';
  EXPECT_EQ(*fixed, want_fixed);  // object slots zero
  EXPECT_EQ(*parts.Part(), "ab");
  EXPECT_EQ(parts.Part()->size(), 12u);
  EXPECT_EQ(parts.left(), 0u);
}

TEST_F(VlenValueTest, ArrayOfSequencesHoldsPointersEightBytesApartButSixteenInHdf5Memory) {
  const H5Type type = Compound(36, {{"a", {0, ArrayOf(VlenOf(Integer(4, false)), 2)}}, {"x", {32, Integer(4, false)}}});
  Result<std::unique_ptr<VlenValuePlan>> plan = VlenValuePlan::Make(type, true, "here");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const ObjectType& o = (*plan)->object_type();
  EXPECT_EQ(o.slot_offsets, (std::vector<uint32_t>{0, 8}));
  EXPECT_EQ(o.slot_type, (std::vector<uint32_t>{0, 0}));  // one plan for the array's elements
  EXPECT_EQ(nlohmann::json::parse(o.record_dtype),
            nlohmann::json::parse(R"({"names":["a","x"],"formats":[{"base":"|O","shape":[2]},"<i4"],)"
                                  R"("offsets":[0,32],"itemsize":36})"));
}

TEST_F(VlenValueTest, SequenceOfSequencesEncodesACountAndEachValue) {
  Result<std::unique_ptr<VlenValuePlan>> plan = VlenValuePlan::Make(VlenOf(VlenOf(Integer(4, false))), true, "here");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const ObjectType& o = (*plan)->object_type();
  ASSERT_EQ(o.kind, ObjectKind::kSequence);
  ASSERT_EQ(o.sequence_of.size(), 1u);
  EXPECT_EQ(o.sequence_of[0].sequence_dtype, "<i4");
  // The outer sequence's heap object holds two inner references.
  Bytes outer;
  PutReference(&outer, 3, 2);
  PutReference(&outer, 0, 0);
  UseHeap({"abc", std::string("\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00", 12),
           std::string(reinterpret_cast<const char*>(outer.data()), outer.size())});
  Bytes stored;
  PutReference(&stored, 2, 3);
  Result<std::string> encoded = Encode(**plan, stored);
  ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
  ObjectPartReader parts(*encoded, "test");
  EXPECT_EQ(*parts.Count(), 2u);
  EXPECT_EQ(parts.Part()->size(), 12u);
  EXPECT_EQ(parts.Part()->size(), 0u);  // a null reference: empty
  EXPECT_EQ(parts.left(), 0u);
  // A null outer reference is an empty encoding, an empty sequence.
  Bytes null_ref;
  PutReference(&null_ref, 0, 0);
  EXPECT_EQ(*Encode(**plan, null_ref), "");
}

TEST_F(VlenValueTest, SequenceOfAFixedArrayTypeIsItsSubarrayDtype) {
  Result<std::unique_ptr<VlenValuePlan>> plan = VlenValuePlan::Make(VlenOf(ArrayOf(Integer(2, true), 3)), true, "here");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(nlohmann::json::parse((*plan)->object_type().sequence_dtype), nlohmann::json::parse(R"({"base":"<i2","shape":[3]})"));
  UseHeap({std::string("\x00\x01\x00\x02\x00\x03", 6)});
  Bytes stored;
  PutReference(&stored, 1, 1);
  EXPECT_EQ(*Encode(**plan, stored), std::string("\x01\x00\x02\x00\x03\x00", 6));  // swapped
}

TEST_F(VlenValueTest, OverlappingMembersAndOtherReferenceSizesAreRefusedByName) {
  const H5Type overlapping = Compound(32, {{"a", {0, VlenString()}}, {"b", {8, Integer(4, false)}}});
  Result<std::unique_ptr<VlenValuePlan>> plan = VlenValuePlan::Make(overlapping, true, "f.h5: dataset /c");
  ASSERT_EQ(plan.status().kind(), ErrorKind::kCorruptData);
  EXPECT_NE(plan.status().message().find("f.h5: dataset /c: compound member \"b\" at byte 8 overlaps"), std::string::npos)
      << plan.status().message();
  H5Type small = VlenString();
  small.size = 12;  // 4-byte file offsets
  plan = VlenValuePlan::Make(Compound(12, {{"s", {0, small}}}), true, "f.h5: dataset /c");
  ASSERT_EQ(plan.status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(plan.status().message().find("variable-length references of 12 bytes"), std::string::npos);
}

TEST_F(VlenValueTest, ALengthPastTheHeapObjectNamesTheElement) {
  Result<std::unique_ptr<VlenValuePlan>> plan = VlenValuePlan::Make(Compound(16, {{"s", {0, VlenString()}}}), true, "here");
  ASSERT_TRUE(plan.ok());
  Bytes stored;
  PutReference(&stored, 9, 1);
  Result<std::string> encoded = Encode(**plan, stored);
  ASSERT_EQ(encoded.status().kind(), ErrorKind::kCorruptData);
  EXPECT_NE(encoded.status().message().find("v.h5: element 0"), std::string::npos) << encoded.status().message();
}

TEST(ObjectPartReaderTest, ShortPartsAreCorruptData) {
  std::string bytes;
  AppendObjectPart("abc", &bytes);
  bytes.pop_back();
  ObjectPartReader parts(bytes, "element 4");
  Result<std::string_view> part = parts.Part();
  ASSERT_EQ(part.status().kind(), ErrorKind::kCorruptData);
  EXPECT_NE(part.status().message().find("element 4: a part of 3 bytes"), std::string::npos) << part.status().message();
  ObjectPartReader empty("", "element 5");
  EXPECT_EQ(empty.Count().status().kind(), ErrorKind::kCorruptData);
}

}  // namespace
}  // namespace tessera::hdf5
