// `tessera read STORE --slice EXPR`: a hyperslab out as raw little-endian C-order bytes.
#include "tessera/cli/cli_util.h"
#include "tessera/cli/commands.h"
#include "tessera/zarr/array.h"

namespace tessera::cli {
namespace {

struct ReadArgs {
  std::string store;
  std::string slice;
  std::string output = "-";
  int threads = 0;
};

// Output is produced in pieces of at most this many bytes, split along the first dimension, so
// memory stays bounded however large the selection.
constexpr int64_t kPieceBytes = int64_t{256} << 20;

Status RunRead(const ReadArgs& a) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenFileStore(a.store, false));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<zarr::ZarrArray> array, zarr::ZarrArray::Open(store, ""));
  TESSERA_ASSIGN_OR_RETURN(Hyperslab sel, ParseSliceExpression(a.slice, array->shape()));
  TESSERA_ASSIGN_OR_RETURN(CFile out, CFile::Open(a.output, true));
  const int64_t item = static_cast<int64_t>(ItemSize(array->dtype()));
  const int64_t total = sel.NumElements();
  if (total == 0) return out.Close();
  ReadOptions options;
  options.threads = a.threads;
  // Split along dimension 0 of the selection.
  const int64_t rows = sel.dims.empty() ? 1 : sel.dims[0].count;
  const int64_t row_bytes = total / std::max<int64_t>(rows, 1) * item;
  const int64_t rows_per_piece = std::max<int64_t>(1, kPieceBytes / std::max<int64_t>(row_bytes, 1));
  Bytes buffer;
  for (int64_t r = 0; r < rows; r += rows_per_piece) {
    Hyperslab piece = sel;
    if (!sel.dims.empty()) {
      piece.dims[0].start = sel.dims[0].start + r * sel.dims[0].step;
      piece.dims[0].count = std::min(rows_per_piece, rows - r);
    }
    buffer.resize(static_cast<size_t>(piece.NumElements() * item));
    TESSERA_RETURN_IF_ERROR(array->Read(piece, buffer.data(), options));
    TESSERA_RETURN_IF_ERROR(out.WriteAll(buffer.data(), buffer.size()));
  }
  return out.Close();
}

}  // namespace

void RegisterRead(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReadArgs>();
  CLI::App* cmd = app.add_subcommand("read", "Read a hyperslab as raw little-endian C-order bytes");
  cmd->add_option("STORE", args->store, "Array store (directory with zarr.json)")->required();
  cmd->add_option("--slice", args->slice, "numpy basic indexing, e.g. \"0, 10:20, ::-2\" (default: all)");
  cmd->add_option("--output,-o", args->output, "Output file, or - for stdout");
  cmd->add_option("--threads", args->threads, "Worker threads (default: hardware threads)");
  cmd->callback([args, exit_code] {
    Status st = RunRead(*args);
    if (!st.ok()) *exit_code = ReportError(st);
  });
}

}  // namespace tessera::cli
