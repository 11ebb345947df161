#include "tessera/cli/open_array.h"

#include <filesystem>

#include "tessera/cli/cli_util.h"
#include "tessera/hdf5/h5_reader.h"
#include "tessera/precomputed/volume.h"
#include "tessera/zarr/array.h"

namespace tessera::cli {

namespace {

Result<OpenedArray> OpenHdf5(const std::string& path, const std::string& dataset) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<hdf5::Hdf5File> file, hdf5::Hdf5File::Open(path));
  std::string name = dataset;
  if (name.empty()) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> names, file->ListDatasets());
    if (names.size() != 1) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      return InvalidArgument(path + " holds " + std::to_string(names.size()) +
                             " datasets; choose one with --dataset" + (list.empty() ? "" : ": " + list));
    }
    name = names[0];
  }
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<hdf5::Hdf5Dataset> ds, file->OpenDataset(name));
  OpenedArray out;
  out.format = "hdf5";
  out.description = ds->Describe();
  out.source = std::move(ds);
  return out;
}

}  // namespace

bool IsHdf5Path(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && hdf5::LooksLikeHdf5(path);
}

Result<OpenedArray> OpenArray(const std::string& path, int scale, const std::string& dataset) {
  if (IsHdf5Path(path)) return OpenHdf5(path, dataset);
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec))
    return InvalidArgument(path + " is a file but not an HDF5 file (no HDF5 signature); Zarr and precomputed "
                           "stores are directories");
  if (!dataset.empty()) return InvalidArgument("--dataset applies to HDF5 files only; " + path + " is not one");
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenFileStore(path, false));
  OpenedArray out;
  TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> zarr_json, store->Size("zarr.json"));
  TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> info, store->Size("info"));
  if (!zarr_json && info) {
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<precomputed::PrecomputedVolume> volume,
                             precomputed::PrecomputedVolume::Open(store, scale));
    out.format = "precomputed";
    const precomputed::ScaleInfo& s = volume->scale();
    out.description = {{"type", volume->info().type},
                       {"num_channels", volume->info().num_channels},
                       {"scale", scale},
                       {"scales", volume->info().scales.size()},
                       {"key", s.key},
                       {"size_xyz", s.size},
                       {"voxel_offset_xyz", s.voxel_offset},
                       {"chunk_size_xyz", s.chunk_size},
                       {"resolution_nm_xyz", s.resolution},
                       {"encoding", precomputed::ChunkEncodingName(s.encoding)},
                       {"sharding", s.sharding ? s.sharding->ToJson() : nlohmann::json(nullptr)}};
    out.source = std::move(volume);
    return out;
  }
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<zarr::ZarrArray> array, zarr::ZarrArray::Open(store, ""));
  out.format = "zarr3";
  const zarr::ArrayMetadata& m = array->metadata();
  out.description = {{"shard_shape", array->sharding() ? nlohmann::json(m.chunk_shape) : nlohmann::json(nullptr)},
                     {"codecs", m.codecs},
                     {"chunk_key_encoding", m.chunk_key_encoding.ToJson()},
                     {"dimension_names", m.dimension_names ? *m.dimension_names : nlohmann::json(nullptr)}};
  out.source = std::move(array);
  return out;
}

}  // namespace tessera::cli
