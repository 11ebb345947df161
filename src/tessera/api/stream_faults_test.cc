// Streams into a store that fails (tests/cpp_support/faulty_store.h), for every format: the Nth write
// failing for every N a clean stream makes, the store filling up, short reads. Each time: a
// clear error that names the key, the stream aborted, nothing that was in the store before lost
// or changed, and of the new array exactly what it published (what a crash at that moment would
// leave; HDF5, written at Close: no new file, the old one intact). (Local HDF5 files are written
// with pwrite, not through a store: tests/interop/test_disk_full.py fills a real tmpfs under them.)
#include <algorithm>
#include <functional>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "tessera/api/array.h"
#include "cpp_support/api_helpers.h"
#include "cpp_support/faulty_store.h"
#include "tessera/api/stream.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using api_test::Uint16;

using store_test::FaultyStoreState;

std::vector<uint16_t> Values(int64_t n, uint32_t seed) {
  std::vector<uint16_t> v(static_cast<size_t>(n));
  std::mt19937 rng(seed);
  for (auto& x : v) x = static_cast<uint16_t>(1 + rng() % 60000);
  return v;
}

int64_t Elements(const ArraySpec& spec, int64_t rows) {
  int64_t n = rows;
  for (size_t d = 1; d < spec.shape.size(); ++d) n *= spec.shape[d];
  return n;
}

// Streams `data` in a few uneven appends with a flush between; the first error, or OK.
Status StreamAll(const std::string& location, const ArraySpec& spec, Format format, const std::vector<uint16_t>& data,
                 std::unique_ptr<Stream>* kept = nullptr, Mode mode = Mode::kCreate) {
  StreamOptions o;
  o.format = format;
  o.threads = 2;
  o.mode = mode;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Stream> s, CreateStream(location, spec, o));
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  const size_t total = data.size() * 2;
  const size_t cuts[] = {0, total / 5 + 3, total / 2, total};
  Status st;
  for (int i = 0; i < 3 && st.ok(); ++i) {
    st = s->Append(ByteView(bytes + cuts[i], cuts[i + 1] - cuts[i]));
    if (st.ok() && i == 1) st = s->Flush();
  }
  if (st.ok()) st = s->Close();
  if (!st.ok() && s->state() != StreamState::kAborted)
    return FailedPrecondition("a stream that failed (" + st.ToString() + ") is not aborted");
  if (kept) *kept = std::move(s);
  return st;
}

void ExpectReadsBack(const std::string& location, const std::vector<uint16_t>& data, int scale = 0) {
  OpenOptions options;
  options.scale = scale;
  Result<std::unique_ptr<Array>> a = OpenArray(location, options);
  ASSERT_TRUE(a.ok()) << location << ": " << a.status().ToString();
  const Hyperslab all = Hyperslab::All((*a)->shape());
  ASSERT_EQ(all.NumElements(), static_cast<int64_t>(data.size())) << location;
  std::vector<uint16_t> got(data.size());
  ASSERT_TRUE((*a)->Read(all, got.data()).ok()) << location;
  EXPECT_TRUE(got == data) << location << " reads back other values";
}

std::map<std::string, Bytes> Snapshot(const FaultyStoreState& state) {
  std::map<std::string, Bytes> out;
  const std::vector<std::string> keys = state.memory.List("").value();
  for (const std::string& key : keys) out[key] = *state.memory.Get(key).value();
  return out;
}

struct FaultCase {
  const char* name;
  Format format;
  std::string location;
  ArraySpec spec;
  int64_t rows;
  // An array already at `location` that the stream replaces or extends (precomputed: scale s0 of
  // the volume the stream adds scale s1 to, mode a; HDF5: the previous file, mode w).
  std::optional<ArraySpec> previous;
  int scale = 0;  // precomputed: the scale the stream writes, by index
  Mode mode = Mode::kCreate;
};

std::vector<FaultCase> Cases() {
  ArraySpec zstd_sharded = Uint16({12, 20, 24}, {4, 8, 8}, {1, 2, 3});
  zstd_sharded.codec = Codec::kZstd;
  ArraySpec scale1 = Uint16({6, 10, 12}, {4, 8, 8});
  scale1.precomputed.scale_key = "s1";
  scale1.precomputed.resolution_xyz = {2, 2, 2};
  ArraySpec h5 = Uint16({0, 20, 24}, {4, 8, 8});
  h5.codec = Codec::kGzip;
  return {
      {"zarr sharded", Format::kZarr3, "faulty://new/sharded.zarr", zstd_sharded, 12, std::nullopt},
      {"zarr unbounded", Format::kZarr3, "faulty://new/unbounded.zarr", Uint16({0, 20, 24}, {4, 8, 8}), 12,
       std::nullopt},
      {"precomputed", Format::kPrecomputed, "faulty://new/volume", Uint16({12, 20, 24}, {4, 8, 8}), 12, std::nullopt},
      {"precomputed sharded", Format::kPrecomputed, "faulty://new/sharded_volume", Uint16({12, 20, 24}, {4, 8, 8}, {2, 2, 2}),
       12, std::nullopt},
      {"precomputed scale added", Format::kPrecomputed, "faulty://old/volume", scale1, 6,
       Uint16({12, 20, 24}, {4, 8, 8}), 1, Mode::kAppend},
      {"hdf5", Format::kHdf5, "faulty://old/file.h5", h5, 12, Uint16({5, 20, 24}, {4, 8, 8}), 0, Mode::kOverwrite},
  };
}

// A store holding an unrelated array, and `c.previous` at c.location when there is one.
std::shared_ptr<FaultyStoreState> Prepared(const FaultCase& c, std::vector<uint16_t>* previous_data) {
  auto state = std::make_shared<FaultyStoreState>();
  store_test::RegisterFaultyScheme(state);
  const ArraySpec other = Uint16({6, 8, 8}, {4, 4, 4}, {1, 2, 2});
  EXPECT_TRUE(StreamAll("faulty://keep/other.zarr", other, Format::kZarr3, Values(6 * 64, 1)).ok());
  if (c.previous) {
    *previous_data = Values(Elements(*c.previous, c.previous->shape[0]), 2);
    EXPECT_TRUE(StreamAll(c.location, *c.previous, c.format, *previous_data).ok());
  }
  return state;
}

// The first `rows` rows of the array at `location` (scale `scale`) read back as the first rows of
// `data`; a Zarr array (whose shape grows as rows are published) has exactly `rows` rows.
void ExpectPublishedRows(const FaultCase& c, const std::vector<uint16_t>& data, int64_t rows) {
  OpenOptions options;
  options.scale = c.scale;
  Result<std::unique_ptr<Array>> a = OpenArray(c.location, options);
  ASSERT_TRUE(a.ok()) << c.location << ": " << a.status().ToString();
  if (c.format == Format::kZarr3) EXPECT_EQ((*a)->shape()[0], rows);
  if (rows == 0) return;
  Hyperslab sel = Hyperslab::All((*a)->shape());
  sel.dims[0] = {0, 1, rows};
  std::vector<uint16_t> got(static_cast<size_t>(sel.NumElements()));
  ASSERT_TRUE((*a)->Read(sel, got.data()).ok()) << c.location;
  EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin())) << c.location << ": published rows differ";
}

// What a failed stream must leave: everything that was there before, unchanged (the info of a
// volume the stream adds a scale to may list it); of the new array exactly what it published
// (`stream`, null when CreateStream itself failed: nothing); HDF5 no new file, the old one intact.
void ExpectNothingLost(const FaultCase& c, const FaultyStoreState& state, const std::map<std::string, Bytes>& before,
                       const std::vector<uint16_t>& previous_data, const std::vector<uint16_t>& data,
                       const Stream* stream, const std::string& what) {
  SCOPED_TRACE(what);
  const std::map<std::string, Bytes> after = Snapshot(state);
  for (const auto& [key, value] : before) {
    auto it = after.find(key);
    ASSERT_TRUE(it != after.end()) << key << " was lost";
    if (c.scale > 0 && key == "old/volume/info") continue;
    EXPECT_TRUE(it->second == value) << key << " was changed";
  }
  if (c.previous) ExpectReadsBack(c.location, previous_data);
  const bool created = stream != nullptr && c.format != Format::kHdf5;
  if (created) {
    ExpectPublishedRows(c, data, stream->stats().rows_published);
  } else if (c.scale > 0) {  // the scale the stream was adding is not in the info
    OpenOptions options;
    options.scale = c.scale;
    EXPECT_ERROR(OpenArray(c.location, options), ErrorKind::kOutOfRange, "scale");
  } else if (!c.previous) {
    EXPECT_ERROR(OpenArray(c.location), ErrorKind::kNotFound, c.location);
  }
  ExpectReadsBack("faulty://keep/other.zarr", Values(6 * 64, 1));
}

// What a stream of `data` costs in a prepared store without faults (it must read back exactly).
struct StreamCost {
  int64_t writes = 0;
  uint64_t bytes = 0;
};
StreamCost CleanRun(const FaultCase& c, const std::vector<uint16_t>& data, std::vector<uint16_t>* previous_data) {
  auto state = Prepared(c, previous_data);
  const int64_t writes_before = state->writes;
  const uint64_t bytes_before = state->used;
  EXPECT_TRUE(StreamAll(c.location, c.spec, c.format, data, nullptr, c.mode).ok());
  ExpectReadsBack(c.location, data, c.scale);
  return {state->writes - writes_before, state->used - bytes_before};
}

// Streams `data` into a freshly prepared store with a fault `arm`ed: the stream fails with an io
// error naming `message` and is aborted, and the store (given room again) has lost nothing.
void ExpectFailedStreamLosesNothing(const FaultCase& c, const std::vector<uint16_t>& data,
                                    std::vector<uint16_t>* previous_data,
                                    const std::function<void(FaultyStoreState&)>& arm, const char* message,
                                    const std::string& what) {
  auto state = Prepared(c, previous_data);
  const std::map<std::string, Bytes> before = Snapshot(*state);
  arm(*state);
  std::unique_ptr<Stream> s;
  EXPECT_ERROR(StreamAll(c.location, c.spec, c.format, data, &s, c.mode), ErrorKind::kIo, "faulty://", message) << what;
  if (s) EXPECT_EQ(s->state(), StreamState::kAborted) << what;
  state->capacity_bytes = 0;
  ExpectNothingLost(c, *state, before, *previous_data, data, s.get(), what);
}

TEST(StreamFaultsTest, EveryFailedWriteLeavesAClearErrorAndNothingLost) {
  for (const FaultCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    const std::vector<uint16_t> data = Values(Elements(c.spec, c.rows), 3);
    std::vector<uint16_t> previous_data;
    const int64_t writes = CleanRun(c, data, &previous_data).writes;
    ASSERT_GT(writes, 0);

    for (int64_t n = 1; n <= writes; ++n) {
      ExpectFailedStreamLosesNothing(
          c, data, &previous_data, [n](FaultyStoreState& state) { state.fail_write = state.writes + n; },
          "injected failure", "write " + std::to_string(n) + " of " + std::to_string(writes) + " fails");
    }
  }
}

TEST(StreamFaultsTest, AFullStoreLeavesAClearErrorAndNothingLost) {
  for (const FaultCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    const std::vector<uint16_t> data = Values(Elements(c.spec, c.rows), 4);
    std::vector<uint16_t> previous_data;
    const uint64_t needed = CleanRun(c, data, &previous_data).bytes;
    for (double fraction : {0.0, 0.3, 0.7, 0.95}) {
      const uint64_t room = static_cast<uint64_t>(fraction * static_cast<double>(needed)) + 1;
      ExpectFailedStreamLosesNothing(
          c, data, &previous_data, [room](FaultyStoreState& state) { state.capacity_bytes = state.used + room; },
          "no space left", "full after " + std::to_string(static_cast<int>(fraction * 100)) + "% of the stream");
    }
  }
}

TEST(StreamFaultsTest, ShortReadsAreErrorsThatNameTheKeyNeverData) {
  for (const FaultCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    const std::vector<uint16_t> data = Values(Elements(c.spec, c.rows), 5);
    std::vector<uint16_t> previous_data;
    auto state = Prepared(c, &previous_data);
    ASSERT_TRUE(StreamAll(c.location, c.spec, c.format, data, nullptr, c.mode).ok());
    OpenOptions options;
    options.scale = c.scale;
    // Short from the first read (the metadata), then from the first data read (chunks, shard and
    // minishard indices, HDF5 blocks) of an array opened before.
    for (bool open_first : {false, true}) {
      SCOPED_TRACE(open_first ? "short data reads" : "short metadata reads");
      state->short_reads = !open_first;
      Result<std::unique_ptr<Array>> a = OpenArray(c.location, options);
      state->short_reads = true;
      Status st = a.status();
      if (a.ok()) {
        std::vector<uint16_t> got(data.size());
        st = (*a)->Read(Hyperslab::All((*a)->shape()), got.data());
        // An HDF5 file this small is in the reader's block cache since it opened: what it returns
        // must then be exact.
        if (st.ok() && open_first && c.format == Format::kHdf5) {
          EXPECT_TRUE(got == data) << "values read from the cache differ";
          continue;
        }
      }
      ASSERT_FALSE(st.ok()) << "a read of short values succeeded";
      EXPECT_TRUE(st.kind() == ErrorKind::kCorruptData || st.kind() == ErrorKind::kIo) << st.ToString();
      EXPECT_NE(st.message().find("faulty://"), std::string::npos) << st.ToString();
    }
  }
}

}  // namespace
}  // namespace tessera
