#include "tessera/api/format_writers.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <filesystem>

#include "tessera/hdf5/hdf5_stream.h"
#include "tessera/precomputed/precomputed_stream.h"
#include "tessera/store/file_store.h"
#include "tessera/store/null_store.h"
#include "tessera/store/write_behind_store.h"
#include "tessera/zarr/zarr_stream.h"

namespace tessera::api_internal {

namespace {

zarr::ArrayOptions ToZarrOptions(const ArraySpec& s) {
  zarr::ArrayOptions o;
  o.dtype = s.dtype;
  o.shape = s.shape;
  o.chunk_shape = s.chunk_shape;
  o.chunks_per_shard = s.shard_chunks;
  o.codec = std::string(CodecName(*s.codec));
  o.level = s.level;
  o.index_location = s.zarr.index_at_start ? IndexLocation::kStart : IndexLocation::kEnd;
  o.fill_value = s.fill_value;
  if (!s.dimension_names.empty()) o.dimension_names = nlohmann::json(s.dimension_names);
  o.attributes = s.attributes;
  return o;
}

precomputed::PrecomputedOptions ToPrecomputedOptions(const ArraySpec& s) {
  precomputed::PrecomputedOptions o;
  const size_t spatial = s.shape.size() - 3;  // the z, y, x entries start here
  o.dtype = s.dtype;
  o.shape = s.shape;
  o.chunk_shape.assign(s.chunk_shape.begin() + spatial, s.chunk_shape.end());
  if (!s.shard_chunks.empty()) o.shard_chunks.assign(s.shard_chunks.begin() + spatial, s.shard_chunks.end());
  o.encoding = s.precomputed.encoding == "compressed_segmentation" ? precomputed::ChunkEncoding::kCompressedSegmentation
                                                                   : precomputed::ChunkEncoding::kRaw;
  o.cseg_block_xyz = s.precomputed.cseg_block_xyz;
  o.gzip = *s.codec == Codec::kGzip;
  o.hash = s.precomputed.hash == "murmurhash3_x86_128" ? precomputed::ShardHash::kMurmurHash3_x86_128
                                                       : precomputed::ShardHash::kIdentity;
  o.resolution_xyz = s.precomputed.resolution_xyz;
  o.voxel_offset_xyz = s.precomputed.voxel_offset_xyz;
  o.key = s.precomputed.scale_key;
  return o;
}

// A JSON attribute value (checked by ResolveSpec) as an HDF5 attribute: integers as int64,
// other numbers as float64, scalars or 1-D; strings as fixed-length UTF-8.
Result<hdf5::Attribute> ToHdf5Attribute(const std::string& name, const nlohmann::json& v) {
  if (v.is_string()) return hdf5::Attribute::String(name, v.get<std::string>());
  const bool array = v.is_array();
  const nlohmann::json items = array ? v : nlohmann::json::array({v});
  bool integers = true;
  for (const auto& e : items) integers &= e.is_number_integer();
  Bytes data(items.size() * 8);
  for (size_t i = 0; i < items.size(); ++i) {
    if (integers) {
      const int64_t x = items[i].get<int64_t>();
      std::memcpy(data.data() + 8 * i, &x, 8);
    } else {
      const double x = items[i].get<double>();
      std::memcpy(data.data() + 8 * i, &x, 8);
    }
  }
  std::vector<uint64_t> dims;
  if (array) dims.push_back(items.size());
  return hdf5::Attribute::Numeric(name, integers ? DataType::kInt64 : DataType::kFloat64, std::move(dims),
                                  std::move(data));
}

Result<hdf5::Hdf5StreamOptions> ToHdf5Options(const ArraySpec& s) {
  hdf5::Hdf5StreamOptions o;
  o.dataset = s.hdf5.dataset;
  o.dtype = s.dtype;
  o.shape = s.shape;
  o.chunk_shape = s.chunk_shape;
  o.deflate_level = *s.codec == Codec::kGzip ? *s.level : -1;
  o.shuffle = s.hdf5.shuffle;
  o.fletcher32 = s.hdf5.fletcher32;
  if (!s.fill_value.is_null()) {
    TESSERA_ASSIGN_OR_RETURN(o.fill, ParseFillValue(s.dtype, s.fill_value));
  }
  for (const auto& [name, value] : s.attributes.items()) {
    TESSERA_ASSIGN_OR_RETURN(hdf5::Attribute a, ToHdf5Attribute(name, value));
    o.attributes.push_back(std::move(a));
  }
  return o;
}

// Where a stream stores its array. On an object store (where a PUT waits on the network) writes
// go through a write-behind queue of at most one shard row's raw bytes (16..256 MiB), so that
// uploads run off the compression threads; *queue_bytes is that queue's size (0: none).
Result<std::shared_ptr<Store>> OpenStore(Format format, const ArraySpec& spec, const Location& location,
                                         const StreamOptions& options, int threads, int64_t* queue_bytes) {
  *queue_bytes = 0;
  if (options.discard) return std::shared_ptr<Store>(std::make_shared<NullStore>());
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/true));
  if (store->io_concurrency() == 0) return store;
  TESSERA_ASSIGN_OR_RETURN(stream::StreamLayout layout, PlanFormat(format, spec, threads));
  *queue_bytes = UploadQueueBytes(layout);
  WriteBehindOptions wb;
  wb.max_queued_bytes = *queue_bytes;
  return std::shared_ptr<Store>(std::make_shared<WriteBehindStore>(std::move(store), wb));
}

stream::StreamWriterOptions WriterOptions(const StreamOptions& options, int threads) {
  stream::StreamWriterOptions wo;
  wo.threads = threads;
  wo.backend = options.backend;
  return wo;
}

// A FormatWriter that owns `stream` (a writer and its sink, storing into `store`); `finish`
// completes the sink, then every queued upload must have succeeded.
template <typename S, typename Finish>
FormatWriter HoldStream(S stream, std::shared_ptr<Store> store, int64_t queue_bytes, Finish finish) {
  auto held = std::make_shared<S>(std::move(stream));
  FormatWriter out;
  out.writer = held->writer.get();
  out.finish = [held, store, finish] {
    TESSERA_RETURN_IF_ERROR(finish(*held));
    return store->Flush();
  };
  // An aborted stream uploads nothing more of what it queued, then abandons what it stored.
  auto queue = std::dynamic_pointer_cast<WriteBehindStore>(store);
  out.abandon = [held, queue] {
    if (queue) queue->Cancel();
    (void)held->sink->Abandon();
  };
  out.sync = [store] { return store->Flush(); };
  out.upload_queue_bytes = queue_bytes;
  out.keep_alive = held;
  return out;
}

Result<FormatWriter> OpenZarr(const ArraySpec& spec, const Location& location, const StreamOptions& options,
                              int threads) {
  int64_t queue_bytes = 0;
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store,
                           OpenStore(Format::kZarr3, spec, location, options, threads, &queue_bytes));
  TESSERA_ASSIGN_OR_RETURN(zarr::ZarrStream zs,
                           zarr::OpenZarrStream(store, "", ToZarrOptions(spec), WriterOptions(options, threads)));
  // The array exists (and a store that refuses writes says so) when the stream opens.
  TESSERA_RETURN_IF_ERROR(store->Flush());
  return HoldStream(std::move(zs), store, queue_bytes, [](zarr::ZarrStream&) { return Status::Ok(); });
}

Result<FormatWriter> OpenPrecomputed(const ArraySpec& spec, const Location& location, const StreamOptions& options,
                                     int threads) {
  int64_t queue_bytes = 0;
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store,
                           OpenStore(Format::kPrecomputed, spec, location, options, threads, &queue_bytes));
  TESSERA_ASSIGN_OR_RETURN(precomputed::PrecomputedStream ps,
                           precomputed::OpenPrecomputedStream(store, ToPrecomputedOptions(spec),
                                                              WriterOptions(options, threads)));
  // The volume's info exists (another scale's stream reads it) when the stream opens.
  TESSERA_RETURN_IF_ERROR(store->Flush());
  return HoldStream(std::move(ps), store, queue_bytes,
                    [](precomputed::PrecomputedStream& p) { return p.sink->Finish(); });
}

// A private temporary directory, removed with everything in it when this goes.
struct StagingDirectory {
  std::string path;
  ~StagingDirectory() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

Result<FormatWriter> OpenHdf5(const ArraySpec& spec, const Location& location, const StreamOptions& options,
                              int threads) {
  TESSERA_ASSIGN_OR_RETURN(hdf5::Hdf5StreamOptions h5, ToHdf5Options(spec));
  // On an object store the file is built in a staging directory (TMPDIR) and uploaded at Close,
  // in one PUT or one multipart upload: the object appears complete or not at all.
  struct Held {
    StagingDirectory staging;  // destroyed last, after the file's writer
    std::optional<LocationObject> remote;
    std::unique_ptr<hdf5::H5Writer> file;
    hdf5::Hdf5Stream stream;
  };
  auto held = std::make_shared<Held>();
  std::string path = location.path;
  if (!location.is_file()) {
    TESSERA_ASSIGN_OR_RETURN(held->remote, OpenLocationObject(location, /*create=*/true));
    // Credentials and bucket are checked now, not after the whole stream.
    TESSERA_RETURN_IF_ERROR(held->remote->store->Size(held->remote->key).status());
    std::string pattern = (std::filesystem::temp_directory_path() / "tessera-h5-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      return IoError(pattern + ": cannot make a staging directory for " + location.ToString() + ": " +
                     std::strerror(errno));
    held->staging.path = pattern;
    path = pattern + "/" + held->remote->key;
  }
  TESSERA_ASSIGN_OR_RETURN(held->file, hdf5::H5Writer::Create(path));
  TESSERA_ASSIGN_OR_RETURN(held->stream, hdf5::OpenHdf5Stream(held->file.get(), h5, WriterOptions(options, threads)));
  FormatWriter out;
  out.writer = held->stream.writer.get();
  out.finish = [held, path] {
    TESSERA_RETURN_IF_ERROR(held->file->Close());
    if (!held->remote) return Status::Ok();
    const FileStore staged(held->staging.path);
    const Status uploaded = held->remote->store->CopyFrom(held->remote->key, staged, held->remote->key);
    std::error_code ec;
    std::filesystem::remove(path, ec);  // the staging copy is not needed either way
    return uploaded;
  };
  out.abandon = [held] { held->file->Abandon(); };
  out.keep_alive = held;
  return out;
}

// HoldStream for a region's writer: nothing to finish beyond the uploads, and a failure leaves what
// the region stored (whole shards, rewritten by a retry): the array is not the region's to remove.
template <typename S>
FormatWriter HoldRegionStream(S stream, std::shared_ptr<Store> store, int64_t queue_bytes) {
  FormatWriter w = HoldStream(std::move(stream), store, queue_bytes, [](S&) { return Status::Ok(); });
  auto queue = std::dynamic_pointer_cast<WriteBehindStore>(store);
  w.abandon = [queue] {
    if (queue) queue->Cancel();
  };
  return w;
}

Result<FormatWriter> OpenZarrRegion(const ArraySpec& array, const ArraySpec& region, const Location& location,
                                    const StreamOptions& options, int threads, std::vector<int64_t> shard_offset) {
  int64_t queue_bytes = 0;
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store,
                           OpenStore(Format::kZarr3, region, location, options, threads, &queue_bytes));
  TESSERA_ASSIGN_OR_RETURN(zarr::ZarrStream zs,
                           zarr::OpenZarrRegionStream(store, "", ToZarrOptions(array), ToZarrOptions(region),
                                                        std::move(shard_offset), WriterOptions(options, threads)));
  return HoldRegionStream(std::move(zs), std::move(store), queue_bytes);
}

Result<FormatWriter> OpenPrecomputedRegion(const ArraySpec& array, const ArraySpec& region, const Location& location,
                                           const StreamOptions& options, int threads,
                                           std::vector<int64_t> shard_offset) {
  int64_t queue_bytes = 0;
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store,
                           OpenStore(Format::kPrecomputed, region, location, options, threads, &queue_bytes));
  TESSERA_ASSIGN_OR_RETURN(precomputed::PrecomputedStream ps,
                           precomputed::OpenPrecomputedRegionStream(store, ToPrecomputedOptions(array),
                                                                    ToPrecomputedOptions(region),
                                                                    std::move(shard_offset), WriterOptions(options, threads)));
  return HoldRegionStream(std::move(ps), std::move(store), queue_bytes);
}

}  // namespace

Result<FormatWriter> OpenRegionFormatWriter(Format format, const ArraySpec& array, const ArraySpec& region,
                                            const Location& location, const StreamOptions& options, int threads,
                                            std::vector<int64_t> shard_offset) {
  switch (format) {
    case Format::kZarr3: return OpenZarrRegion(array, region, location, options, threads, std::move(shard_offset));
    case Format::kPrecomputed:
      return OpenPrecomputedRegion(array, region, location, options, threads, std::move(shard_offset));
    case Format::kHdf5: break;
  }
  return Unsupported("format: hdf5 has no region writer (one file: see shared_write.h)");
}

Status CreateArrayMetadata(Format format, const ArraySpec& spec, const Location& location) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/true));
  switch (format) {
    case Format::kZarr3: {
      TESSERA_ASSIGN_OR_RETURN(zarr::ArrayMetadata m, zarr::BuildArrayMetadata(ToZarrOptions(spec)));
      return zarr::ZarrArray::Create(store, "", std::move(m)).status();
    }
    case Format::kPrecomputed:
      return precomputed::WriteScaleInfo(*store, ToPrecomputedOptions(spec)).status();
    case Format::kHdf5: break;
  }
  return Unsupported("format: hdf5");
}

int64_t UploadQueueBytes(const stream::StreamLayout& layout) {
  return std::clamp<int64_t>(layout.epochs_per_shard * layout.epoch_buffer_bytes, int64_t{16} << 20,
                             int64_t{256} << 20);
}

Result<stream::StreamLayout> PlanFormat(Format format, const ArraySpec& spec, int threads) {
  switch (format) {
    case Format::kZarr3: return zarr::PlanZarrStream(ToZarrOptions(spec), threads);
    case Format::kPrecomputed: {
      TESSERA_ASSIGN_OR_RETURN(precomputed::PrecomputedPlan plan,
                               precomputed::PlanPrecomputedStream(ToPrecomputedOptions(spec), threads));
      return plan.layout;
    }
    case Format::kHdf5: {
      TESSERA_ASSIGN_OR_RETURN(hdf5::Hdf5StreamOptions h5, ToHdf5Options(spec));
      return hdf5::PlanHdf5Stream(h5, threads);
    }
  }
  return Unsupported("format");
}

Result<FormatWriter> OpenFormatWriter(Format format, const ArraySpec& spec, const Location& location,
                                      const StreamOptions& options, int threads) {
  // A directory this call creates is removed again if the stream cannot be opened (a CUDA
  // backend without a device, say), so a failed CreateStream leaves nothing behind.
  std::error_code ec;
  const bool created_here = format != Format::kHdf5 && !options.discard && location.is_file() &&
                            !std::filesystem::exists(location.path, ec);
  Result<FormatWriter> w = Unsupported("format");
  switch (format) {
    case Format::kZarr3: w = OpenZarr(spec, location, options, threads); break;
    case Format::kPrecomputed: w = OpenPrecomputed(spec, location, options, threads); break;
    case Format::kHdf5: w = OpenHdf5(spec, location, options, threads); break;
  }
  if (!w.ok() && created_here) std::filesystem::remove_all(location.path, ec);
  return w;
}

}  // namespace tessera::api_internal
