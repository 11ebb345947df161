// `tessera info STORE [--json]`: what is stored and how.
#include <iostream>

#include "tessera/cli/cli_util.h"
#include "tessera/api/driver_registry.h"
#include "tessera/cli/commands.h"
#include "tessera/api/tessera.h"
#include "tessera/hdf5/h5_reader.h"
#include "tessera/spec/array_spec_json.h"

namespace tessera::cli {
namespace {

struct InfoArgs {
  std::string store;
  bool json = false;
  int scale = 0;
  int level = 0;
  std::string dataset;
};

std::string ListText(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return "[" + s + "]";
}

nlohmann::json Summary(const Array& array) {
  nlohmann::json j = array.description();
  j["format"] = std::string(FormatName(array.format()));
  j["dtype"] = std::string(DataTypeName(array.dtype()));
  j["shape"] = array.shape();
  j["chunk_shape"] = array.chunk_shape();
  j["fill_value"] = FillValueToJson(array.dtype(), array.fill_value());
  // The spec a new array like this one is created from (`tessera stream --spec`, Python's
  // tessera.create(..., spec=...)): the array described in its own format.
  Result<ArraySpec> spec = ConversionSpec(array, array.format());
  if (spec.ok()) j["spec"] = ArraySpecToJson(*spec);
  return j;
}

std::string Hdf5Line(const nlohmann::json& d) {
  if (d.contains("error")) return d["dataset"].get<std::string>() + ": " + d["error"].get<std::string>();
  std::string filters;
  for (const auto& f : d["filters"]) filters += (filters.empty() ? "" : ", ") + f["name"].get<std::string>();
  return d["dataset"].get<std::string>() + ": " + d["dtype"].get<std::string>() + " " +
         ListText(d["shape"].get<std::vector<int64_t>>()) + ", " + d["layout"].get<std::string>() +
         (d["hdf5_chunks"].is_null() ? "" : ", chunks " + ListText(d["hdf5_chunks"].get<std::vector<int64_t>>())) +
         ", filters [" + filters + "], " + d["byte_order"].get<std::string>() + " byte order, fill " +
         JsonText(d["fill_value"]);
}

// `tessera info FILE.h5` without --dataset: every dataset, one line each. A dataset tessera
// cannot read is listed with the reason rather than failing the whole listing.
Status RunHdf5Listing(const InfoArgs& a) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<hdf5::Hdf5File> file, hdf5::Hdf5File::Open(a.store));
  TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> names, file->ListDatasets());
  nlohmann::json datasets = nlohmann::json::array();
  for (const std::string& name : names) {
    OpenOptions open;
    open.format = Format::kHdf5;
    open.dataset = name;
    Result<std::unique_ptr<Array>> opened = OpenArray(a.store, open);
    if (opened.ok()) {
      datasets.push_back(Summary(**opened));
    } else {
      datasets.push_back({{"dataset", name}, {"error", opened.status().ToString()}});
    }
  }
  Result<nlohmann::json> root = file->RootAttributes();
  const nlohmann::json root_attributes = root.ok() ? *root : nlohmann::json{{"unreadable", root.status().message()}};
  if (a.json) {
    nlohmann::json j = {{"format", "hdf5"},
                        {"superblock_version", file->superblock().version},
                        {"root_attributes", root_attributes},
                        {"datasets", datasets}};
    // A file of one dataset: its spec at the top, as for any other single array.
    if (datasets.size() == 1 && datasets[0].contains("spec")) j["spec"] = datasets[0]["spec"];
    std::cout << JsonText(j, 2) << "\n";
    return Status::Ok();
  }
  std::cout << "format:      hdf5 (superblock version " << file->superblock().version << ")\n";
  if (!root_attributes.empty()) std::cout << "attributes:  " << JsonText(root_attributes) << "\n";
  std::cout << "datasets:    " << datasets.size() << "\n";
  for (const auto& d : datasets) std::cout << "  " << Hdf5Line(d) << "\n";
  return Status::Ok();
}

Status RunInfo(const InfoArgs& a) {
  if (a.dataset.empty()) {
    Result<Location> location = ParseLocation(a.store);
    if (location.ok()) {
      Result<Format> format = DetectFormat(*location);
      if (format.ok() && *format == Format::kHdf5) return RunHdf5Listing(a);
    }
  }
  OpenOptions open;
  open.dataset = a.dataset;
  open.scale = a.scale;
  open.level = a.level;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Array> opened, OpenArray(a.store, open));
  const Array& array = *opened;
  const std::string format(FormatName(array.format()));
  nlohmann::json j = Summary(array);
  if (a.json) {
    std::cout << JsonText(j, 2) << "\n";
    return Status::Ok();
  }
  if (j.contains("ome")) {
    const nlohmann::json& ome = j["ome"];
    std::cout << "OME-Zarr image, levels: " << ome["levels"] << " (this is level " << ome["level"] << ", array \""
              << ome["path"].get<std::string>() << "\"" << (ome["type"].is_null() ? "" : ", " + ome["type"].get<std::string>())
              << ")\n";
    // Every level's shape, so the pyramid is seen at once.
    for (int k = 0; k < ome["levels"].get<int>(); ++k) {
      OpenOptions lo = open;
      lo.level = k;
      Result<std::unique_ptr<Array>> level = OpenArray(a.store, lo);
      std::cout << "  level " << k << ": "
                << (level.ok() ? ListText((*level)->shape()) : "error: " + level.status().ToString()) << "\n";
    }
  } else if (array.level_count() > 1) {
    std::cout << "levels: " << array.level_count() << " (this is level " << array.level() << ")\n";
  }
  std::cout << "format:      " << format << "\n"
            << "dtype:       " << DataTypeName(array.dtype()) << "\n"
            << "shape:       " << ListText(array.shape()) << "\n"
            << "chunk shape: " << ListText(array.chunk_shape()) << "\n";
  if (format == "hdf5") {
    std::cout << "dataset:     " << j["dataset"].get<std::string>() << "\n"
              << "layout:      " << j["layout"].get<std::string>() << "\n"
              << "hdf5 chunks: " << (j["hdf5_chunks"].is_null() ? std::string("(not chunked)") : JsonText(j["hdf5_chunks"])) << "\n"
              << "max shape:   " << JsonText(j["max_shape"]) << "\n"
              << "datatype:    " << j["hdf5_datatype"].get<std::string>() << "\n"
              << "filters:     " << JsonText(j["filters"]) << "\n"
              << "attributes:  " << JsonText(j["attributes"]) << "\n";
  } else if (format == "zarr3") {
    std::cout << "shard shape: "
              << (j["shard_shape"].is_null() ? std::string("(unsharded)") : JsonText(j["shard_shape"])) << "\n"
              << "codecs:      " << JsonText(j["codecs"]) << "\n";
  } else {
    std::cout << "volume type: " << j["type"].get<std::string>() << ", " << j["num_channels"] << " channel(s), scale "
              << a.scale << " of " << j["scales"] << " (key \"" << j["key"].get<std::string>() << "\")\n"
              << "voxel offset (x, y, z): " << JsonText(j["voxel_offset_xyz"]) << ", resolution (nm): "
              << JsonText(j["resolution_nm_xyz"]) << "\n"
              << "encoding:    " << j["encoding"].get<std::string>() << "\n"
              << "sharding:    " << (j["sharding"].is_null() ? std::string("(unsharded)") : JsonText(j["sharding"])) << "\n";
  }
  std::cout << "fill value:  " << JsonText(j["fill_value"]) << "\n";
  return Status::Ok();
}

}  // namespace

void RegisterInfo(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand("info", "Describe an array store");
  cmd->add_option("STORE", args->store,
                  "Array store: a Zarr v3 array, a Neuroglancer precomputed volume or an HDF5 file")->required();
  cmd->add_option("--dataset", args->dataset, "HDF5 files: describe this dataset (default: list them all)");
  cmd->add_option("--scale", args->scale, "Precomputed volumes: the scale to describe (default 0)");
  cmd->add_option("--level", args->level, "Multiscale images: the level to describe (default 0)");
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args, exit_code] {
    Status st = RunInfo(*args);
    if (!st.ok()) *exit_code = ReportError(st);
  });
}

}  // namespace tessera::cli
