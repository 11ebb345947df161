// `tessera info STORE [--json]`: what is stored and how.
#include <iostream>

#include "tessera/cli/cli_util.h"
#include "tessera/cli/commands.h"
#include "tessera/cli/open_array.h"

namespace tessera::cli {
namespace {

struct InfoArgs {
  std::string store;
  bool json = false;
  int scale = 0;
};

std::string ListText(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return "[" + s + "]";
}

Status RunInfo(const InfoArgs& a) {
  TESSERA_ASSIGN_OR_RETURN(OpenedArray opened, OpenArray(a.store, a.scale));
  const ChunkSource& array = *opened.source;
  nlohmann::json j = opened.description;
  j["format"] = opened.format;
  j["dtype"] = std::string(DataTypeName(array.dtype()));
  j["shape"] = array.shape();
  j["chunk_shape"] = array.read_chunk_shape();
  j["fill_value"] = FillValueToJson(array.dtype(), array.fill_value());
  if (a.json) {
    std::cout << j.dump(2) << "\n";
    return Status::Ok();
  }
  std::cout << "format:      " << opened.format << "\n"
            << "dtype:       " << DataTypeName(array.dtype()) << "\n"
            << "shape:       " << ListText(array.shape()) << "\n"
            << "chunk shape: " << ListText(array.read_chunk_shape()) << "\n";
  if (opened.format == "zarr3") {
    std::cout << "shard shape: "
              << (j["shard_shape"].is_null() ? std::string("(unsharded)") : j["shard_shape"].dump()) << "\n"
              << "codecs:      " << j["codecs"].dump() << "\n";
  } else {
    std::cout << "volume type: " << j["type"].get<std::string>() << ", " << j["num_channels"] << " channel(s), scale "
              << a.scale << " of " << j["scales"] << " (key \"" << j["key"].get<std::string>() << "\")\n"
              << "voxel offset (x, y, z): " << j["voxel_offset_xyz"].dump() << ", resolution (nm): "
              << j["resolution_nm_xyz"].dump() << "\n"
              << "encoding:    " << j["encoding"].get<std::string>() << "\n"
              << "sharding:    " << (j["sharding"].is_null() ? std::string("(unsharded)") : j["sharding"].dump()) << "\n";
  }
  std::cout << "fill value:  " << j["fill_value"].dump() << "\n";
  return Status::Ok();
}

}  // namespace

void RegisterInfo(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand("info", "Describe an array store");
  cmd->add_option("STORE", args->store, "Array store: a Zarr v3 array or a Neuroglancer precomputed volume")->required();
  cmd->add_option("--scale", args->scale, "Precomputed volumes: the scale to describe (default 0)");
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args, exit_code] {
    Status st = RunInfo(*args);
    if (!st.ok()) *exit_code = ReportError(st);
  });
}

}  // namespace tessera::cli
