#include "tessera/zarr/blosc_settings.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "tessera/spec/spec_error.h"

namespace tessera::zarr {
namespace {

// Each shuffle spelling and the Zarr name it stands for.
constexpr std::pair<std::string_view, std::string_view> kShuffleSpellings[] = {
    {"noshuffle", "noshuffle"}, {"shuffle", "shuffle"}, {"bitshuffle", "bitshuffle"},
    {"none", "noshuffle"},      {"byte", "shuffle"},    {"bit", "bitshuffle"}};

constexpr int kDefaultClevel = 5;
constexpr std::string_view kDefaultCname = "zstd";

std::string CnameList() {
  std::string list;
  for (std::string_view c : kBloscCnames) list += (list.empty() ? "" : ", ") + std::string(c);
  return list;
}

bool IsWritableCname(std::string_view cname) {
  return std::find(kBloscCnames.begin(), kBloscCnames.end(), cname) != kBloscCnames.end();
}

// zarr-python's shuffle for a dtype: bitshuffle for 1-byte elements, byte shuffle otherwise.
std::string_view DefaultShuffle(DataType dtype) { return ItemSize(dtype) == 1 ? "bitshuffle" : "shuffle"; }

// The shuffle blosc-lz4 and blosc-zstd write: the byte shuffle, none for 1-byte elements.
std::string_view PresetShuffle(DataType dtype) { return ItemSize(dtype) > 1 ? "shuffle" : "noshuffle"; }

}  // namespace

Result<std::string> CanonicalBloscShuffle(std::string_view shuffle) {
  for (const auto& [spelling, name] : kShuffleSpellings)
    if (shuffle == spelling) return std::string(name);
  return InvalidField("shuffle", "must be noshuffle, shuffle or bitshuffle (or none, byte, bit), not \"" +
                                     std::string(shuffle) + "\"");
}

Result<BloscSpecOptions> CanonicalBloscSettings(const BloscSpecOptions& blosc) {
  BloscSpecOptions out = blosc;
  if (!blosc.cname.empty() && !IsWritableCname(blosc.cname))
    return InvalidField("cname", "must be one of " + CnameList() + ", not \"" + blosc.cname + "\"");
  if (!blosc.shuffle.empty()) {
    TESSERA_ASSIGN_OR_RETURN(out.shuffle, CanonicalBloscShuffle(blosc.shuffle));
  }
  if (blosc.typesize && (*blosc.typesize < 1 || *blosc.typesize > kMaxBloscTypesize))
    return InvalidField("typesize", "must be 1.." + std::to_string(kMaxBloscTypesize) +
                                        " (bytes per shuffled element), not " + std::to_string(*blosc.typesize));
  if (blosc.blocksize && *blosc.blocksize < 0)
    return InvalidField("blocksize", "must be >= 0 (bytes per blosc block; 0: blosc chooses), not " +
                                         std::to_string(*blosc.blocksize));
  return out;
}

Status CheckBloscSettings(std::string_view codec, const BloscSpecOptions& blosc) {
  if (codec == "blosc") return CanonicalBloscSettings(blosc).status();
  if (!blosc.given()) return Status::Ok();
  const char* field = !blosc.cname.empty()   ? "cname"
                      : !blosc.shuffle.empty() ? "shuffle"
                      : blosc.typesize         ? "typesize"
                                               : "blocksize";
  std::string why = "applies to codec blosc, not " + std::string(codec);
  if (codec == "blosc-lz4" || codec == "blosc-zstd")
    why += " (blosc with cname " + std::string(codec.substr(6)) + " and the byte shuffle; give codec blosc to choose)";
  return InvalidField(field, why);
}

Result<nlohmann::json> BloscCodecJson(const BloscSpecOptions& blosc, std::optional<int> clevel, DataType dtype) {
  TESSERA_ASSIGN_OR_RETURN(BloscSpecOptions s, CanonicalBloscSettings(blosc));
  const int level = clevel.value_or(kDefaultClevel);
  if (level < 0 || level > 9) return InvalidField("level", "blosc levels are 0..9, not " + std::to_string(level));
  return nlohmann::json{
      {"name", "blosc"},
      {"configuration",
       {{"typesize", s.typesize.value_or(static_cast<int>(ItemSize(dtype)))},
        {"cname", s.cname.empty() ? std::string(kDefaultCname) : s.cname},
        {"clevel", level},
        {"shuffle", s.shuffle.empty() ? std::string(DefaultShuffle(dtype)) : s.shuffle},
        {"blocksize", s.blocksize.value_or(0)}}}};
}

std::optional<SpelledBlosc> SpellBlosc(const nlohmann::json& configuration, DataType dtype) {
  if (!configuration.is_object()) return std::nullopt;
  auto string_of = [&](const char* key) -> std::optional<std::string> {
    auto it = configuration.find(key);
    if (it == configuration.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  auto int_of = [&](const char* key) -> std::optional<int> {
    auto it = configuration.find(key);
    if (it == configuration.end() || !it->is_number_integer()) return std::nullopt;
    const int64_t v = it->get<int64_t>();
    if (v < 0 || v > INT32_MAX) return std::nullopt;
    return static_cast<int>(v);
  };
  const std::optional<std::string> cname = string_of("cname"), shuffle = string_of("shuffle");
  if (!cname || !shuffle) return std::nullopt;
  SpelledBlosc out;
  out.clevel = int_of("clevel");
  const int item_bytes = static_cast<int>(ItemSize(dtype));
  const int typesize = int_of("typesize").value_or(item_bytes);
  const int blocksize = int_of("blocksize").value_or(0);
  if ((*cname == "lz4" || *cname == "zstd") && *shuffle == PresetShuffle(dtype) && typesize == item_bytes &&
      blocksize == 0) {
    out.codec = *cname == "lz4" ? Codec::kBloscLz4 : Codec::kBloscZstd;
    return out;
  }
  out.blosc.cname = *cname;
  out.blosc.shuffle = *shuffle;
  if (typesize != item_bytes) out.blosc.typesize = typesize;
  if (blocksize != 0) out.blosc.blocksize = blocksize;
  // Only what codec blosc writes, in its own spelling.
  Result<BloscSpecOptions> canonical = CanonicalBloscSettings(out.blosc);
  if (!canonical.ok() || canonical->shuffle != *shuffle) return std::nullopt;
  return out;
}

}  // namespace tessera::zarr
