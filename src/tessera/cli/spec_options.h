// The command-line options that describe an array to write (--chunk, --shard-chunks, --codec,
// pyramid and per-format options), shared by `tessera stream` and `tessera convert`. They become
// one patch of the spec's JSON form (spec/array_spec_json.h), laid over the spec the command
// starts from and read by ArraySpecFromJson: the CLI builds its spec in that one place. An option
// left out leaves the spec's field as it was: the library's default (or a --spec file's) for
// `stream`, the source's value for `convert`.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tessera/spec/array_spec.h"

namespace tessera::cli {

struct SpecArgs {
  std::string chunk;
  std::string shard_chunks;
  std::string codec;
  static constexpr int kUnsetLevel = -1000000;
  int level = kUnsetLevel;
  // --codec blosc's settings (--shuffle too, below); kUnsetLevel: not given.
  std::string cname;
  int typesize = kUnsetLevel;
  int blocksize = kUnsetLevel;
  std::string index_location;
  std::string fill_value;
  // --format precomputed
  std::string encoding;
  std::string hash;
  std::string resolution;
  std::string voxel_offset;
  std::string cseg_block;
  int jpeg_quality = kUnsetLevel;
  int png_level = kUnsetLevel;
  std::string scale_key;
  // --format hdf5
  std::string dataset;
  // --shuffle [VALUE]: the shuffle before compression, applied only when given (convert keeps the
  // source's). hdf5: the shuffle filter (bare, true/false, or a name below); otherwise blosc's
  // shuffle (noshuffle|shuffle|bitshuffle or none|byte|bit; bare or true: shuffle, false: noshuffle).
  std::string shuffle;
  bool fletcher32 = false;
  const CLI::Option* shuffle_option = nullptr;
  const CLI::Option* fletcher32_option = nullptr;
  std::vector<std::string> attributes;  // NAME=VALUE
  // Pyramid and OME-Zarr image
  std::string pyramid;             // LEVELS or auto
  std::string downsample;
  std::string downsample_factors;
  std::string axes;
  std::string voxel_size;
  std::string translation;
  bool ome = false;
  // `tessera stream` only (AddArrivalOrderOption): I0,I1,... the stored dimension each arriving one is.
  std::string arrival_order;
};

// The command line with each bare --shuffle spelled --shuffle=true: --shuffle takes an optional
// value, so a word after it that is not one of its values (a positional argument, as in
// `--shuffle OUT.h5`) is left to the command instead of taken as the value.
std::vector<std::string> ArgsWithBareShuffle(int argc, char** argv);

// Adds the options to `cmd`. `dataset_flag` is the spelling of the HDF5 dataset option
// ("--dataset" for stream; convert uses --dataset for its source).
void AddSpecOptions(CLI::App* cmd, SpecArgs* args, const std::string& dataset_flag);

// Adds --arrival-order (ArraySpec::arrival_order) to `cmd`: for a command whose input arrives in
// an order of its own (`tessera stream`); convert reads its source in stored order.
void AddArrivalOrderOption(CLI::App* cmd, SpecArgs* args);

// The spec `base` (the JSON form of a spec) with the fields the options give laid over it. Only
// the command-line spelling is checked here; ArraySpecFromJson reads the result and ResolveSpec
// checks it against a format. Errors name the option ("--chunk ...", or, from the library, the
// field, which ReportError respells as its option).
// `format`: the format written, which decides what --shuffle is (HDF5's filter or blosc's).
Result<ArraySpec> SpecFromArgs(const SpecArgs& a, nlohmann::json base, Format format);

// The JSON form of a spec given to --spec: a file holding one JSON object, or the object itself
// (text starting with '{'), as `tessera info --json` prints it under "spec". Errors name --spec.
Result<nlohmann::json> ReadSpecOption(const std::string& value);

}  // namespace tessera::cli
