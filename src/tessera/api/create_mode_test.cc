// Creating where something exists (issue 25): w- refuses before writing anything and names what is
// there; w removes the array (any format, an OME-Zarr image with its levels) wholly and nothing
// beside it; an HDF5 file is never extended with a dataset; convert never replaces its source.
#include "tessera/api/create_mode.h"

#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "cpp_support/api_helpers.h"
#include "cpp_support/status_matchers.h"
#include "tessera/api/array.h"
#include "tessera/api/convert.h"
#include "tessera/api/driver_registry.h"
#include "tessera/api/shared_write.h"
#include "tessera/api/stream.h"

namespace tessera {
namespace {

using api_test::Uint16;
namespace fs = std::filesystem;

class CreateModeTest : public api_test::TempDirTest {};

std::vector<uint16_t> Values(int64_t n, uint32_t seed) {
  std::vector<uint16_t> v(static_cast<size_t>(n));
  std::mt19937 rng(seed);
  for (auto& x : v) x = static_cast<uint16_t>(1 + rng() % 60000);
  return v;
}

int64_t Elements(const ArraySpec& spec) {
  int64_t n = 1;
  for (int64_t v : spec.shape) n *= v;
  return n;
}

Status Write(const std::string& location, const ArraySpec& spec, const std::vector<uint16_t>& data,
             Mode mode = Mode::kCreate, std::optional<Format> format = std::nullopt) {
  StreamOptions o;
  o.mode = mode;
  o.format = format;
  o.threads = 2;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Stream> s, CreateStream(location, spec, o));
  TESSERA_RETURN_IF_ERROR(s->Append(ByteView(reinterpret_cast<const uint8_t*>(data.data()), data.size() * 2)));
  return s->Close();
}

void ExpectReadsBack(const std::string& location, const std::vector<int64_t>& shape, const std::vector<uint16_t>& data,
                     const OpenOptions& options = {}) {
  auto a = OpenArray(location, options);
  ASSERT_TRUE(a.ok()) << location << ": " << a.status().ToString();
  ASSERT_EQ((*a)->shape(), shape) << location;
  std::vector<uint16_t> got(data.size());
  ASSERT_TRUE((*a)->Read(Hyperslab::All(shape), got.data()).ok()) << location;
  EXPECT_TRUE(got == data) << location << " reads back other values";
}

// Every file under `dir`, relative to it.
std::vector<std::string> FilesUnder(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(CreateModeTest, CreatingWhereSomethingExistsNamesItAndWritesNothing) {
  const ArraySpec spec = Uint16({8, 8, 8}, {4, 4, 4});
  const std::vector<uint16_t> data = Values(Elements(spec), 1);
  ASSERT_TRUE(Write(Path("a.zarr"), spec, data).ok());
  ArraySpec image = spec;
  image.pyramid.levels = 2;
  ASSERT_TRUE(Write(Path("image.zarr"), image, data).ok());
  ASSERT_TRUE(Write(Path("volume"), spec, data, Mode::kCreate, Format::kPrecomputed).ok());
  ASSERT_TRUE(Write(Path("f.h5"), spec, data).ok());
  fs::create_directories(Path("notes"));
  std::ofstream(Path("notes/readme.txt")) << "mine";
  std::ofstream(Path("plain.txt")) << "mine";

  struct Case {
    std::string location;
    std::optional<Format> format;
    std::vector<std::string> named;
  };
  const std::vector<Case> cases = {
      {Path("a.zarr"), std::nullopt, {"a Zarr array (zarr.json)", "mode w replaces"}},
      {Path("a.zarr"), Format::kPrecomputed, {"a Zarr array (zarr.json)"}},
      {Path("image.zarr"), std::nullopt, {"an OME-Zarr image of 2 level(s)", "levels 0, 1"}},
      {Path("volume"), Format::kPrecomputed, {"a precomputed image volume of 1 scale(s) (info; s0)"}},
      {Path("volume"), Format::kZarr3, {"a precomputed image volume"}},
      {Path("f.h5"), std::nullopt,
       {"an HDF5 file", "cannot add a dataset to an existing one", "mode w replaces"}},
      {Path("notes"), std::nullopt, {"a non-empty directory (1 entry, e.g. readme.txt)"}},
      {Path("plain.txt"), Format::kHdf5, {"a file that is no array tessera reads"}},
  };
  const std::vector<std::string> before = FilesUnder(dir_);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.location);
    StreamOptions o;
    o.format = c.format;
    std::vector<std::string> named = c.named;
    named.insert(named.begin(), c.location);
    Result<std::unique_ptr<Stream>> s = CreateStream(c.location, spec, o);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().kind(), ErrorKind::kAlreadyExists) << s.status().ToString();
    for (const std::string& part : named)
      EXPECT_NE(s.status().message().find(part), std::string::npos) << s.status().ToString() << " lacks " << part;
    // The plan of a stream that would be refused is the refusal.
    EXPECT_EQ(PlanStream(c.location, spec, o).status().kind(), ErrorKind::kAlreadyExists);
  }
  // An HDF5 file with another dataset: refused, the file kept as it was.
  ArraySpec second = spec;
  second.hdf5.dataset = "/cam2/frames";
  EXPECT_ERROR(CreateStream(Path("f.h5"), second), ErrorKind::kAlreadyExists, "cannot add a dataset");
  EXPECT_EQ(FilesUnder(dir_), before);
  ExpectReadsBack(Path("a.zarr"), spec.shape, data);
  ExpectReadsBack(Path("f.h5"), spec.shape, data);
  // An empty directory is nothing: the array is created in it.
  fs::create_directories(Path("empty.zarr"));
  EXPECT_TRUE(Write(Path("empty.zarr"), spec, data).ok());
  // Discarding streams store nothing and so refuse nothing.
  StreamOptions discard;
  discard.discard = true;
  EXPECT_TRUE(CreateStream(Path("a.zarr"), spec, discard).ok());
}

TEST_F(CreateModeTest, OverwriteRemovesTheOldArrayWhollyAndNothingBesideIt) {
  // A longer array with a shard row the new one does not reach (c/1/0/0), and a sibling.
  const ArraySpec old_spec = Uint16({16, 8, 8}, {4, 4, 4}, {2, 2, 2});
  ASSERT_TRUE(Write(Path("parent/a.zarr"), old_spec, Values(Elements(old_spec), 1)).ok());
  ASSERT_TRUE(fs::exists(Path("parent/a.zarr/c/1/0/0")));
  const ArraySpec sibling = Uint16({4, 8, 8}, {4, 4, 4});
  const std::vector<uint16_t> sibling_data = Values(Elements(sibling), 2);
  ASSERT_TRUE(Write(Path("parent/b.zarr"), sibling, sibling_data).ok());

  const ArraySpec spec = Uint16({6, 8, 8}, {4, 4, 4}, {1, 2, 2});
  const std::vector<uint16_t> data = Values(Elements(spec), 3);
  ASSERT_TRUE(Write(Path("parent/a.zarr"), spec, data, Mode::kOverwrite).ok());
  ExpectReadsBack(Path("parent/a.zarr"), spec.shape, data);
  EXPECT_FALSE(fs::exists(Path("parent/a.zarr/c/2/0/0")));  // the old shard rows went with the old array
  EXPECT_FALSE(fs::exists(Path("parent/a.zarr/c/3/0/0")));
  ExpectReadsBack(Path("parent/b.zarr"), sibling.shape, sibling_data);

  // An OME-Zarr image of 3 levels replaced by a plain array: no level folder is left behind.
  ArraySpec image = Uint16({16, 16, 16}, {4, 4, 4});
  image.pyramid.levels = 3;
  ASSERT_TRUE(Write(Path("parent/image.zarr"), image, Values(Elements(image), 4)).ok());
  ASSERT_TRUE(fs::exists(Path("parent/image.zarr/2/zarr.json")));
  ASSERT_TRUE(Write(Path("parent/image.zarr"), spec, data, Mode::kOverwrite).ok());
  EXPECT_FALSE(fs::exists(Path("parent/image.zarr/0")));
  EXPECT_FALSE(fs::exists(Path("parent/image.zarr/2")));
  ExpectReadsBack(Path("parent/image.zarr"), spec.shape, data);

  // A precomputed volume of 2 scales replaced: its info and both scale folders go; a file beside
  // them that is not a scale stays.
  ArraySpec volume = Uint16({16, 16, 16}, {4, 4, 4});
  volume.pyramid.levels = 2;
  ASSERT_TRUE(Write(Path("vol"), volume, Values(Elements(volume), 5), Mode::kCreate, Format::kPrecomputed).ok());
  std::ofstream(Path("vol/provenance")) << "{}";
  ASSERT_TRUE(fs::exists(Path("vol/s1")));
  ASSERT_TRUE(Write(Path("vol"), spec, data, Mode::kOverwrite, Format::kPrecomputed).ok());
  EXPECT_FALSE(fs::exists(Path("vol/s1")));
  EXPECT_TRUE(fs::exists(Path("vol/provenance")));
  ExpectReadsBack(Path("vol"), spec.shape, data);

  // A format replaced by another: a Zarr array by a precomputed volume.
  ASSERT_TRUE(Write(Path("parent/b.zarr"), spec, data, Mode::kOverwrite, Format::kPrecomputed).ok());
  EXPECT_FALSE(fs::exists(Path("parent/b.zarr/zarr.json")));
  EXPECT_FALSE(fs::exists(Path("parent/b.zarr/c")));
  ExpectReadsBack(Path("parent/b.zarr"), spec.shape, data);

  // An HDF5 file replaced whole (its other datasets included).
  const ArraySpec old_file = Uint16({16, 8, 8}, {4, 4, 4});
  ASSERT_TRUE(Write(Path("f.h5"), old_file, Values(Elements(old_file), 6)).ok());
  ArraySpec frames = Uint16({6, 8, 8}, {4, 4, 4});
  frames.hdf5.dataset = "/cam2/frames";
  const Status replaced = Write(Path("f.h5"), frames, data, Mode::kOverwrite);
  ASSERT_TRUE(replaced.ok()) << replaced.ToString();
  ExpectReadsBack(Path("f.h5"), spec.shape, data);  // its only dataset
  OpenOptions old_dataset;
  old_dataset.dataset = "/data";
  EXPECT_ERROR(OpenArray(Path("f.h5"), old_dataset), ErrorKind::kNotFound, "/data");
}

TEST_F(CreateModeTest, OverwriteRefusesWhatIsNotOneArray) {
  const ArraySpec spec = Uint16({4, 8, 8}, {4, 4, 4});
  const std::vector<uint16_t> data = Values(Elements(spec), 1);
  // A directory of the caller's files is not an array to replace.
  fs::create_directories(Path("mine"));
  std::ofstream(Path("mine/thesis.tex")) << "mine";
  EXPECT_ERROR(Write(Path("mine"), spec, data, Mode::kOverwrite), ErrorKind::kAlreadyExists, Path("mine"),
               "a non-empty directory", "mode w replaces only an array tessera recognises");
  EXPECT_TRUE(fs::exists(Path("mine/thesis.tex")));
  // A Zarr group that is not an OME-Zarr image holds arrays of its own.
  ASSERT_TRUE(Write(Path("group/cam1"), spec, data).ok());
  fs::create_directories(Path("group"));
  std::ofstream(Path("group/zarr.json")) << R"({"zarr_format": 3, "node_type": "group", "attributes": {}})";
  EXPECT_ERROR(Write(Path("group"), spec, data, Mode::kOverwrite), ErrorKind::kFailedPrecondition, Path("group"),
               "a Zarr group (zarr.json)", "only an array or an OME-Zarr image is replaced whole");
  ExpectReadsBack(Path("group/cam1"), spec.shape, data);
  // Read-only and read-write modes do not create.
  EXPECT_ERROR(Write(Path("new.zarr"), spec, data, Mode::kReadWrite), ErrorKind::kInvalidArgument, "mode r+");
}

TEST_F(CreateModeTest, ReplacingAnHdf5FileKeepsTheOldOneUntilTheNewIsComplete) {
  const ArraySpec spec = Uint16({4, 8, 8}, {4, 4, 4});
  const std::vector<uint16_t> data = Values(Elements(spec), 1);
  ASSERT_TRUE(Write(Path("f.h5"), spec, data).ok());
  StreamOptions o;
  o.mode = Mode::kOverwrite;
  auto s = CreateStream(Path("f.h5"), spec, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE((*s)->Append(ByteView(reinterpret_cast<const uint8_t*>(data.data()), 512)).ok());
  (*s)->Abort();
  ExpectReadsBack(Path("f.h5"), spec.shape, data);
}

TEST_F(CreateModeTest, ConvertRefusesToReplaceItsOwnSourceAndSharedArraysTakeTheMode) {
  const ArraySpec spec = Uint16({8, 8, 8}, {4, 4, 4}, {2, 2, 2});
  const std::vector<uint16_t> data = Values(Elements(spec), 1);
  ASSERT_TRUE(Write(Path("a.zarr"), spec, data).ok());
  auto source = OpenArray(Path("a.zarr"));
  ASSERT_TRUE(source.ok());
  StreamOptions o;
  o.mode = Mode::kOverwrite;
  EXPECT_ERROR(Convert(**source, Path("a.zarr"), spec, o), ErrorKind::kInvalidArgument, "into itself");
  EXPECT_ERROR(Convert(**source, dir_.string() + "/./a.zarr", spec, o), ErrorKind::kInvalidArgument, "into itself");
  EXPECT_ERROR(Convert(**source, Path("a.zarr"), spec), ErrorKind::kAlreadyExists, "a Zarr array");
  ExpectReadsBack(Path("a.zarr"), spec.shape, data);
  EXPECT_TRUE(Convert(**source, Path("b.zarr"), spec).ok());
  EXPECT_ERROR(Convert(**source, Path("b.zarr"), spec), ErrorKind::kAlreadyExists, Path("b.zarr"));
  EXPECT_TRUE(Convert(**source, Path("b.zarr"), spec, o).ok());
  ExpectReadsBack(Path("b.zarr"), spec.shape, data);

  // Scale-out: the array is created once, by CreateSharedArray, which takes the mode.
  EXPECT_ERROR(CreateSharedArray(Path("a.zarr"), spec, {}), ErrorKind::kAlreadyExists, "a Zarr array");
  EXPECT_TRUE(CreateSharedArray(Path("a.zarr"), spec, o).ok());
  auto replaced = OpenArray(Path("a.zarr"));
  ASSERT_TRUE(replaced.ok());
  std::vector<uint16_t> got(data.size(), 1);
  ASSERT_TRUE((*replaced)->Read(Hyperslab::All(spec.shape), got.data()).ok());
  EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](uint16_t v) { return v == 0; })) << "old shards were left";
}

}  // namespace
}  // namespace tessera
