#include "tessera/api/shared_write.h"

#include <malloc.h>

#include <filesystem>
#include <mutex>
#include <regex>

#include "tessera/api/create_mode.h"
#include "tessera/api/driver_registry.h"
#include "tessera/api/shared_job.h"
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
                                      const Region& region, bool write_own_level, const std::string& job_token) {
  TESSERA_ASSIGN_OR_RETURN(Target t, Resolve(location, spec, options));
  TESSERA_RETURN_IF_ERROR(CheckRegion(t, region, write_own_level));
  if (!job_token.empty()) TESSERA_RETURN_IF_ERROR(api_internal::CheckJobMarker(t.location, job_token, /*first_look=*/true));
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
    // A job's shards are stored through its guard (each only while the job's marker holds its token).
    const Location level_location = LevelLocation(t, j);
    const Location store_at =
        job_token.empty() ? level_location : api_internal::GuardedLocation(t.location, level_location, job_token);
    Result<driver::FormatWriter> w = DriverOf(t.format).OpenRegionWriter(
        whole, piece, store_at, api_internal::SettingsOf(options, t.threads), std::move(offset));
    if (!job_token.empty()) api_internal::ForgetGuardedLocation(store_at);  // the writer holds its store
    if (!w.ok()) return w.status();
    return api_internal::MakeFormatStream(t.format, piece, t.threads, std::move(w).value());
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
                        const Region& region, ByteView bytes, bool write_own_level, const std::string& job_token) {
  int64_t expected = static_cast<int64_t>(ItemSize(spec.dtype));
  for (int64_t v : region.shape) expected *= v;
  if (static_cast<int64_t>(bytes.size()) != expected)
    return InvalidArgument("region: " + std::to_string(bytes.size()) + " bytes for shape " + JoinIntegers(region.shape) +
                           " of " + std::string(DataTypeName(spec.dtype)) + ", which needs " + std::to_string(expected));
  TESSERA_ASSIGN_OR_RETURN(RegionStream r, OpenRegionStream(location, spec, options, region, write_own_level, job_token));
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

Status AbandonSharedArray(const std::string& location, const ArraySpec& spec, const StreamOptions& options,
                          const std::string& job_token) {
  TESSERA_ASSIGN_OR_RETURN(Target t, Resolve(location, spec, options));
  if (!job_token.empty()) {
    Status mine = api_internal::CheckJobMarker(t.location, job_token, /*first_look=*/false);
    if (mine.kind() == ErrorKind::kFailedPrecondition) return Status::Ok();  // gone, or another job's
    TESSERA_RETURN_IF_ERROR(mine);
  }
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(t.location, /*create=*/true));
  // The marker first: running tasks stop at their next shard while the metadata goes.
  Status marker = store->Erase(api_internal::kJobMarkerKey);
  Status metadata = DriverOf(t.format).AbandonShared(t.spec, *store);
  return marker.ok() ? metadata : marker;
}

namespace {

// Whether `key` is one a job writing a `format` array stores at its root: the marker, shards or
// chunks and metadata (Zarr: [<level>/]zarr.json and [<level>/]c/...; precomputed: the info and
// <scale>/<object>), or a file store's temporary file of one of them.
bool IsJobKey(Format format, const std::string& key) {
  static const std::regex zarr(R"(^(\d+/)?(zarr\.json|c/.+)$)");
  static const std::regex zarr_dir(R"(^(\d+/)?(c/.*)?$)");
  static const std::regex precomputed(R"(^(info|[^/]+/[^/]+)$)");
  static const std::regex precomputed_dir(R"(^([^/]+/)?$)");
  static const std::regex temporary(R"(^\.[^/]*\.tmp\.\d+\.\d+$)");
  if (key == api_internal::kJobMarkerKey) return true;
  const bool precomputed_key = format == Format::kPrecomputed;
  const size_t slash = key.rfind('/');
  const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  if (std::regex_match(name, temporary)) {
    const std::string dir = key.substr(0, key.size() - name.size());
    return std::regex_match(dir, precomputed_key ? precomputed_dir : zarr_dir);
  }
  return std::regex_match(key, precomputed_key ? precomputed : zarr);
}

// Removes the directories left empty under `root` (a local path), deepest first; `root` too.
void RemoveEmptyDirectories(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_directory(ec)) dirs.push_back(it->path());
  std::sort(dirs.rbegin(), dirs.rend());
  for (const fs::path& d : dirs) fs::remove(d, ec);  // fails harmlessly on one that is not empty
  fs::remove(root, ec);
}

}  // namespace

Result<ArraySpec> PrepareSharedJob(const std::string& location, const ArraySpec& spec, const StreamOptions& options,
                                   const std::string& token) {
  if (token.empty()) return InvalidArgument("job token: empty");
  TESSERA_ASSIGN_OR_RETURN(Target t, Resolve(location, spec, options));
  if (options.mode == Mode::kOverwrite) {
    // A failed job's leftovers are no array mode w would recognise: they go first (when they are
    // nothing but such leftovers; PrepareToCreate then names what else is there).
    TESSERA_ASSIGN_OR_RETURN(std::optional<Format> stored, api_internal::StoredFormatAt(t.location));
    if (!stored) (void)CleanupSharedLocation(location, options);
  } else {
    TESSERA_ASSIGN_OR_RETURN(bool marked, api_internal::HasJobMarker(t.location));
    if (marked)
      return AlreadyExists(t.location.ToString() + ": a job is writing there, or one was killed (its marker " +
                           api_internal::kJobMarkerKey + " is there): tessera.dask.cleanup removes a failed job's leftovers");
  }
  TESSERA_RETURN_IF_ERROR(api_internal::PrepareToCreate(t.location, t.format, options.mode));
  TESSERA_RETURN_IF_ERROR(api_internal::WriteJobMarker(t.location, token));
  return t.spec;
}

Status CheckSharedJob(const std::string& location, const StreamOptions& options, const std::string& token) {
  TESSERA_ASSIGN_OR_RETURN(Location where, ParseLocation(location, options.storage));
  return api_internal::CheckJobMarker(where, token, /*first_look=*/true);
}

Result<std::unique_ptr<Array>> OpenUnpublishedLevel(const std::string& location, const ArraySpec& spec,
                                                    const StreamOptions& options, int level) {
  TESSERA_ASSIGN_OR_RETURN(Target t, Resolve(location, spec, options));
  if (level < 0 || level >= t.spec.level_count())
    return FieldError(ErrorKind::kOutOfRange, "level", std::to_string(level) + " is not a level of the array (it has " +
                      std::to_string(t.spec.level_count()) + ")");
  return api_internal::OpenUnpublished(t.location, t.format, t.spec, level);
}

Status PublishSharedJob(const std::string& location, const ArraySpec& spec, const StreamOptions& options,
                        const std::string& token) {
  TESSERA_ASSIGN_OR_RETURN(Target t, Resolve(location, spec, options));
  TESSERA_RETURN_IF_ERROR(api_internal::CheckJobMarker(t.location, token, /*first_look=*/false));
  // A stream creates the OME-Zarr group first and each level's metadata as the level completes.
  TESSERA_RETURN_IF_ERROR(FinishSharedArray(location, spec, options));
  for (int j = 0; j < t.spec.level_count(); ++j)
    TESSERA_RETURN_IF_ERROR(DriverOf(t.format).CreateMetadata(LevelSpec(t.spec, t.format, j), LevelLocation(t, j)));
  return api_internal::RemoveJobMarker(t.location);
}

Status CleanupSharedLocation(const std::string& location, const StreamOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(Location where, ParseLocation(location, options.storage));
  const Format format = options.format ? *options.format : FormatFromName(where);
  if (format != Format::kZarr3 && format != Format::kPrecomputed)
    return FieldError(ErrorKind::kUnsupported, "format", std::string(FormatName(format)) +
                      ": only zarr3 and precomputed arrays are written by many processes");
  if (where.is_file() && !std::filesystem::exists(where.path)) return Status::Ok();
  TESSERA_ASSIGN_OR_RETURN(bool marked, api_internal::HasJobMarker(where));
  if (!marked) {
    TESSERA_ASSIGN_OR_RETURN(std::optional<Format> stored, api_internal::StoredFormatAt(where));
    if (stored)
      return FailedPrecondition(where.ToString() + " holds a published array (" + std::string(FormatName(*stored)) +
                                "), no failed job's leftovers: cleanup removes nothing of it (mode w replaces it)");
  }
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(where, /*create=*/false));
  TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> keys, store->List(""));
  for (const std::string& key : keys)
    if (!IsJobKey(format, key))
      return FailedPrecondition(store->Describe(key) + " is no object a tessera.dask job writes (" +
                                std::string(FormatName(format)) + "): cleanup removes nothing at " + where.ToString());
  // Metadata first (so nothing half-removed looks valid), the marker last (so an interrupted
  // cleanup still shows a job's leftovers).
  std::stable_partition(keys.begin(), keys.end(), [](const std::string& k) {
    return k.ends_with("zarr.json") || k == "info";
  });
  for (const std::string& key : keys)
    if (key != api_internal::kJobMarkerKey) TESSERA_RETURN_IF_ERROR(store->Erase(key));
  TESSERA_RETURN_IF_ERROR(store->Erase(api_internal::kJobMarkerKey));
  if (where.is_file()) RemoveEmptyDirectories(where.path);
  return Status::Ok();
}

}  // namespace tessera
