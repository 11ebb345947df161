// `tessera stream OUT ...`: raw little-endian C-order bytes in, a chunked array out, through the
// streaming writer (bounded memory, shards emitted as they complete).
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <functional>
#include <iostream>
#include <utility>

#include <cerrno>
#include <cstdlib>
#include <cmath>
#include <limits>

#include "tessera/api/driver_registry.h"
#include "tessera/api/tessera.h"
#include "tessera/cli/cli_util.h"
#include "tessera/cli/commands.h"
#include "tessera/cli/spec_options.h"
#include "tessera/cli/storage_option.h"
#include "tessera/core/parallel.h"
#include "tessera/core/text.h"
#include "tessera/stream/synthetic.h"
#include "tessera/zarr/metadata.h"

namespace tessera::cli {
namespace {

struct StreamArgs {
  std::string out;
  std::string spec_file;  // --spec: a spec's JSON form the other options are laid over
  std::string format;  // empty: from OUT's name (".h5", ".hdf5", ... -> hdf5; else zarr3)
  std::string dtype;
  std::string shape;
  std::string input = "-";
  std::string synthetic;
  std::string backend = "cpu";
  std::string sink = "file";
  int threads = 0;
  bool plan = false;
  bool progress = false;
  bool overwrite = false;  // mode w
  bool append = false;     // mode a
  std::vector<std::string> storage_options;  // KEY=VALUE
  SpecArgs spec;
};

// --spec, --dtype, --shape and the spec options as the library's ArraySpec: the options laid over
// the --spec file's spec (or an empty one).
Result<ArraySpec> BuildSpec(const StreamArgs& a, Format format) {
  nlohmann::json base = nlohmann::json::object();
  if (!a.spec_file.empty()) {
    TESSERA_ASSIGN_OR_RETURN(base, ReadSpecOption(a.spec_file));
  }
  if (!a.dtype.empty()) base["dtype"] = a.dtype;
  if (!a.shape.empty()) {
    TESSERA_ASSIGN_OR_RETURN(base["shape"], ParseIntList(a.shape, "--shape"));
  }
  for (const auto& [key, flag] : {std::pair{"dtype", "--dtype"}, std::pair{"shape", "--shape"}})
    if (!base.contains(key) || base[key].is_null())
      return InvalidArgument("--spec " + a.spec_file + " has no " + key + ": give " + flag);
  return SpecFromArgs(a.spec, std::move(base), format);
}

// "<GB> GB  <GB/s> GB/s  <frames> frames  ratio <x>".
// "<done> GB  <GB/s> GB/s  <n> frames  ratio <r>"; a bounded stream (total_bytes > 0) shows its total
// and the time left as convert does: "<done> / <total> GB  <GB/s> GB/s  <s> s left  ...".
std::string StreamProgress(const StreamStatistics& s, int64_t frame_bytes, int64_t total_bytes, double seconds) {
  const double ratio = s.bytes_out > 0 ? static_cast<double>(s.bytes_in) / static_cast<double>(s.bytes_out) : 0.0;
  const double gbps = seconds > 0 ? s.bytes_in / 1e9 / seconds : 0.0;
  const long long frames = static_cast<long long>(s.bytes_in / frame_bytes);
  char line[160];
  if (total_bytes > 0) {
    const double left = s.bytes_in > 0 ? seconds * static_cast<double>(total_bytes - s.bytes_in) /
                                             static_cast<double>(s.bytes_in)
                                       : 0.0;
    std::snprintf(line, sizeof line, "%.3f / %.3f GB  %.2f GB/s  %.0f s left  %lld frames  ratio %.2f",
                  s.bytes_in / 1e9, total_bytes / 1e9, gbps, left, frames, ratio);
  } else {
    std::snprintf(line, sizeof line, "%.3f GB  %.2f GB/s  %lld frames  ratio %.2f", s.bytes_in / 1e9, gbps, frames,
                  ratio);
  }
  return line;
}

Status RunStream(const StreamArgs& a) {
  TESSERA_ASSIGN_OR_RETURN(const Format format, FormatForNew(a.out, a.format));
  // --append without --dtype and --shape: the stored array's spec (its other options, if given, must agree).
  const bool stored_spec = a.append && a.spec_file.empty() && a.dtype.empty() && a.shape.empty();
  ArraySpec spec;
  if (stored_spec) {
    TESSERA_ASSIGN_OR_RETURN(spec, SpecFromArgs(a.spec, nlohmann::json::object(), format));
  } else {
    TESSERA_ASSIGN_OR_RETURN(spec, BuildSpec(a, format));
  }
  StreamOptions options;
  // Appending without --format continues whatever format is stored at OUT.
  if (!(a.append && a.format.empty())) options.format = format;
  options.threads = a.threads > 0 ? a.threads : DefaultThreadCount();
  TESSERA_ASSIGN_OR_RETURN(options.backend, stream::ParseBackend(a.backend));
  options.discard = a.sink == "discard";
  options.mode = a.overwrite ? Mode::kOverwrite : a.append ? Mode::kAppend : Mode::kCreate;
  TESSERA_ASSIGN_OR_RETURN(options.storage, ParseStorageOptions(a.storage_options));
  if (a.plan) {
    TESSERA_ASSIGN_OR_RETURN(std::string plan, PlanStream(a.out, spec, options));
    std::cout << plan;
    return Status::Ok();
  }
  // The spec is checked before the input is looked at, so a bad option is reported as such. A
  // continued array (--append) is opened first: its spec is the stored one.
  std::unique_ptr<Stream> continued;
  if (a.append) {
    TESSERA_ASSIGN_OR_RETURN(continued, CreateStream(a.out, spec, options));
    spec = continued->spec();
  } else {
    TESSERA_ASSIGN_OR_RETURN(spec, ResolveSpec(spec, format));
  }
  const std::vector<int64_t>& shape = spec.shape;
  // A continued array's input is its new rows only: their count is checked by the stream's Close.
  const bool unbounded = shape[0] == 0 || a.append;
  // As messages name them (given with --shape and --dtype, or by --spec).
  const std::string shape_text = JoinIntegers(shape), dtype_text(DataTypeName(spec.dtype));
  std::optional<stream::SyntheticKind> synthetic;
  if (!a.synthetic.empty()) {
    TESSERA_ASSIGN_OR_RETURN(synthetic, stream::ParseSyntheticKind(a.synthetic));
    if (unbounded) return InvalidArgument("--synthetic needs a bounded shape (S0 > 0)");
  }
  std::optional<CFile> in;
  // The input's byte count (a bounded array); the resolved shape is positive, the product may not fit.
  unsigned __int128 needed = ItemSize(spec.dtype);
  for (int64_t v : shape) needed *= static_cast<uint64_t>(std::max<int64_t>(v, 1));
  if (needed > std::numeric_limits<uint64_t>::max())
    return OutOfRange("--shape " + shape_text + " of " + dtype_text + " needs more than 2^64 bytes");
  const uint64_t expected = unbounded ? 0 : static_cast<uint64_t>(needed);
  if (!synthetic) {
    TESSERA_ASSIGN_OR_RETURN(CFile f, CFile::Open(a.input, false));
    in.emplace(std::move(f));
    // A bounded array from a regular file: check the size before writing anything.
    struct stat st;
    if (!unbounded && a.input != "-" && ::stat(a.input.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<uint64_t>(st.st_size) != expected)
      return InvalidArgument("input " + a.input + " has " + std::to_string(st.st_size) + " bytes but shape " + shape_text +
                             " of " + dtype_text + " needs " + std::to_string(expected));
  }
  std::unique_ptr<Stream> stream = std::move(continued);
  if (!stream) {
    TESSERA_ASSIGN_OR_RETURN(stream, CreateStream(a.out, spec, options));
  }
  if (options.backend == stream::Backend::kCuda && (a.progress || ::isatty(STDERR_FILENO)))
    std::cerr << stream->DescribePlan();
  const int64_t row_bytes = stream->row_bytes();
  const DataType dtype = spec.dtype;
  const int64_t item_bytes = static_cast<int64_t>(ItemSize(dtype));
  ProgressLine progress(a.progress || ::isatty(STDERR_FILENO));
  auto show = [&](bool final) {
    const int64_t total_bytes = static_cast<int64_t>(std::min<uint64_t>(expected, INT64_MAX));  // 0: unbounded
    progress.Update(final, [&](double seconds) { return StreamProgress(stream->stats(), row_bytes, total_bytes, seconds); });
  };
  // The input is read into the space the stream offers (AppendFrom), at most kReadBytes per call so the
  // progress line moves.
  constexpr size_t kReadBytes = size_t{8} << 20;
  constexpr size_t kSyntheticReadBytes = size_t{64} << 20;
  int64_t fed = 0;
  auto read = [&](MutableByteView dst) -> Result<size_t> {
    size_t got;
    if (synthetic) {
      // Whole elements, as many as fit (up to kSyntheticReadBytes per call), generated on all
      // threads so the generator is not what a benchmark measures. Any split of the stream gives
      // the same values (FillSynthetic is a function of the element index).
      const int64_t total_elements = shape[0] * (row_bytes / item_bytes);
      const int64_t n = std::min<int64_t>(std::min(dst.size(), kSyntheticReadBytes) / static_cast<size_t>(item_bytes),
                                          total_elements - fed / item_bytes);
      if (n <= 0) return size_t{0};
      stream::FillSyntheticParallel(*synthetic, dtype, row_bytes / item_bytes, fed / item_bytes, n, dst.data(),
                                    options.threads);
      got = static_cast<size_t>(n * item_bytes);
    } else {
      TESSERA_ASSIGN_OR_RETURN(got, in->ReadFully(dst.data(), std::min(dst.size(), kReadBytes)));
    }
    fed += static_cast<int64_t>(got);
    show(false);
    return got;
  };
  TESSERA_RETURN_IF_ERROR(stream->AppendFrom(read).status());
  if (!unbounded && !synthetic && static_cast<uint64_t>(fed) == expected) {
    // The array is complete: anything left in the input is an error, not silently ignored.
    uint8_t extra;
    Result<size_t> more = in->ReadFully(&extra, 1);
    Status st = more.ok() && *more > 0 ? InvalidArgument("input has more than the " + std::to_string(expected) +
                                                         " bytes shape " + shape_text + " of " + dtype_text + " needs")
                                       : more.status();
    if (!st.ok()) {
      stream->Abort();
      return st;
    }
  }
  Status st = stream->Close();
  show(true);
  if (!st.ok()) return st.WithContext("input " + (synthetic ? std::string("(synthetic)") : in->path()));
  return Status::Ok();
}

}  // namespace

void RegisterStream(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<StreamArgs>();
  CLI::App* cmd = app.add_subcommand("stream", "Stream raw little-endian C-order bytes into a chunked array");
  cmd->add_option("OUT", args->out, "Output store (directory; a file for hdf5)")->required();
  cmd->add_option("--format", args->format, "Output format: zarr3, precomputed or hdf5 (default: hdf5 for a .h5, .hdf5, .he5, .nc or .hdf name, else zarr3)")
      ->check(CLI::IsMember({"zarr3", "precomputed", "hdf5"}));
  cmd->add_option("--dtype", args->dtype, "Element type (uint16, float32, ...); required unless --spec gives it");
  cmd->add_option("--shape", args->shape,
                  "S0,S1,... (S0 = 0: unbounded along dimension 0); required unless --spec gives it");
  cmd->add_option("--spec", args->spec_file,
                  "FILE (or {...}): the array's spec as JSON, as `tessera info --json` prints it under \"spec\"; "
                  "the other options change it");
  AddSpecOptions(cmd, &args->spec, "--dataset");
  AddArrivalOrderOption(cmd, &args->spec);
  cmd->add_option("--input", args->input, "Input file, or - for stdin");
  cmd->add_option("--synthetic", args->synthetic, "Generate the input instead: camera|zeros|random")
      ->check(CLI::IsMember({"camera", "zeros", "random"}));
  cmd->add_option("--backend", args->backend, "Pipeline backend: cpu (default) or cuda (codecs none, zstd, gzip)");
  cmd->add_option("--threads", args->threads, "Compression threads (default: hardware threads)");
  AddStorageOption(cmd, &args->storage_options);
  cmd->add_option("--sink", args->sink, "file (default) or discard (benchmarks: encode everything, store nothing)")
      ->check(CLI::IsMember({"file", "discard"}));
  cmd->add_flag("--plan", args->plan, "Print the layout and memory plan, then exit without writing");
  cmd->add_flag("--progress", args->progress, "Print a progress line on stderr (default: when stderr is a terminal)");
  CLI::Option* overwrite = cmd->add_flag(
      "--overwrite", args->overwrite,
      "Replace the array at OUT (removed wholly first); without it, OUT must not exist (or be an empty directory)");
  cmd->add_flag("--append", args->append, "Continue the array at OUT along dimension 0 with its stored spec (or create it)")
      ->excludes(overwrite);
  cmd->callback([args, exit_code] {
    // Without a spec to take them from, --dtype and --shape are required (a usage error); --append
    // takes the stored array's.
    if (args->spec_file.empty() && !args->append) {
      if (args->dtype.empty()) throw CLI::RequiredError("--dtype");
      if (args->shape.empty()) throw CLI::RequiredError("--shape");
    }
    Status st = RunStream(*args);
    if (!st.ok()) *exit_code = ReportError(WithOverwriteHint(st));
  });
}

}  // namespace tessera::cli
