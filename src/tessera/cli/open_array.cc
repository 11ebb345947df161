#include "tessera/cli/open_array.h"

#include "tessera/cli/cli_util.h"
#include "tessera/precomputed/volume.h"
#include "tessera/zarr/array.h"

namespace tessera::cli {

Result<OpenedArray> OpenArray(const std::string& path, int scale) {
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
