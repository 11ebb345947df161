// The dtype kind predicates (IsInteger, IsSignedInteger, IsRealFloat, IsFloatingPoint) over every
// dtype: bool is no integer, complex no real float.
#include <gtest/gtest.h>

#include "tessera/core/dtype.h"

namespace tessera {
namespace {

TEST(DtypeKindTest, EveryDtypeHasItsKinds) {
  struct Kinds {
    DataType dtype;
    bool integer, signed_integer, real_float, floating_point;
  };
  const Kinds kinds[] = {
      {DataType::kBool, false, false, false, false},       {DataType::kInt8, true, true, false, false},
      {DataType::kInt16, true, true, false, false},        {DataType::kInt32, true, true, false, false},
      {DataType::kInt64, true, true, false, false},        {DataType::kUInt8, true, false, false, false},
      {DataType::kUInt16, true, false, false, false},      {DataType::kUInt32, true, false, false, false},
      {DataType::kUInt64, true, false, false, false},      {DataType::kFloat16, false, false, true, true},
      {DataType::kFloat32, false, false, true, true},      {DataType::kFloat64, false, false, true, true},
      {DataType::kComplex64, false, false, false, true},   {DataType::kComplex128, false, false, false, true},
  };
  for (const Kinds& k : kinds) {
    SCOPED_TRACE(DataTypeName(k.dtype));
    EXPECT_EQ(IsInteger(k.dtype), k.integer);
    EXPECT_EQ(IsSignedInteger(k.dtype), k.signed_integer);
    EXPECT_EQ(IsRealFloat(k.dtype), k.real_float);
    EXPECT_EQ(IsFloatingPoint(k.dtype), k.floating_point);
  }
}

}  // namespace
}  // namespace tessera
