#include "tessera/api/array.h"


#include "tessera/hdf5/h5_reader.h"
#include "tessera/precomputed/volume.h"
#include "tessera/store/file_store.h"
#include "tessera/zarr/array.h"

namespace tessera {

namespace {

Result<std::shared_ptr<Store>> OpenDirectory(const Location& location) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<FileStore> store, FileStore::Open(location.path, /*create=*/false));
  return std::shared_ptr<Store>(std::move(store));
}

Result<std::unique_ptr<Array>> OpenHdf5(const Location& location, const OpenOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<hdf5::Hdf5File> file, hdf5::Hdf5File::Open(location.path));
  std::string name = options.dataset;
  if (name.empty()) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> names, file->ListDatasets());
    if (names.size() != 1) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      return InvalidArgument("dataset: " + location.path + " holds " + std::to_string(names.size()) +
                             " datasets; name one" + (list.empty() ? "" : ": " + list));
    }
    name = names[0];
  }
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<hdf5::Hdf5Dataset> ds, file->OpenDataset(name));
  nlohmann::json description = ds->Describe();
  return std::make_unique<Array>(Format::kHdf5, location, std::move(ds), std::vector<int64_t>{}, description,
                                 description);
}

Result<std::unique_ptr<Array>> OpenPrecomputed(const Location& location, const OpenOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenDirectory(location));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<precomputed::PrecomputedVolume> volume,
                           precomputed::PrecomputedVolume::Open(store, options.scale));
  const precomputed::ScaleInfo& s = volume->scale();
  nlohmann::json description = {{"type", volume->info().type},
                                {"num_channels", volume->info().num_channels},
                                {"scale", options.scale},
                                {"scales", volume->info().scales.size()},
                                {"key", s.key},
                                {"size_xyz", s.size},
                                {"voxel_offset_xyz", s.voxel_offset},
                                {"chunk_size_xyz", s.chunk_size},
                                {"resolution_nm_xyz", s.resolution},
                                {"encoding", precomputed::ChunkEncodingName(s.encoding)},
                                {"sharding", s.sharding ? s.sharding->ToJson() : nlohmann::json(nullptr)}};
  nlohmann::json metadata = volume->info().ToJson();
  return std::make_unique<Array>(Format::kPrecomputed, location, std::move(volume), std::vector<int64_t>{},
                                 std::move(metadata), std::move(description));
}

Result<std::unique_ptr<Array>> OpenZarr(const Location& location) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenDirectory(location));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<zarr::ZarrArray> array, zarr::ZarrArray::Open(store, ""));
  const zarr::ArrayMetadata& m = array->metadata();
  std::vector<int64_t> shard_shape = array->sharding() ? m.chunk_shape : std::vector<int64_t>{};
  nlohmann::json description = {
      {"shard_shape", array->sharding() ? nlohmann::json(m.chunk_shape) : nlohmann::json(nullptr)},
      {"codecs", m.codecs},
      {"chunk_key_encoding", m.chunk_key_encoding.ToJson()},
      {"dimension_names", m.dimension_names ? *m.dimension_names : nlohmann::json(nullptr)}};
  nlohmann::json metadata = m.ToJson();
  return std::make_unique<Array>(Format::kZarr3, location, std::move(array), std::move(shard_shape),
                                 std::move(metadata), std::move(description));
}

}  // namespace

Array::Array(Format format, Location location, std::unique_ptr<ChunkSource> source, std::vector<int64_t> shard_shape,
             nlohmann::json metadata, nlohmann::json description)
    : format_(format),
      location_(std::move(location)),
      source_(std::move(source)),
      shard_shape_(std::move(shard_shape)),
      metadata_(std::move(metadata)),
      description_(std::move(description)) {}

Result<Hyperslab> Array::Select(std::string_view expression) const {
  return ParseSliceExpression(expression, shape());
}

Status Array::Read(const Hyperslab& selection, void* out, const ReadOptions& options) const {
  return ReadHyperslab(*source_, selection, static_cast<uint8_t*>(out), options);
}

Result<std::unique_ptr<Array>> OpenArray(const std::string& text, const OpenOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(Location location, ParseLocation(text));
  Format format;
  if (options.format) {
    format = *options.format;
  } else {
    TESSERA_ASSIGN_OR_RETURN(format, DetectFormat(location));
  }
  if (options.scale != 0 && format != Format::kPrecomputed)
    return InvalidArgument("scale: applies to precomputed volumes only; " + location.path + " is " +
                           std::string(FormatName(format)));
  if (!options.dataset.empty() && format != Format::kHdf5)
    return InvalidArgument("dataset: applies to HDF5 files only; " + location.path + " is " +
                           std::string(FormatName(format)));
  switch (format) {
    case Format::kHdf5: return OpenHdf5(location, options);
    case Format::kPrecomputed: return OpenPrecomputed(location, options);
    case Format::kZarr3: return OpenZarr(location);
  }
  return Unsupported("format");
}

}  // namespace tessera
