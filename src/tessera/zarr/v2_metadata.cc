#include "tessera/zarr/v2_metadata.h"

#include <algorithm>
#include <cctype>

#include "tessera/core/json_guard.h"
#include "tessera/zarr/fixed_bytes_type.h"
#include "tessera/zarr/structured_type.h"
#include "tessera/zarr/time_data_type.h"

namespace tessera::zarr {
namespace {

struct V2Type {
  nlohmann::json data_type;  // the v3 name (or object: numpy.datetime64 ...)
  std::string endian;     // "little", "big", or "" (one byte)
  int item_bytes = 0;
};

Result<V2Type> ParseV2Dtype(const nlohmann::json& dtype, const std::string& where) {
  if (dtype.is_array()) {
    // A structured dtype: the v3 structured type with numpy's type strings as the field types
    // (their byte order kept); its bytes are the records as stored.
    nlohmann::json data_type = {{"name", "structured"}, {"configuration", {{"fields", dtype}}}};
    Result<std::optional<FixedBytesType>> t = StructuredTypeFromJson(data_type);
    if (!t.ok()) return Unsupported(where + ": dtype " + dtype.dump() + ": " + t.status().message());
    return V2Type{data_type, "", static_cast<int>((*t)->item_bytes)};
  }
  if (!dtype.is_string())
    return Unsupported(where + ": dtype " + dtype.dump() + " (tessera reads type strings and structured lists)");
  const std::string t = dtype.get<std::string>();
  auto bad = [&] { return Unsupported(where + ": dtype \"" + t + "\" (tessera reads bool, int, uint, float, complex, bfloat16, datetime64, timedelta64, S, U and V)"); };
  // tensorstore's name for bfloat16 (no byte-order prefix: it stores the bits little-endian); read
  // as the v3 data type of the same name.
  if (t == "bfloat16") return V2Type{"bfloat16", "little", 2};
  if (t.size() < 3 || (t[0] != '<' && t[0] != '>' && t[0] != '|')) return bad();
  TESSERA_ASSIGN_OR_RETURN(std::optional<TimeDataType> time, TimeDataType::FromNumpy(std::string_view(t).substr(1)));
  if (time) return V2Type{time->ToJson(), t[0] == '>' ? "big" : "little", 8};
  if (std::optional<FixedBytesType> fixed = FixedBytesType::FromNumpy(std::string_view(t).substr(1))) {
    // Only UTF-32's code units have a byte order.
    const std::string endian = fixed->kind != 'U' ? "" : t[0] == '>' ? "big" : "little";
    return V2Type{fixed->ToJson(), endian, static_cast<int>(fixed->item_bytes)};
  }
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
  if (out.data_type.is_null()) return bad();
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

// A numcodecs codec object ({"id": ..., ...}) without its "id": the v3 configuration.
nlohmann::json WithoutId(const nlohmann::json& c) {
  nlohmann::json config = c;
  config.erase("id");
  return config;
}

// numcodecs ids whose v3 equivalent is `numcodecs.<id>` with the same configuration (less "id"),
// all bytes -> bytes.
bool IsPlainNumcodecsBytesCodec(const std::string& id) {
  for (const char* known : {"bz2", "lzma", "crc32", "adler32", "crc32c", "fletcher32", "shuffle"})
    if (id == known) return true;
  return false;
}

// One v2 compressor or bytes-level filter as a v3 bytes -> bytes codec. `role` ("compressor",
// "filter") names it in errors.
Result<nlohmann::json> BytesCodecFromV2(const nlohmann::json& c, const V2Type& type, const std::string& role,
                                        const std::string& where) {
  if (!c.is_object() || !c.contains("id") || !c["id"].is_string())
    return InvalidArgument(where + ": a " + role + " must be an object with an \"id\", not " + c.dump());
  const std::string id = c["id"].get<std::string>();
  auto integer = [&](const char* key, int fallback) {
    return c.contains(key) && c[key].is_number_integer() ? c[key].get<int>() : fallback;
  };
  if (id == "blosc") {
    const int shuffle = integer("shuffle", 1);  // numcodecs: 0 none, 1 byte, 2 bit, -1 auto
    const char* names[] = {"noshuffle", "shuffle", "bitshuffle"};
    const std::string shuffle_name = shuffle >= 0 && shuffle <= 2 ? names[shuffle] : (type.item_bytes == 1 ? "bitshuffle" : "shuffle");
    TESSERA_ASSIGN_OR_RETURN(std::string cname, OptionalString(c, "cname", "lz4", false, where + ": " + role));
    return nlohmann::json{{"name", "blosc"},
                          {"configuration", {{"cname", cname},
                                             {"clevel", integer("clevel", 5)},
                                             {"shuffle", shuffle_name},
                                             {"typesize", type.item_bytes},
                                             {"blocksize", integer("blocksize", 0)}}}};
  }
  if (id == "zstd") return nlohmann::json{{"name", "zstd"}, {"configuration", {{"level", integer("level", 0)}, {"checksum", false}}}};
  if (id == "gzip") return nlohmann::json{{"name", "gzip"}, {"configuration", {{"level", std::clamp(integer("level", 1), 0, 9)}}}};
  if (id == "zlib") return nlohmann::json{{"name", "numcodecs.zlib"}, {"configuration", {{"level", std::clamp(integer("level", 1), -1, 9)}}}};
  if (id == "lz4") return nlohmann::json{{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", integer("acceleration", 1)}}}};
  if (IsPlainNumcodecsBytesCodec(id)) return nlohmann::json{{"name", "numcodecs." + id}, {"configuration", WithoutId(c)}};
  return Unsupported(where + ": " + role + " \"" + id +
                     "\" (numcodecs) is not supported; tessera reads the compressors blosc, zstd, gzip, zlib, lz4, bz2 "
                     "and lzma and the filters delta, quantize, fixedscaleoffset, bitround, shuffle, crc32, adler32, crc32c and "
                     "fletcher32");
}

// The array -> array part of the v2 filters (delta, quantize, fixedscaleoffset, bitround: before
// the bytes codec), the bytes -> bytes
// part (after it) and the byte order the bytes codec writes: the array's, or the last delta's
// astype. numcodecs applies filters in order on encoding, so an array filter after a bytes filter
// (which would reinterpret shuffled bytes as numbers) has no v3 equivalent and is refused.
struct V2Filters {
  nlohmann::json array_codecs = nlohmann::json::array();
  nlohmann::json bytes_codecs = nlohmann::json::array();
  std::string endian;
};

Result<V2Filters> FiltersFromV2(const nlohmann::json& filters, const nlohmann::json& dtype, const V2Type& type,
                                const std::string& where) {
  V2Filters out;
  out.endian = type.endian;
  if (filters.is_null()) return out;
  if (!filters.is_array()) return InvalidArgument(where + ": \"filters\" must be null or a list, not " + filters.dump());
  for (const nlohmann::json& f : filters) {
    const std::string id = f.is_object() && f.contains("id") && f["id"].is_string() ? f["id"].get<std::string>() : "";
    if (id != "delta" && id != "quantize" && id != "fixedscaleoffset" && id != "bitround") {
      TESSERA_ASSIGN_OR_RETURN(nlohmann::json codec, BytesCodecFromV2(f, type, "filter", where));
      out.bytes_codecs.push_back(std::move(codec));
      continue;
    }
    if (!out.bytes_codecs.empty())
      return Unsupported(where + ": filter " + id + " after " + out.bytes_codecs.back()["name"].get<std::string>() +
                         " (an array filter after a bytes filter) is not supported");
    if (id == "bitround") {
      // Rounds the array's own values in place: no type of its own.
      out.array_codecs.push_back({{"name", "numcodecs.bitround"}, {"configuration", WithoutId(f)}});
      continue;
    }
    // delta, quantize and fixedscaleoffset: their dtype must be the array's own, byte order included (numcodecs views
    // the decoded bytes in it and the array then reinterprets them).
    if (!f.contains("dtype") || !f["dtype"].is_string() || !dtype.is_string())
      return InvalidArgument(where + ": filter " + id + " needs a \"dtype\" string, got " + f.dump());
    const std::string filter_dtype = f["dtype"].get<std::string>();
    TESSERA_ASSIGN_OR_RETURN(V2Type filter_type, ParseV2Dtype(f["dtype"], where + ": filter " + id + " \"dtype\""));
    if (filter_type.data_type != type.data_type || filter_type.endian != type.endian)
      return Unsupported(where + ": filter " + id + "'s dtype \"" + filter_dtype + "\" differs from the array's " + dtype.dump());
    std::string astype = filter_dtype;
    if (f.contains("astype") && !f["astype"].is_null()) {
      if (!f["astype"].is_string()) return InvalidArgument(where + ": filter " + id + "'s \"astype\" must be a string, got " + f["astype"].dump());
      astype = f["astype"].get<std::string>();
    }
    TESSERA_ASSIGN_OR_RETURN(V2Type astype_type, ParseV2Dtype(nlohmann::json(astype), where + ": filter " + id + " \"astype\""));
    out.endian = astype_type.endian;
    // The v3 codec takes its types' values; the byte orders went into the bytes codec above.
    nlohmann::json config = WithoutId(f);
    config["astype"] = astype;
    out.array_codecs.push_back({{"name", "numcodecs." + id}, {"configuration", config}});
  }
  return out;
}

Result<nlohmann::json> TranslateV2Document(const nlohmann::json& a, const nlohmann::json& zattrs, const std::string& where) {
  if (!a.is_object()) return InvalidArgument(where + ": not a JSON object");
  if (!a.contains("zarr_format") || a["zarr_format"] != 2) return InvalidArgument(where + ": zarr_format is not 2");
  for (const char* key : {"shape", "chunks", "dtype"})
    if (!a.contains(key)) return InvalidArgument(where + ": missing \"" + std::string(key) + "\"");
  if (!a["shape"].is_array() || !a["chunks"].is_array() || a["shape"].size() != a["chunks"].size())
    return InvalidArgument(where + ": shape and chunks must be lists of the same length");
  TESSERA_ASSIGN_OR_RETURN(V2Type type, ParseV2Dtype(a["dtype"], where));
  TESSERA_ASSIGN_OR_RETURN(V2Filters filters, FiltersFromV2(a.value("filters", nlohmann::json(nullptr)), a["dtype"], type, where));
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
  for (auto& c : filters.array_codecs) codecs.push_back(std::move(c));
  nlohmann::json bytes = {{"name", "bytes"}};
  if (!filters.endian.empty()) bytes["configuration"] = {{"endian", filters.endian}};
  codecs.push_back(bytes);
  for (auto& c : filters.bytes_codecs) codecs.push_back(std::move(c));
  const nlohmann::json compressor = a.value("compressor", nlohmann::json(nullptr));
  if (!compressor.is_null()) {
    TESSERA_ASSIGN_OR_RETURN(nlohmann::json codec, BytesCodecFromV2(compressor, type, "compressor", where));
    codecs.push_back(std::move(codec));
  }
  nlohmann::json fill = a.value("fill_value", nlohmann::json(nullptr));
  // A null fill reads as zarr-python reads it: false, zero, or NaT for datetime64 / timedelta64
  // (zarr-python fills a missing chunk with numpy's conversion of None, which for them is NaT).
  const std::string type_name = type.data_type.is_string() ? type.data_type.get<std::string>()
                                                             : type.data_type.value("name", std::string());
  if (fill.is_null()) {
    if (type_name == "bool") {
      fill = false;
    } else if (type_name.rfind("numpy.", 0) == 0) {
      fill = "NaT";
    } else if (!type.data_type.is_object()) {
      fill = 0;
    }  // fixed-size bytes and strings: null is all zeros (ParseFixedBytesFill)
  }
  if (type.data_type.is_string() && type.data_type.get<std::string>().rfind("complex", 0) == 0 && !fill.is_array()) fill = nlohmann::json::array({fill, 0});
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
