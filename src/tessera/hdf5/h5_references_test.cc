// Which references read (object references, as paths) and how the others are refused.
#include "tessera/hdf5/h5_references.h"

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"

namespace tessera::hdf5 {
namespace {

H5Type Reference(uint8_t reference_type, uint32_t size) {
  H5Type t;
  t.cls = H5TypeClass::kReference;
  t.reference_type = reference_type;
  t.size = size;
  return t;
}

TEST(H5References, ObjectReferencesReadAsTheirStoredAddress) {
  Result<NumpyElement> e = MapReferenceElement(Reference(0, 8), "f.h5: dataset /refs");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->numpy, "|V8");
  EXPECT_EQ(e->item_bytes, 8u);
  EXPECT_FALSE(e->dtype.has_value());
  EXPECT_TRUE(IsReference(Reference(0, 8)));
  // MapToNumpy sends a top-level reference here.
  Result<NumpyElement> mapped = MapToNumpy(Reference(0, 8), "f.h5: dataset /refs");
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ(mapped->numpy, "|V8");
}

TEST(H5References, OtherReferencesAreRefusedNamingTheirType) {
  EXPECT_ERROR(MapReferenceElement(Reference(1, 12), "f.h5: dataset /r"), ErrorKind::kUnsupported, "f.h5: dataset /r",
               "dataset region references");
  EXPECT_ERROR(MapReferenceElement(Reference(2, 64), "w"), ErrorKind::kUnsupported, "HDF5 1.12 object references");
  EXPECT_ERROR(MapReferenceElement(Reference(4, 64), "w"), ErrorKind::kUnsupported, "attribute references");
  EXPECT_ERROR(MapReferenceElement(Reference(9, 8), "w"), ErrorKind::kUnsupported, "references of type 9");
  EXPECT_ERROR(MapReferenceElement(Reference(0, 4), "w"), ErrorKind::kUnsupported, "4-byte object references");
}

}  // namespace
}  // namespace tessera::hdf5
