#include "tessera/zarr/v2_metadata.h"

#include <algorithm>
#include <cctype>

#include "tessera/core/json_guard.h"

namespace tessera::zarr {
namespace {

struct V2Type {
  std::string data_type;  // the v3 name
  std::string endian;     // "little", "big", or "" (one byte)
  int item_bytes = 0;
};

Result<V2Type> ParseV2Dtype(const nlohmann::json& dtype, const std::string& where) {
  if (!dtype.is_string())
    return Unsupported(where + ": dtype " + dtype.dump() + " (structured dtypes are not read)");
  const std::string t = dtype.get<std::string>();
  auto bad = [&] { return Unsupported(where + ": dtype \"" + t + "\" (tessera reads bool, int, uint, float and complex)"); };
  if (t.size() < 3 || (t[0] != '<' && t[0] != '>' && t[0] != '|')) return bad();
  const char kind = t[1];
  int size = 0;
  for (size_t i = 2; i < t.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(t[i]))) return bad();
    size = size * 10 + (t[i] - '0');
    if (size > 64) return bad();
  }
  V2Type out;
  out.item_bytes = size;
  switch (kind) {
    case 'b': if (size == 1) out.data_type = "bool"; break;
    case 'i': if (size == 1 || size == 2 || size == 4 || size == 8) out.data_type = "int" + std::to_string(8 * size); break;
    case 'u': if (size == 1 || size == 2 || size == 4 || size == 8) out.data_type = "uint" + std::to_string(8 * size); break;
    case 'f': if (size == 2 || size == 4 || size == 8) out.data_type = "float" + std::to_string(8 * size); break;
    case 'c': if (size == 8 || size == 16) out.data_type = "complex" + std::to_string(8 * size); break;
    default: break;
  }
  if (out.data_type.empty()) return bad();
  out.endian = size == 1 ? "" : (t[0] == '>' ? "big" : "little");
  return out;
}

// A string member that may be absent: its value, `fallback` when absent (or null where `null_is_absent`).
Result<std::string> OptionalString(const nlohmann::json& obj, const char* key, const std::string& fallback,
                                   bool null_is_absent, const std::string& where) {
  if (!obj.contains(key) || (null_is_absent && obj[key].is_null())) return fallback;
  if (!obj[key].is_string()) return InvalidArgument(where + ": \"" + key + "\" must be a string, not " + obj[key].dump());
  return obj[key].get<std::string>();
}

// The v2 compressor as v3 bytes -> bytes codecs (none for null).
Result<nlohmann::json> CompressorCodecs(const nlohmann::json& c, const V2Type& type, const std::string& where) {
  nlohmann::json codecs = nlohmann::json::array();
  if (c.is_null()) return codecs;
  if (!c.is_object() || !c.contains("id") || !c["id"].is_string())
    return InvalidArgument(where + ": compressor must be null or an object with an \"id\", not " + c.dump());
  const std::string id = c["id"].get<std::string>();
  auto integer = [&](const char* key, int fallback) {
    return c.contains(key) && c[key].is_number_integer() ? c[key].get<int>() : fallback;
  };
  if (id == "blosc") {
    const int shuffle = integer("shuffle", 1);  // numcodecs: 0 none, 1 byte, 2 bit, -1 auto
    const char* names[] = {"noshuffle", "shuffle", "bitshuffle"};
    const std::string shuffle_name = shuffle >= 0 && shuffle <= 2 ? names[shuffle] : (type.item_bytes == 1 ? "bitshuffle" : "shuffle");
    TESSERA_ASSIGN_OR_RETURN(std::string cname, OptionalString(c, "cname", "lz4", false, where + ": compressor"));
    codecs.push_back({{"name", "blosc"},
                      {"configuration", {{"cname", cname},
                                         {"clevel", integer("clevel", 5)},
                                         {"shuffle", shuffle_name},
                                         {"typesize", type.item_bytes},
                                         {"blocksize", integer("blocksize", 0)}}}});
  } else if (id == "zstd") {
    codecs.push_back({{"name", "zstd"}, {"configuration", {{"level", integer("level", 0)}, {"checksum", false}}}});
  } else if (id == "gzip" || id == "zlib") {
    // The gzip codec decodes zlib streams as well (numcodecs' Zlib writes those).
    codecs.push_back({{"name", "gzip"}, {"configuration", {{"level", std::clamp(integer("level", 1), 0, 9)}}}});
  } else if (id == "lz4") {
    codecs.push_back({{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", integer("acceleration", 1)}}}});
  } else {
    return Unsupported(where + ": compressor \"" + id +
                       "\" (numcodecs) is not supported; tessera reads blosc, zstd, gzip, zlib, lz4 and none");
  }
  return codecs;
}

Result<nlohmann::json> TranslateV2Document(const nlohmann::json& a, const nlohmann::json& zattrs, const std::string& where) {
  if (!a.is_object()) return InvalidArgument(where + ": not a JSON object");
  if (!a.contains("zarr_format") || a["zarr_format"] != 2) return InvalidArgument(where + ": zarr_format is not 2");
  for (const char* key : {"shape", "chunks", "dtype"})
    if (!a.contains(key)) return InvalidArgument(where + ": missing \"" + std::string(key) + "\"");
  if (!a["shape"].is_array() || !a["chunks"].is_array() || a["shape"].size() != a["chunks"].size())
    return InvalidArgument(where + ": shape and chunks must be lists of the same length");
  TESSERA_ASSIGN_OR_RETURN(V2Type type, ParseV2Dtype(a["dtype"], where));
  if (a.contains("filters") && !a["filters"].is_null() && !(a["filters"].is_array() && a["filters"].empty())) {
    std::string ids;
    if (a["filters"].is_array())
      for (const auto& f : a["filters"]) ids += (ids.empty() ? "" : ", ") + (f.is_object() && f.contains("id") && f["id"].is_string() ? f["id"].get<std::string>() : f.dump());
    return Unsupported(where + ": filters (" + ids + ") are not supported");
  }
  TESSERA_ASSIGN_OR_RETURN(const std::string order, OptionalString(a, "order", "C", false, where));
  if (order != "C" && order != "F") return InvalidArgument(where + ": order must be \"C\" or \"F\", not \"" + order + "\"");
  TESSERA_ASSIGN_OR_RETURN(const std::string separator, OptionalString(a, "dimension_separator", ".", true, where));
  nlohmann::json codecs = nlohmann::json::array();
  const size_t rank = a["shape"].size();
  if (order == "F" && rank > 1) {
    std::vector<int> reversed;
    for (size_t d = rank; d-- > 0;) reversed.push_back(static_cast<int>(d));
    codecs.push_back({{"name", "transpose"}, {"configuration", {{"order", reversed}}}});
  }
  nlohmann::json bytes = {{"name", "bytes"}};
  if (!type.endian.empty()) bytes["configuration"] = {{"endian", type.endian}};
  codecs.push_back(bytes);
  TESSERA_ASSIGN_OR_RETURN(nlohmann::json compressor, CompressorCodecs(a.value("compressor", nlohmann::json(nullptr)), type, where));
  for (auto& c : compressor) codecs.push_back(std::move(c));
  nlohmann::json fill = a.value("fill_value", nlohmann::json(nullptr));
  if (fill.is_null()) fill = type.data_type == "bool" ? nlohmann::json(false) : nlohmann::json(0);
  if (type.data_type.rfind("complex", 0) == 0 && !fill.is_array()) fill = nlohmann::json::array({fill, 0});
  nlohmann::json doc = {{"zarr_format", 3},
                        {"node_type", "array"},
                        {"shape", a["shape"]},
                        {"data_type", type.data_type},
                        {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", a["chunks"]}}}}},
                        {"chunk_key_encoding", {{"name", "v2"}, {"configuration", {{"separator", separator}}}}},
                        {"fill_value", fill},
                        {"codecs", codecs}};
  if (zattrs.is_object() && !zattrs.empty()) doc["attributes"] = zattrs;
  return doc;
}

}  // namespace

Result<nlohmann::json> V3DocumentFromV2(const nlohmann::json& a, const nlohmann::json& zattrs, const std::string& where) {
  return GuardJson(where, [&] { return TranslateV2Document(a, zattrs, where); });
}

}  // namespace tessera::zarr
