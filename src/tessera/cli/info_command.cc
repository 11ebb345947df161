// `tessera info STORE [--json]`: what is stored and how.
#include <algorithm>
#include <iostream>

#include "tessera/cli/cli_util.h"
#include "tessera/api/driver_registry.h"
#include "tessera/cli/commands.h"
#include "tessera/cli/storage_option.h"
#include "tessera/api/tessera.h"
#include "tessera/hdf5/h5_reader.h"
#include "tessera/spec/array_spec_json.h"
#include "tessera/store/location.h"
#include "tessera/store/store.h"
#include "tessera/zarr/bfloat16_fill.h"

namespace tessera::cli {
namespace {

struct InfoArgs {
  std::string store;
  bool json = false;
  int scale = 0;
  int level = 0;
  std::string dataset;
  std::vector<std::string> hdf5_allowed_paths;
  std::vector<std::string> storage_options;  // KEY=VALUE
};

std::string ListText(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return "[" + s + "]";
}

// The element type: a tessera dtype name, or an element type's description (an HDF5 compound, ...).
std::string DtypeText(const Array& array) {
  if (const ObjectType* o = array.object_type()) return o->name;  // variable-length: "string (vlen-utf8)"
  if (const ElementType* e = array.element_type()) return e->description;
  return std::string(DataTypeName(array.dtype()));
}

// The fill value: the dtype's JSON (bfloat16's too), or an element type's bytes as hex ("0x00ff...").
nlohmann::json FillText(const Array& array) {
  if (const ObjectType* o = array.object_type()) {
    // Text came from JSON (valid UTF-8); other bytes are shown as hex, as JSON cannot hold them.
    if (o->kind == ObjectKind::kString) return array.object_fill_value();
    std::string hex = "0x";
    for (unsigned char b : array.object_fill_value()) hex += "0123456789abcdef"[b >> 4], hex += "0123456789abcdef"[b & 15];
    return hex;
  }
  if (!array.element_type()) return FillValueToJson(array.dtype(), array.fill_value());
  // bfloat16 (Zarr): a number, as zarr.json spells it, rather than its bits.
  if (array.element_type()->numpy == "bfloat16") return zarr::BFloat16FillValueToJson(array.fill_value());
  static const char* kDigits = "0123456789abcdef";
  std::string hex = "0x";
  for (uint8_t b : array.fill_value().bytes) {
    hex += kDigits[b >> 4];
    hex += kDigits[b & 15];
  }
  return hex;
}

nlohmann::json Summary(const Array& array) {
  nlohmann::json j = array.description();
  j["format"] = std::string(FormatName(array.format()));
  j["dtype"] = DtypeText(array);
  j["shape"] = array.shape();
  j["chunk_shape"] = array.chunk_shape();
  j["fill_value"] = FillText(array);
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

// `tessera info FILE.h5` without --dataset: every dataset, one line each. A dataset (or object)
// tessera cannot open is listed with the reason rather than failing the whole listing.
Status RunHdf5Listing(const InfoArgs& a, const Location& location, const StoreOptions& storage) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<hdf5::Hdf5File> file, hdf5::Hdf5File::Open(location));
  TESSERA_ASSIGN_OR_RETURN(std::vector<hdf5::WalkedObject> objects, file->WalkDatasets());
  std::sort(objects.begin(), objects.end(),
            [](const hdf5::WalkedObject& x, const hdf5::WalkedObject& y) { return x.path < y.path; });
  nlohmann::json datasets = nlohmann::json::array();
  for (const hdf5::WalkedObject& object : objects) {
    const std::string& name = object.path;
    if (!object.error.ok()) {
      datasets.push_back({{"dataset", name}, {"error", object.error.ToString()}});
      continue;
    }
    OpenOptions open;
    open.format = Format::kHdf5;
    open.dataset = name;
    open.hdf5_allowed_paths = a.hdf5_allowed_paths;
    open.storage = storage;
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

// The `.zarray` of a Zarr v2 array at `store` (read through the v3 translation, v2_metadata.h), or
// null for anything else: `info` shows what is stored (the v2 compressor and filters), not the
// translation.
nlohmann::json ZarrV2Document(const std::string& store, const StoreOptions& storage) {
  Result<Location> location = ParseLocation(store, storage);
  if (!location.ok()) return nullptr;
  Result<std::shared_ptr<Store>> opened = OpenLocationStore(*location, /*create=*/false);
  if (!opened.ok()) return nullptr;
  Result<std::optional<Bytes>> v3 = (*opened)->Get("zarr.json");
  if (!v3.ok() || v3->has_value()) return nullptr;
  Result<std::optional<Bytes>> v2 = (*opened)->Get(".zarray");
  if (!v2.ok() || !v2->has_value()) return nullptr;
  const nlohmann::json doc = nlohmann::json::parse((*v2)->begin(), (*v2)->end(), nullptr, /*allow_exceptions=*/false);
  return doc.is_object() ? doc : nlohmann::json(nullptr);
}

Status RunInfo(const InfoArgs& a) {
  TESSERA_ASSIGN_OR_RETURN(const StoreOptions storage, ParseStorageOptions(a.storage_options));
  if (a.dataset.empty()) {
    Result<Location> location = ParseLocation(a.store, storage);
    if (location.ok()) {
      Result<Format> format = DetectFormat(*location);
      if (format.ok() && *format == Format::kHdf5) return RunHdf5Listing(a, *location, storage);
    }
  }
  OpenOptions open;
  open.dataset = a.dataset;
  open.scale = a.scale;
  open.level = a.level;
  open.hdf5_allowed_paths = a.hdf5_allowed_paths;
  open.storage = storage;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Array> opened, OpenArray(a.store, open));
  const Array& array = *opened;
  std::string format(FormatName(array.format()));
  nlohmann::json j = Summary(array);
  if (format == "zarr3" && !j.contains("ome")) {
    nlohmann::json zarray = ZarrV2Document(a.store, storage);
    if (!zarray.is_null()) {
      format = "zarr2";
      j["format"] = format;
      j["zarray"] = {{"dtype", zarray.value("dtype", nlohmann::json(nullptr))},
                     {"order", zarray.value("order", nlohmann::json("C"))},
                     {"compressor", zarray.value("compressor", nlohmann::json(nullptr))},
                     {"filters", zarray.value("filters", nlohmann::json(nullptr))},
                     {"dimension_separator", zarray.value("dimension_separator", nlohmann::json("."))}};
    }
  }
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
            << "dtype:       " << DtypeText(array) << "\n"
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
  } else if (format == "zarr2") {
    const nlohmann::json& v2 = j["zarray"];
    std::cout << "v2 dtype:    " << JsonText(v2["dtype"]) << ", order " << JsonText(v2["order"]) << "\n"
              << "compressor:  " << JsonText(v2["compressor"]) << "\n"
              << "filters:     " << JsonText(v2["filters"]) << "\n";
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
  cmd->add_option("--hdf5-allowed-path", args->hdf5_allowed_paths,
                  "HDF5 files: a directory (or file) beyond the file's own directory tree that virtual dataset sources and external raw data may come from (repeatable; by default only the file's own tree is followed)");
  AddStorageOption(cmd, &args->storage_options);
  cmd->add_option("--scale", args->scale, "Precomputed volumes: the scale to describe (default 0)");
  cmd->add_option("--level", args->level, "Multiscale images: the level to describe (default 0)");
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args, exit_code] {
    Status st = RunInfo(*args);
    if (!st.ok()) *exit_code = ReportError(st);
  });
}

}  // namespace tessera::cli
