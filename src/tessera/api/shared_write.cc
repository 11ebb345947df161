#include "tessera/api/shared_write.h"

#include <malloc.h>

#include <mutex>

#include "tessera/api/create_mode.h"
#include "tessera/api/driver_registry.h"
#include "tessera/spec/spec_error.h"
#include "tessera/api/stream_lifecycle.h"
#include "tessera/api/pyramid_stream.h"
#include "tessera/core/page_buffer.h"
#include "tessera/core/text.h"
#include "tessera/stream/layout.h"
#include "tessera/index/chunk_grid.h"

namespace tessera {
namespace {

// The released stream buffers a process writing regions keeps for its next region.
constexpr size_t kRegionBufferPoolBytes = size_t{1} << 30;

using Target = api_internal::Resolved;

// CreateStream's resolution, and what a shared array cannot be.
Result<Target> Resolve(const std::string& location, const ArraySpec& spec, const StreamOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(Target t, api_internal::Resolve(location, spec, options));
  TESSERA_RETURN_IF_ERROR(DriverOf(t.format).CheckSharedWriting());
  if (options.discard) return FieldError(ErrorKind::kUnsupported, "discard", "a shared array is written to its store");
  if (t.spec.reorders_arrival())
    return FieldError(ErrorKind::kUnsupported, "arrival_order",
                      "regions are written in stored order (arrival_order is for streams: tessera.create)");
  if (t.spec.shape[0] == 0)
    return FieldError(ErrorKind::kInvalidArgument, "shape", "an array written by many processes has a fixed shape (shape[0] > 0)");
  return t;
}

// Level `level`'s location: the array itself, or where the multiscale array keeps that level.
Location LevelLocation(const Target& t, int level) {
  return t.spec.multiscale() ? DriverOf(t.format).LevelLocation(t.location, level) : t.location;
}

// Per dimension, the downsample factor from `from` to `to` (>= from) levels.
std::vector<int64_t> FactorBetween(const ArraySpec& s, int from, int to) {
  std::vector<int64_t> f(s.shape.size(), 1);
  for (int k = from; k < to; ++k)
    for (size_t d = 0; d < f.size(); ++d) f[d] *= s.pyramid.factors[d];
  return f;
}

Status CheckRegion(const Target& t, const Region& r, bool aligned_to_own_level) {
  const ArraySpec& s = t.spec;
  if (r.level < 0 || r.level >= s.level_count())
    return OutOfRange("region: level " + std::to_string(r.level) + " is not a level of the array (it has " +
                      std::to_string(s.level_count()) + ")");
  const size_t rank = s.shape.size();
  if (r.origin.size() != rank || r.shape.size() != rank)
    return InvalidArgument("region: origin " + JoinIntegers(r.origin) + " and shape " + JoinIntegers(r.shape) + " for a rank-" +
                           std::to_string(rank) + " array");
  const std::vector<int64_t> extent = LevelSpec(s, t.format, r.level).shape;
  TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> shard, LevelShardShape(s, t.format, r.level));
  for (size_t d = 0; d < rank; ++d) {
    if (r.origin[d] < 0 || r.shape[d] <= 0 || r.origin[d] > extent[d] - r.shape[d])
      return OutOfRange("region: origin " + JoinIntegers(r.origin) + " shape " + JoinIntegers(r.shape) + " leaves level " +
                        std::to_string(r.level) + " of shape " + JoinIntegers(extent));
    const int64_t end = r.origin[d] + r.shape[d];
    if (aligned_to_own_level && (r.origin[d] % shard[d] != 0 || (end % shard[d] != 0 && end != extent[d])))
      return InvalidArgument("region: origin " + JoinIntegers(r.origin) + " shape " + JoinIntegers(r.shape) +
                             " is not shard-aligned in dimension " + std::to_string(d) + ": regions start at multiples of the shard shape " +
                             JoinIntegers(shard) + " and end at one or at the edge (" + JoinIntegers(extent) + ")");
  }
  return Status::Ok();
}

// A level a region does not write (its data only feeds the levels above): takes rows, stores nothing.
class SkippedLevel final : public api_internal::LifecycleStream {
 public:
  SkippedLevel(Format format, ArraySpec spec, int64_t row_bytes)
      : LifecycleStream(format, std::move(spec)), row_bytes_(row_bytes) {}
  Status Append(ByteView) override { return CheckOpen("Append"); }
  Result<int64_t> AppendFrom(const stream::StreamWriter::ReadFn&) override {
    return Unsupported("AppendFrom: a region's data is appended");
  }
  Status Flush() override { return CheckOpen("Flush"); }
  Status Close() override {
    TESSERA_RETURN_IF_ERROR(CheckOpen("Close"));
    MarkClosed();
    return Status::Ok();
  }
  StreamStatistics stats() const override { return {}; }
  int64_t row_bytes() const override { return row_bytes_; }
  std::string DescribePlan() const override { return ""; }

 private:
  void Abandon() override {}
  const int64_t row_bytes_;
};

// A process writing regions writes many, one after another (a Dask worker): memory it has touched
// once is much cheaper to reuse than fresh pages (a fault each; on a virtual machine a host fault
// too). So the writer's large buffers are kept for the next region, and glibc is asked to keep
// freed chunk-sized blocks in its heap rather than unmap them: Dask's nanny starts workers with
// MALLOC_TRIM_THRESHOLD_=65536, which also switches off glibc's adaptive mmap threshold, so every
// chunk buffer would otherwise be a fresh mapping. Bounded: at most kRegionBufferPoolBytes of kept
// buffers and 256 MiB of free heap.
void KeepMemoryForTheNextRegion() {
  PageBuffer::SetReusePoolBytes(kRegionBufferPoolBytes);
#ifdef M_MMAP_THRESHOLD
  static std::once_flag once;
  std::call_once(once, [] {
    (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, 256 << 20);
  });
#endif
}

}  // namespace

Result<std::vector<int64_t>> LevelShardShape(const ArraySpec& resolved, Format format, int level) {
  TESSERA_ASSIGN_OR_RETURN(stream::StreamLayout layout,
                           DriverOf(format).Plan(LevelSpec(resolved, format, level), 1));
  return std::vector<int64_t>(layout.shard_shape, layout.shard_shape + resolved.shape.size());
}

Result<int> LastCoveredLevel(const ArraySpec& s, Format format, const Region& r) {
  const std::vector<int64_t> extent = LevelSpec(s, format, r.level).shape;
  int last = r.level;
  for (int j = r.level + 1; j < s.level_count(); ++j) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> shard, LevelShardShape(s, format, j));
    const std::vector<int64_t> f = FactorBetween(s, r.level, j);
    for (size_t d = 0; d < extent.size(); ++d) {
      const int64_t unit = f[d] * shard[d];
      const int64_t end = r.origin[d] + r.shape[d];
      if (r.origin[d] % unit != 0 || (end % unit != 0 && end != extent[d])) return last;
    }
    last = j;
  }
  return last;
}

Result<LevelToRead> LevelReadBack(const std::string& location, const ArraySpec& resolved, Format format, int level) {
  TESSERA_ASSIGN_OR_RETURN(Location parsed, ParseLocation(location));
  LevelToRead out;
  out.location = location;
  const driver::FormatDriver& d = DriverOf(format);
  if (resolved.multiscale()) out.location = d.LevelLocation(parsed, level).ToString();
  out.open_level = d.OpenLevelOf(level);
  return out;
}

Result<std::vector<Region>> RegionsFor(const ArraySpec& s, Format format, int level) {
  if (level < 0 || level + 1 >= s.level_count())
    return FieldError(ErrorKind::kOutOfRange, "level", "" + std::to_string(level) + " has no level above it (the array has " +
                      std::to_string(s.level_count()) + ")");
  const std::vector<int64_t> extent = LevelSpec(s, format, level).shape;
  TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> shard, LevelShardShape(s, format, level + 1));
  const size_t rank = extent.size();
  // The regions are the chunks of a grid whose chunk is one shard of the next level, upsampled.
  std::vector<int64_t> block(rank);
  for (size_t d = 0; d < rank; ++d) block[d] = shard[d] * s.pyramid.factors[d];
  const index::ChunkGrid grid(extent, block);
  std::vector<Region> out;
  std::vector<int64_t> at(rank);
  for (int64_t i = 0; i < grid.ChunkCount(); ++i) {
    grid.Unravel(i, at.data());
    Region r;
    r.level = level;
    r.origin.resize(rank);
    r.shape.resize(rank);
    grid.ChunkBox(at.data(), r.origin.data(), r.shape.data());
    out.push_back(std::move(r));
  }
  return out;
}

Result<ArraySpec> CreateSharedArray(const std::string& location, const ArraySpec& spec, const StreamOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(Target t, Resolve(location, spec, options));
  // The one call that creates the array: what is there is refused (w-) or removed (w) first.
  TESSERA_RETURN_IF_ERROR(api_internal::PrepareToCreate(t.location, t.format, options.mode));
  for (int j = 0; j < t.spec.level_count(); ++j) {
    Status st = DriverOf(t.format).CreateMetadata(LevelSpec(t.spec, t.format, j), LevelLocation(t, j));
    if (!st.ok()) {
      (void)AbandonSharedArray(location, spec, options);
      return st;
    }
  }
  return t.spec;
}

namespace {

// The stream a region is written through (its levels as a pyramid of its own) and the last level
// it completes.
struct RegionStream {
  std::unique_ptr<Stream> stream;
  int last = 0;
};

Result<RegionStream> OpenRegionStream(const std::string& location, const ArraySpec& spec, const StreamOptions& options,
                                      const Region& region, bool write_own_level) {
  TESSERA_ASSIGN_OR_RETURN(Target t, Resolve(location, spec, options));
  TESSERA_RETURN_IF_ERROR(CheckRegion(t, region, write_own_level));
  KeepMemoryForTheNextRegion();
  RegionStream out;
  TESSERA_ASSIGN_OR_RETURN(out.last, LastCoveredLevel(t.spec, t.format, region));
  if (!write_own_level && out.last == region.level)
    return InvalidArgument("region: origin " + JoinIntegers(region.origin) + " shape " + JoinIntegers(region.shape) + " of level " +
                           std::to_string(region.level) + " covers no whole shard of the level above (see RegionsFor)");
  // The region as an array of its own, with the levels it covers as its pyramid.
  ArraySpec part = LevelSpec(t.spec, t.format, region.level);
  part.shape = region.shape;
  part.pyramid = t.spec.pyramid;
  part.pyramid.levels = out.last - region.level + 1;
  int opened = 0;
  auto open_level = [&](const ArraySpec& level_part, const Location&) -> Result<std::unique_ptr<Stream>> {
    const int k = opened++;
    const int j = region.level + k;
    ArraySpec whole = LevelSpec(t.spec, t.format, j);
    ArraySpec piece = whole;  // the level's chunking and options; the region's extent
    piece.shape = level_part.shape;
    if (k == 0 && !write_own_level) {
      int64_t row = static_cast<int64_t>(ItemSize(piece.dtype));
      for (size_t d = 1; d < piece.shape.size(); ++d) row *= piece.shape[d];
      return std::unique_ptr<Stream>(new SkippedLevel(t.format, piece, row));
    }
    TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> shard, LevelShardShape(t.spec, t.format, j));
    const std::vector<int64_t> f = FactorBetween(t.spec, region.level, j);
    std::vector<int64_t> offset(shard.size());
    for (size_t d = 0; d < shard.size(); ++d) offset[d] = region.origin[d] / f[d] / shard[d];
    TESSERA_ASSIGN_OR_RETURN(driver::FormatWriter w,
                             DriverOf(t.format).OpenRegionWriter(whole, piece, LevelLocation(t, j),
                                                                 api_internal::SettingsOf(options, t.threads),
                                                                 std::move(offset)));
    return api_internal::MakeFormatStream(t.format, piece, t.threads, std::move(w));
  };
  if (part.level_count() == 1) {
    TESSERA_ASSIGN_OR_RETURN(out.stream, open_level(part, t.location));
  } else {
    TESSERA_ASSIGN_OR_RETURN(out.stream, api_internal::CreatePyramidStream(t.format, part, t.location, options,
                                                                           t.threads, open_level,
                                                                           /*create_group=*/false));
  }
  return out;
}

}  // namespace

Result<int> WriteRegion(const std::string& location, const ArraySpec& spec, const StreamOptions& options,
                        const Region& region, ByteView bytes, bool write_own_level) {
  int64_t expected = static_cast<int64_t>(ItemSize(spec.dtype));
  for (int64_t v : region.shape) expected *= v;
  if (static_cast<int64_t>(bytes.size()) != expected)
    return InvalidArgument("region: " + std::to_string(bytes.size()) + " bytes for shape " + JoinIntegers(region.shape) +
                           " of " + std::string(DataTypeName(spec.dtype)) + ", which needs " + std::to_string(expected));
  TESSERA_ASSIGN_OR_RETURN(RegionStream r, OpenRegionStream(location, spec, options, region, write_own_level));
  TESSERA_RETURN_IF_ERROR(r.stream->Append(bytes));
  TESSERA_RETURN_IF_ERROR(r.stream->Close());
  return r.last;
}

Status FinishSharedArray(const std::string& location, const ArraySpec& spec, const StreamOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(Target t, Resolve(location, spec, options));
  const driver::FormatDriver& d = DriverOf(t.format);
  if (!d.HasMultiscaleRoot() || !t.spec.multiscale()) return Status::Ok();
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(t.location, /*create=*/true));
  TESSERA_RETURN_IF_ERROR(d.CreateMultiscaleRoot(t.spec, t.location, *store));
  return store->Flush();
}

Status AbandonSharedArray(const std::string& location, const ArraySpec& spec, const StreamOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(Target t, Resolve(location, spec, options));
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(t.location, /*create=*/true));
  return DriverOf(t.format).AbandonShared(t.spec, *store);
}

}  // namespace tessera
