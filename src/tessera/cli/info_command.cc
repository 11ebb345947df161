// `tessera info STORE [--json]`: what is stored and how.
#include <iostream>

#include "tessera/cli/cli_util.h"
#include "tessera/cli/commands.h"
#include "tessera/zarr/array.h"

namespace tessera::cli {
namespace {

struct InfoArgs {
  std::string store;
  bool json = false;
};

std::string ListText(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return "[" + s + "]";
}

Status RunInfo(const InfoArgs& a) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenFileStore(a.store, false));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<zarr::ZarrArray> array, zarr::ZarrArray::Open(store, ""));
  const zarr::ArrayMetadata& m = array->metadata();
  nlohmann::json j;
  j["format"] = "zarr3";
  j["dtype"] = std::string(DataTypeName(m.dtype));
  j["shape"] = m.shape;
  j["chunk_shape"] = array->read_chunk_shape();
  j["shard_shape"] = array->sharding() ? nlohmann::json(m.chunk_shape) : nlohmann::json(nullptr);
  j["codecs"] = m.codecs;
  j["fill_value"] = FillValueToJson(m.dtype, m.fill_value);
  j["chunk_key_encoding"] = m.chunk_key_encoding.ToJson();
  j["dimension_names"] = m.dimension_names ? *m.dimension_names : nlohmann::json(nullptr);
  if (a.json) {
    std::cout << j.dump(2) << "\n";
    return Status::Ok();
  }
  std::cout << "format:      zarr3\n"
            << "dtype:       " << DataTypeName(m.dtype) << "\n"
            << "shape:       " << ListText(m.shape) << "\n"
            << "chunk shape: " << ListText(array->read_chunk_shape()) << "\n"
            << "shard shape: " << (array->sharding() ? ListText(m.chunk_shape) : std::string("(unsharded)")) << "\n"
            << "codecs:      " << m.codecs.dump() << "\n"
            << "fill value:  " << j["fill_value"].dump() << "\n";
  return Status::Ok();
}

}  // namespace

void RegisterInfo(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand("info", "Describe an array store");
  cmd->add_option("STORE", args->store, "Array store (directory with zarr.json)")->required();
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args, exit_code] {
    Status st = RunInfo(*args);
    if (!st.ok()) *exit_code = ReportError(st);
  });
}

}  // namespace tessera::cli
