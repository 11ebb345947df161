#include "tessera/api/array.h"

#include <optional>

#include "tessera/api/driver_registry.h"
#include "tessera/hdf5/h5_file.h"
#include "tessera/hdf5/h5_reader.h"
#include "tessera/precomputed/volume.h"
#include "tessera/zarr/array.h"
#include "tessera/zarr/metadata.h"

namespace tessera {

namespace {

Result<std::unique_ptr<Array>> OpenHdf5(const Location& location, const OpenOptions& options) {
  std::shared_ptr<hdf5::Hdf5File> file;
  if (location.is_file()) {
    TESSERA_ASSIGN_OR_RETURN(file, hdf5::Hdf5File::Open(location.path));
  } else {
    TESSERA_ASSIGN_OR_RETURN(LocationObject object, OpenLocationObject(location, /*create=*/false));
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<hdf5::H5File> h5, hdf5::H5File::Open(object.store, object.key));
    TESSERA_ASSIGN_OR_RETURN(file, hdf5::Hdf5File::Open(std::move(h5)));
  }
  std::string name = options.dataset;
  if (name.empty()) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> names, file->ListDatasets());
    if (names.size() != 1) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      return InvalidArgument("dataset: " + location.ToString() + " holds " + std::to_string(names.size()) +
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
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
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

// An OME-Zarr image (a group whose `ome.multiscales` lists its levels): the path of level `level`
// and what the description says of the image. Empty path: `location` is a plain array, whose
// zarr.json (read here) is `array_document`.
struct OmeLevel {
  std::string path;
  nlohmann::json description;
  std::optional<nlohmann::json> array_document;
};

Result<OmeLevel> FindOmeLevel(const Store& store, const Location& location, int level) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> bytes, store.Get("zarr.json"));
  std::string where = store.Describe("zarr.json");
  nlohmann::json meta;
  if (bytes) {
    TESSERA_ASSIGN_OR_RETURN(meta, zarr::ParseJsonDocument(std::string(bytes->begin(), bytes->end()), where));
  } else {
    // Zarr v2: a group (.zgroup) whose .zattrs may hold OME-Zarr 0.4 multiscales; else an array,
    // which ZarrArray::Open reads (or reports missing).
    TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> group, store.Size(".zgroup"));
    if (!group) return OmeLevel{};
    where = store.Describe(".zattrs");
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> attrs, store.Get(".zattrs"));
    nlohmann::json zattrs = nlohmann::json::object();
    if (attrs) {
      TESSERA_ASSIGN_OR_RETURN(zattrs, zarr::ParseJsonDocument(std::string(attrs->begin(), attrs->end()), where));
    }
    meta = {{"node_type", "group"}, {"attributes", nlohmann::json::object()}};
    if (zattrs.is_object() && zattrs.contains("multiscales"))
      meta["attributes"]["ome"] = {{"multiscales", zattrs["multiscales"]}};
  }
  if (!meta.is_object() || !meta.contains("node_type") || meta["node_type"] != "group") {
    if (level != 0) return InvalidArgument("level: " + location.path + " is a single Zarr array (level 0 only)");
    OmeLevel plain;
    plain.array_document = std::move(meta);
    return plain;
  }
  const nlohmann::json* ms = nullptr;
  if (meta.contains("attributes") && meta["attributes"].is_object() && meta["attributes"].contains("ome") &&
      meta["attributes"]["ome"].is_object() && meta["attributes"]["ome"].contains("multiscales"))
    ms = &meta["attributes"]["ome"]["multiscales"];
  if (!ms || !ms->is_array() || ms->empty() || !(*ms)[0].is_object() || !(*ms)[0].contains("datasets") ||
      !(*ms)[0]["datasets"].is_array())
    return InvalidArgument(where + ": a Zarr group without OME-Zarr multiscales metadata (open one of its arrays)");
  const nlohmann::json& datasets = (*ms)[0]["datasets"];
  if (level < 0 || level >= static_cast<int>(datasets.size()))
    return OutOfRange("level: " + std::to_string(level) + " is not a level of " + location.path + " (it has " +
                      std::to_string(datasets.size()) + ": 0.." + std::to_string(datasets.size() - 1) + ")");
  const nlohmann::json& ds = datasets[static_cast<size_t>(level)];
  if (!ds.is_object() || !ds.contains("path") || !ds["path"].is_string())
    return InvalidArgument(where + ": multiscales dataset " + std::to_string(level) + " has no path");
  OmeLevel out;
  out.path = ds["path"].get<std::string>();
  out.description = {{"levels", datasets.size()},
                     {"level", level},
                     {"path", out.path},
                     {"axes", (*ms)[0].value("axes", nlohmann::json(nullptr))},
                     {"coordinateTransformations", ds.value("coordinateTransformations", nlohmann::json(nullptr))},
                     {"type", (*ms)[0].value("type", nlohmann::json(nullptr))}};
  return out;
}

Result<std::unique_ptr<Array>> OpenZarr(const Location& location, const OpenOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
  TESSERA_ASSIGN_OR_RETURN(OmeLevel ome, FindOmeLevel(*store, location, options.level));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<zarr::ZarrArray> array,
                           ome.array_document ? zarr::ZarrArray::Open(store, "", *ome.array_document)
                                              : zarr::ZarrArray::Open(store, ome.path));
  const zarr::ArrayMetadata& m = array->metadata();
  std::vector<int64_t> shard_shape = array->sharding() ? m.chunk_shape : std::vector<int64_t>{};
  nlohmann::json description = {
      {"shard_shape", array->sharding() ? nlohmann::json(m.chunk_shape) : nlohmann::json(nullptr)},
      {"codecs", m.codecs},
      {"chunk_key_encoding", m.chunk_key_encoding.ToJson()},
      {"dimension_names", m.dimension_names ? *m.dimension_names : nlohmann::json(nullptr)}};
  if (!ome.path.empty()) description["ome"] = std::move(ome.description);
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

int Array::level_count() const {
  if (description_.contains("ome")) return description_["ome"]["levels"].get<int>();
  if (format_ == Format::kPrecomputed) return description_["scales"].get<int>();
  return 1;
}

int Array::level() const {
  if (description_.contains("ome")) return description_["ome"]["level"].get<int>();
  if (format_ == Format::kPrecomputed) return description_["scale"].get<int>();
  return 0;
}

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
  if (options.level != 0 && format == Format::kHdf5)
    return InvalidArgument("level: HDF5 datasets have no levels; " + location.path + " is hdf5");
  if (options.level != 0 && options.scale != 0 && options.level != options.scale)
    return InvalidArgument("level: " + std::to_string(options.level) + " and scale " + std::to_string(options.scale) +
                           " name different scales");
  if (!options.dataset.empty() && format != Format::kHdf5)
    return InvalidArgument("dataset: applies to HDF5 files only; " + location.path + " is " +
                           std::string(FormatName(format)));
  switch (format) {
    case Format::kHdf5: return OpenHdf5(location, options);
    case Format::kPrecomputed: {
      OpenOptions o = options;
      if (o.level != 0) o.scale = o.level;  // a precomputed volume's levels are its scales
      return OpenPrecomputed(location, o);
    }
    case Format::kZarr3: return OpenZarr(location, options);
  }
  return Unsupported("format");
}

}  // namespace tessera
