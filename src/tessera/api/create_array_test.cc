// CreateArray: an empty array opened r+ (zarr-python's create_array), refusing what exists unless
// asked to replace it, and refusing formats without region writes before touching anything.
#include "tessera/api/create_array.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cpp_support/api_helpers.h"
#include "cpp_support/status_matchers.h"
#include "tessera/write/region_write.h"

namespace tessera {
namespace {

using api_test::Uint16;
using status_test::IsError;
namespace fs = std::filesystem;

class CreateArrayTest : public api_test::TempDirTest {};

std::vector<uint16_t> ReadAll(const Array& a) {
  std::vector<uint16_t> out(static_cast<size_t>(Hyperslab::All(a.shape()).NumElements()));
  EXPECT_TRUE(a.Read(Hyperslab::All(a.shape()), out.data()).ok());
  return out;
}

TEST_F(CreateArrayTest, EmptyShardedZarrReadsFillAndTakesRegionWrites) {
  ArraySpec spec = Uint16({10, 12, 9}, {4, 5, 3}, {2, 2, 3});
  spec.fill_value = 7;
  auto a = CreateArray(Path("a.zarr"), spec).value();
  EXPECT_TRUE(a->writable());
  EXPECT_EQ(a->shape(), spec.shape);
  EXPECT_FALSE(fs::exists(dir_ / "a.zarr" / "c")) << "an empty array stores no chunk";
  std::vector<uint16_t> want(10 * 12 * 9, 7);
  EXPECT_EQ(ReadAll(*a), want);
  // A region (0:3, 2:11:2, ::-1) written and read back, also through a fresh open.
  const Hyperslab sel = a->Select("0:3, 2:11:2, ::-1").value();
  std::vector<uint16_t> values(static_cast<size_t>(sel.NumElements()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint16_t>(100 + i);
  ASSERT_TRUE(a->Write(sel, values.data()).ok());
  size_t k = 0;
  for (int64_t z = 0; z < 3; ++z)
    for (int64_t y = 2; y < 11; y += 2)
      for (int64_t x = 8; x >= 0; --x) want[static_cast<size_t>((z * 12 + y) * 9 + x)] = values[k++];
  EXPECT_EQ(ReadAll(*a), want);
  EXPECT_EQ(ReadAll(*OpenArray(Path("a.zarr")).value()), want);
}

TEST_F(CreateArrayTest, RefusesWhatExistsUnlessAskedToReplaceIt) {
  const ArraySpec spec = Uint16({8, 8}, {4, 4});
  auto a = CreateArray(Path("a.zarr"), spec).value();
  const uint16_t one = 1;
  Hyperslab all = Hyperslab::All(spec.shape);
  SourceView scalar;  // every stride 0: one value everywhere
  scalar.base = reinterpret_cast<const uint8_t*>(&one);
  ASSERT_TRUE(a->Write(all, scalar).ok());
  EXPECT_TRUE(IsError(CreateArray(Path("a.zarr"), spec).status(), ErrorKind::kAlreadyExists, {"a.zarr", "Zarr array"}));
  EXPECT_EQ(ReadAll(*OpenArray(Path("a.zarr")).value()), std::vector<uint16_t>(64, 1)) << "the refusal changed it";
  StreamOptions replace;
  replace.mode = Mode::kOverwrite;
  auto b = CreateArray(Path("a.zarr"), Uint16({3, 5}, {2, 2}), replace).value();
  EXPECT_EQ(b->shape(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(ReadAll(*b), std::vector<uint16_t>(15, 0));
  EXPECT_FALSE(fs::exists(dir_ / "a.zarr" / "c" / "1" / "1")) << "an old chunk was left behind";
}

TEST_F(CreateArrayTest, RefusesFormatsWithoutRegionWritesBeforeWritingAnything) {
  EXPECT_TRUE(IsError(CreateArray(Path("a.h5"), Uint16({4, 4}, {2, 2})).status(), ErrorKind::kUnsupported,
                      {"a.h5", "hdf5"}));
  EXPECT_FALSE(fs::exists(dir_ / "a.h5"));
  StreamOptions append;
  append.mode = Mode::kAppend;
  EXPECT_TRUE(IsError(CreateArray(Path("b.zarr"), Uint16({4, 4}, {2, 2}), append).status(),
                      ErrorKind::kInvalidArgument, {"mode a"}));
  EXPECT_FALSE(fs::exists(dir_ / "b.zarr"));
}

TEST_F(CreateArrayTest, EmptyPrecomputedVolumeTakesRegionWrites) {
  StreamOptions o;
  o.format = Format::kPrecomputed;
  ArraySpec spec = Uint16({6, 10, 12}, {4, 4, 4});
  auto a = CreateArray(Path("vol"), spec, o).value();
  EXPECT_EQ(a->format(), Format::kPrecomputed);
  const Hyperslab sel = a->Select("1:5, 3:9, 2:11").value();
  std::vector<uint16_t> values(static_cast<size_t>(sel.NumElements()), 513);
  ASSERT_TRUE(a->Write(sel, values.data()).ok());
  std::vector<uint16_t> want(6 * 10 * 12, 0);
  for (int64_t z = 1; z < 5; ++z)
    for (int64_t y = 3; y < 9; ++y)
      for (int64_t x = 2; x < 11; ++x) want[static_cast<size_t>((z * 10 + y) * 12 + x)] = 513;
  EXPECT_EQ(ReadAll(*OpenArray(Path("vol")).value()), want);
}

}  // namespace
}  // namespace tessera
