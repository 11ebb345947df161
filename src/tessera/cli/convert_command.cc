// `tessera convert SRC DST ...`: any array tessera reads into any format it writes, streamed with
// bounded memory (see api/convert.h). The destination takes the source's chunking, codec, fill value,
// names and attributes where its format can hold them; the options given change that.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "tessera/api/driver_registry.h"
#include "tessera/api/convert.h"
#include "tessera/api/tessera.h"
#include "tessera/cli/cli_util.h"
#include "tessera/cli/commands.h"
#include "tessera/cli/spec_options.h"
#include "tessera/cli/storage_option.h"
#include "tessera/core/parallel.h"
#include "tessera/core/text.h"
#include "tessera/spec/array_spec_json.h"

namespace tessera::cli {
namespace {

struct ConvertArgs {
  std::string src;
  std::string dst;
  std::string format;      // empty: from DST's name
  std::string dataset;     // the source's HDF5 dataset
  int source_level = 0;    // the source's OME-Zarr level or precomputed scale
  std::vector<std::string> hdf5_allowed_paths;  // beyond an HDF5 source's own directory tree
  std::vector<std::string> storage_options;     // KEY=VALUE: the source's and the destination's
  int threads = 0;
  bool plan = false;
  bool progress = false;
  bool overwrite = false;  // mode w
  SpecArgs spec;
};

// Codec blosc's settings as --plan prints them: " (cname blosclz, shuffle bitshuffle)"; empty when none is set.
std::string BloscSettingsText(const BloscSpecOptions& b) {
  std::string text;
  auto add = [&](const std::string& item) { text += (text.empty() ? " (" : ", ") + item; };
  if (!b.cname.empty()) add("cname " + b.cname);
  if (!b.shuffle.empty()) add("shuffle " + b.shuffle);
  if (b.typesize) add("typesize " + std::to_string(*b.typesize));
  if (b.blocksize) add("blocksize " + std::to_string(*b.blocksize));
  return text.empty() ? text : text + ")";
}

// What the destination will be, as --plan prints it before the copy's own plan.
// ", encoding jpeg (quality 90)": what a precomputed destination's chunks are encoded with.
std::string PrecomputedEncodingText(const ArraySpec& spec, Format format) {
  if (format != Format::kPrecomputed) return "";
  const PrecomputedSpecOptions& p = spec.precomputed;
  std::string text = ", encoding " + p.encoding;
  if (p.encoding == "compressed_segmentation") text += " (block " + JoinIntegers(p.cseg_block_xyz) + ")";
  if (p.encoding == "jpeg")
    text += p.jpeg_quality ? " (quality " + std::to_string(*p.jpeg_quality) + ")" : " (the default quality)";
  if (p.encoding == "png") text += p.png_level ? " (level " + std::to_string(*p.png_level) + ")" : " (the default level)";
  return text;
}

// ", shuffle, fletcher32": an HDF5 destination's filters besides its codec.
std::string HdfFiltersText(const ArraySpec& spec, Format format) {
  if (format != Format::kHdf5) return "";
  return std::string(spec.hdf5.shuffle ? ", shuffle" : "") + (spec.hdf5.fletcher32 ? ", fletcher32" : "");
}

std::string DescribeConversion(const Array& src, const ArraySpec& spec, Format format) {
  std::string text = "source: " + src.location().ToString() + " (" + std::string(FormatName(src.format())) + ", " +
                     std::string(DataTypeName(src.dtype())) + " " + JoinIntegers(src.shape()) + ", chunks " +
                     JoinIntegers(src.chunk_shape()) + ")\n";
  text += "destination: " + std::string(FormatName(format)) + ", chunks " + JoinIntegers(spec.chunk_shape) +
          (spec.shard_chunks.empty() ? std::string(", unsharded") : ", chunks per shard " + JoinIntegers(spec.shard_chunks)) +
          (spec.zarr.chunk_codecs.is_null()
               ? ", codec " + std::string(CodecName(*spec.codec)) + BloscSettingsText(spec.zarr.blosc) +
                     (spec.level ? " level " + std::to_string(*spec.level) : std::string())
               : ", the source's chunk codecs " + spec.zarr.chunk_codecs.dump()) +
          PrecomputedEncodingText(spec, format) + HdfFiltersText(spec, format) + "\n";
  return text;
}

// "<done> / <total> GB  <GB/s> GB/s  <s> s left".
std::string CopyProgressText(const CopyProgress& p) {
  const double gbps = p.seconds > 0 ? p.bytes_done / 1e9 / p.seconds : 0.0;
  const double left = p.bytes_done > 0 ? p.seconds * static_cast<double>(p.bytes_total - p.bytes_done) /
                                             static_cast<double>(p.bytes_done)
                                       : 0.0;
  char line[128];
  std::snprintf(line, sizeof line, "%.3f / %.3f GB  %.2f GB/s  %.0f s left", p.bytes_done / 1e9, p.bytes_total / 1e9,
                gbps, left);
  return line;
}

Status RunConvert(const ConvertArgs& a) {
  TESSERA_ASSIGN_OR_RETURN(const StoreOptions storage, ParseStorageOptions(a.storage_options));
  OpenOptions open;
  open.dataset = a.dataset;
  open.level = a.source_level;
  open.hdf5_allowed_paths = a.hdf5_allowed_paths;
  open.storage = storage;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Array> src, OpenArray(a.src, open));
  TESSERA_ASSIGN_OR_RETURN(const Format format, FormatForNew(a.dst, a.format));
  // A codec, level or chunk encoding given replaces the source's; without one, a source codec the
  // destination cannot write is an error naming it (never dropped silently).
  const SpecArgs& o = a.spec;
  const bool codec_chosen = !o.codec.empty() || o.level != SpecArgs::kUnsetLevel || !o.encoding.empty() ||
                            !o.cname.empty() || o.typesize != SpecArgs::kUnsetLevel ||
                            o.blocksize != SpecArgs::kUnsetLevel || (o.shuffle_option && o.shuffle_option->count() > 0);
  TESSERA_ASSIGN_OR_RETURN(const ArraySpec source_spec, ConversionSpec(*src, format, codec_chosen));
  TESSERA_ASSIGN_OR_RETURN(ArraySpec spec, SpecFromArgs(a.spec, ArraySpecToJson(source_spec), format));
  StreamOptions options;
  options.format = format;
  options.threads = a.threads > 0 ? a.threads : DefaultThreadCount();
  options.mode = a.overwrite ? Mode::kOverwrite : Mode::kCreate;
  options.storage = storage;
  TESSERA_ASSIGN_OR_RETURN(ArraySpec resolved, ResolveSpec(spec, format));
  if (a.plan) {
    TESSERA_ASSIGN_OR_RETURN(std::string plan, PlanConversion(*src, a.dst, spec, options));
    std::cout << DescribeConversion(*src, resolved, format) << plan;
    return Status::Ok();
  }
  ProgressLine progress(a.progress || ::isatty(STDERR_FILENO));
  CopyOptions copy;
  copy.read_threads = options.threads;
  CopyProgress last;
  copy.progress = [&](const CopyProgress& p) {
    last = p;
    progress.Update(false, [&](double) { return CopyProgressText(p); });
  };
  TESSERA_RETURN_IF_ERROR(Convert(*src, a.dst, spec, options, copy).status());
  progress.Update(true, [&](double) { return CopyProgressText(last); });
  return Status::Ok();
}

}  // namespace

void RegisterConvert(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app.add_subcommand(
      "convert", "Convert an array (Zarr v3, precomputed, HDF5; local, s3:// or http(s)://) into any format tessera writes");
  cmd->add_option("SRC", args->src, "The array to read (an HDF5 file: with --dataset when it holds several)")->required();
  cmd->add_option("DST", args->dst, "The array to write (directory or s3:// prefix; a file for hdf5)")->required();
  cmd->add_option("--format", args->format, "Output format: zarr3, precomputed or hdf5 (default: hdf5 for a .h5, .hdf5, .he5, .nc or .hdf name, else zarr3)")
      ->check(CLI::IsMember({"zarr3", "precomputed", "hdf5"}));
  cmd->add_option("--dataset", args->dataset, "The source's HDF5 dataset (default: its only one)");
  cmd->add_option("--hdf5-allowed-path", args->hdf5_allowed_paths,
                  "HDF5 files: a directory (or file) beyond the file's own directory tree that virtual dataset sources and external raw data may come from (repeatable; by default only the file's own tree is followed)");
  AddStorageOption(cmd, &args->storage_options);
  cmd->add_option("--source-level", args->source_level, "The source's OME-Zarr level or precomputed scale (default 0)");
  AddSpecOptions(cmd, &args->spec, "--out-dataset");
  cmd->add_option("--threads", args->threads, "Compression and decode threads (default: hardware threads)");
  cmd->add_flag("--plan", args->plan, "Print the destination's spec and the memory plan, then exit without writing");
  cmd->add_flag("--progress", args->progress, "Print a progress line on stderr (default: when stderr is a terminal)");
  cmd->add_flag("--overwrite", args->overwrite,
                "Replace the array at DST (removed wholly first); without it, DST must not exist (or be an empty directory)");
  cmd->footer(
      "Options left out take the source's value where the destination's format holds it (chunk shape, chunks per "
      "shard, codec and level, fill value, dimension names, attributes; a Zarr source's chunk codecs as stored, "
      "unless --codec, --level or a blosc setting (--cname, --shuffle, ...) is given), else that format's default. "
      "--shard-chunks none makes an unsharded array. The output is byte-identical to `tessera stream` of the same "
      "values with the same options.");
  cmd->callback([args, exit_code] {
    Status st = RunConvert(*args);
    // The destination's dataset is --out-dataset here (--dataset names the source's).
    if (FieldName(st) == "dataset") st = RespellSpecField(st, "--out-dataset");
    if (!st.ok()) *exit_code = ReportError(WithOverwriteHint(st));
  });
}

}  // namespace tessera::cli
