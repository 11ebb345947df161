// `tessera read STORE --slice EXPR`: a hyperslab out as raw little-endian C-order bytes.
#include <thread>

#include "tessera/cli/cli_util.h"
#include "tessera/cli/commands.h"
#include "tessera/cli/storage_option.h"
#include "tessera/api/tessera.h"

namespace tessera::cli {
namespace {

struct ReadArgs {
  std::string store;
  std::string slice;
  std::string output = "-";
  int threads = 0;
  int scale = 0;
  int level = 0;
  std::string dataset;
  std::vector<std::string> hdf5_allowed_paths;
  std::vector<std::string> storage_options;  // KEY=VALUE
};

// Output is produced in pieces of about this many bytes (cut at chunk rows along dimension 0), so
// memory stays bounded however large the selection. While one piece is decoded the previous one
// is written out.
constexpr int64_t kPieceBytes = int64_t{32} << 20;

Status RunRead(const ReadArgs& a) {
  OpenOptions open;
  open.dataset = a.dataset;
  open.scale = a.scale;
  open.level = a.level;
  open.hdf5_allowed_paths = a.hdf5_allowed_paths;
  TESSERA_ASSIGN_OR_RETURN(open.storage, ParseStorageOptions(a.storage_options));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Array> array, OpenArray(a.store, open));
  TESSERA_ASSIGN_OR_RETURN(Hyperslab sel, array->Select(a.slice));
  TESSERA_ASSIGN_OR_RETURN(CFile out, CFile::Open(a.output, true));
  const int64_t item = static_cast<int64_t>(array->item_size());
  if (sel.NumElements() == 0) return out.Close();
  ReadOptions options;
  options.threads = a.threads;
  const int64_t chunk0 = array->chunk_shape().empty() ? 1 : array->chunk_shape()[0];
  const std::vector<Hyperslab> pieces = SplitIntoPieces(sel, chunk0, item, kPieceBytes);
  Bytes buffers[2];
  std::thread writer;
  Status write_status;
  auto join_writer = [&]() -> Status {
    if (writer.joinable()) writer.join();
    return write_status;
  };
  for (size_t i = 0; i < pieces.size(); ++i) {
    Bytes& buffer = buffers[i % 2];
    ReserveHugePages(&buffer, static_cast<size_t>(pieces[i].NumElements() * item));  // written whole
    buffer.resize(static_cast<size_t>(pieces[i].NumElements() * item));
    Status st = array->Read(pieces[i], buffer.data(), options);
    Status written = join_writer();  // the previous piece is out; its buffer is free again
    TESSERA_RETURN_IF_ERROR(st);
    TESSERA_RETURN_IF_ERROR(written);
    writer = std::thread([&out, &buffer, &write_status] { write_status = out.WriteAll(buffer.data(), buffer.size()); });
  }
  TESSERA_RETURN_IF_ERROR(join_writer());
  return out.Close();
}

}  // namespace

void RegisterRead(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReadArgs>();
  CLI::App* cmd = app.add_subcommand("read", "Read a hyperslab as raw little-endian C-order bytes");
  cmd->add_option("STORE", args->store,
                  "Array store: a Zarr v3 array, a Neuroglancer precomputed volume or an HDF5 file")->required();
  cmd->add_option("--dataset", args->dataset, "HDF5 files: the dataset's path, e.g. /group/data (default: the only one)");
  cmd->add_option("--hdf5-allowed-path", args->hdf5_allowed_paths,
                  "HDF5 files: a directory (or file) beyond the file's own directory tree that virtual dataset sources and external raw data may come from (repeatable; by default only the file's own tree is followed)");
  AddStorageOption(cmd, &args->storage_options);
  cmd->add_option("--scale", args->scale, "Precomputed volumes: the scale to read (index into \"scales\", default 0)");
  cmd->add_option("--level", args->level,
                  "Multiscale images: the level to read (OME-Zarr: the dataset, 0 = full resolution; precomputed: the scale)");
  cmd->add_option("--slice", args->slice, "numpy basic indexing, e.g. \"0, 10:20, ::-2\" (default: all)");
  cmd->add_option("--output,-o", args->output, "Output file, or - for stdout");
  cmd->add_option("--threads", args->threads, "Worker threads (default: hardware threads)");
  cmd->callback([args, exit_code] {
    Status st = RunRead(*args);
    if (!st.ok()) *exit_code = ReportError(st);
  });
}

}  // namespace tessera::cli
