#include "tessera/zarr/metadata.h"

#include "tessera/zarr/bfloat16_fill.h"
#include "tessera/zarr/structured_type.h"

#include <span>
#include "tessera/core/json_guard.h"
#include "tessera/core/limits.h"

namespace tessera::zarr {
namespace {

Result<std::vector<int64_t>> ParseShape(const nlohmann::json& j, const char* field, bool allow_zero) {
  if (!j.is_array()) return InvalidArgument(std::string(field) + " must be an array of integers");
  std::vector<int64_t> out;
  for (const auto& e : j) {
    if (!e.is_number_integer() && !e.is_number_unsigned())
      return InvalidArgument(std::string(field) + " must be an array of integers, got " + j.dump());
    int64_t v = e.get<int64_t>();
    if (v < 0 || (!allow_zero && v == 0))
      return InvalidArgument(std::string(field) + " has an invalid extent " + std::to_string(v));
    out.push_back(v);
  }
  return out;
}

// A fixed-size bytes or string array read as its code units (ArrayMetadata::fixed).
Status AddUnitDimension(const nlohmann::json& j, ArrayMetadata* m) {
  const int64_t units = m->fixed->units();
  const size_t unit_bytes = ItemSize(m->dtype);
  m->stored_codecs = m->codecs;
  if (m->fixed->endian_fields && m->codecs.dump().find("\"big\"") != std::string::npos)
    return Unsupported("zarr.json: a " + m->fixed->Description() +
                       " array with a big-endian bytes codec (tessera reads structured types stored little-endian)");
  m->stored_fill_value = j["fill_value"];
  TESSERA_ASSIGN_OR_RETURN(m->codecs, CodecsWithUnitDimension(m->codecs, m->shape.size(), units));
  m->shape.push_back(units);
  m->chunk_shape.push_back(units);
  m->chunk_key_encoding.unit_dims = 1;
  // The unit fill: the element's first unit where every unit repeats it, else zeros.
  m->fill_value.bytes.assign(m->element_fill.begin(), m->element_fill.begin() + unit_bytes);
  bool uniform = true;
  for (size_t at = 0; at < m->element_fill.size(); ++at) uniform &= m->element_fill[at] == m->fill_value.bytes[at % unit_bytes];
  if (!uniform) {
    m->fill_value.bytes.assign(unit_bytes, 0);
    if (m->stored_codecs.dump().find("\"sharding_indexed\"") != std::string::npos)
      return Unsupported("zarr.json: a sharded " + m->fixed->Description() + " array with fill_value " +
                         m->stored_fill_value.dump() +
                         " (tessera reads sharded fixed-size bytes and strings whose fill repeats one code unit, "
                         "such as the empty string)");
  }
  return Status::Ok();
}

}  // namespace

std::string ChunkKeyEncoding::Key(const std::vector<int64_t>& all_coords) const {
  const std::span<const int64_t> coords = std::span<const int64_t>(all_coords).first(all_coords.size() - unit_dims);
  std::string key;
  if (kind == Kind::kDefault) {
    key = "c";
    for (int64_t c : coords) {
      key += separator;
      key += std::to_string(c);
    }
    return key;
  }
  if (coords.empty()) return "0";
  for (size_t i = 0; i < coords.size(); ++i) {
    if (i) key += separator;
    key += std::to_string(coords[i]);
  }
  return key;
}

nlohmann::json ChunkKeyEncoding::ToJson() const {
  return {{"name", kind == Kind::kDefault ? "default" : "v2"},
          {"configuration", {{"separator", std::string(1, separator)}}}};
}

Result<ChunkKeyEncoding> ChunkKeyEncoding::FromJson(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string())
    return InvalidArgument("chunk_key_encoding must be an object with a name");
  ChunkKeyEncoding e;
  std::string name = j["name"];
  if (name == "default") {
    e.kind = Kind::kDefault;
    e.separator = '/';
  } else if (name == "v2") {
    e.kind = Kind::kV2;
    e.separator = '.';
  } else {
    return Unsupported("unknown chunk_key_encoding \"" + name + "\"");
  }
  if (j.contains("configuration") && j["configuration"].contains("separator")) {
    const auto& s = j["configuration"]["separator"];
    if (!s.is_string() || (s != "/" && s != "."))
      return InvalidArgument("chunk_key_encoding separator must be \"/\" or \".\"");
    e.separator = s.get<std::string>()[0];
  }
  return e;
}

nlohmann::json ArrayMetadata::ToJson() const {
  nlohmann::json j;
  j["zarr_format"] = 3;
  j["node_type"] = "array";
  j["shape"] = shape;
  j["data_type"] = time ? time->ToJson() : bfloat16 ? nlohmann::json("bfloat16") : nlohmann::json(DataTypeName(dtype));
  j["chunk_grid"] = {{"name", "regular"}, {"configuration", {{"chunk_shape", chunk_shape}}}};
  j["chunk_key_encoding"] = chunk_key_encoding.ToJson();
  j["fill_value"] = time       ? TimeFillValueToJson(fill_value)
                    : bfloat16 ? BFloat16FillValueToJson(fill_value)
                               : FillValueToJson(dtype, fill_value);
  j["codecs"] = codecs;
  if (fixed) {  // the document's form, without the code-unit dimension
    j["shape"] = std::vector<int64_t>(shape.begin(), shape.end() - 1);
    j["chunk_grid"]["configuration"]["chunk_shape"] = std::vector<int64_t>(chunk_shape.begin(), chunk_shape.end() - 1);
    j["data_type"] = fixed->ToJson();
    j["fill_value"] = stored_fill_value;
    j["codecs"] = stored_codecs;
  }
  j["attributes"] = attributes;
  if (dimension_names) j["dimension_names"] = *dimension_names;
  return j;
}

namespace {

Result<ArrayMetadata> ParseArrayMetadata(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("zarr.json is not a JSON object");
  if (!j.contains("zarr_format") || j["zarr_format"] != 3)
    return Unsupported("zarr.json: zarr_format must be 3");
  if (!j.contains("node_type") || j["node_type"] != "array")
    return InvalidArgument("zarr.json: node_type is not \"array\"");
  static const char* kKnown[] = {"zarr_format", "node_type", "shape", "data_type", "chunk_grid",
                                 "chunk_key_encoding", "fill_value", "codecs", "attributes",
                                 "storage_transformers", "dimension_names"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (const char* k : kKnown) known |= it.key() == k;
    if (known) continue;
    const auto& v = it.value();
    bool optional_ext = v.is_object() && v.contains("must_understand") && v["must_understand"] == false;
    if (!optional_ext) return Unsupported("zarr.json: unknown field \"" + it.key() + "\" that must be understood");
  }
  for (const char* required : {"shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs"})
    if (!j.contains(required)) return InvalidArgument(std::string("zarr.json: missing \"") + required + "\"");

  ArrayMetadata m;
  TESSERA_ASSIGN_OR_RETURN(m.shape, ParseShape(j["shape"], "shape", /*allow_zero=*/true));
  if (m.rank() > kMaxRank)
    return Unsupported("zarr.json: rank " + std::to_string(m.rank()) + " exceeds " + std::to_string(kMaxRank));
  TESSERA_ASSIGN_OR_RETURN(m.time, TimeDataType::FromJson(j["data_type"]));
  TESSERA_ASSIGN_OR_RETURN(m.fixed, FixedBytesType::FromJson(j["data_type"]));
  if (!m.fixed) {
    TESSERA_ASSIGN_OR_RETURN(m.fixed, StructuredTypeFromJson(j["data_type"]));
  }
  if (!m.time && !m.fixed && !j["data_type"].is_string())
    return Unsupported("zarr.json: data_type " + j["data_type"].dump() + " is not supported");
  m.bfloat16 = j["data_type"] == "bfloat16";
  if (m.time) {
    m.dtype = DataType::kInt64;
  } else if (m.fixed) {
    m.dtype = m.fixed->unit();
  } else if (m.bfloat16) {
    m.dtype = DataType::kUInt16;
  } else {
    TESSERA_ASSIGN_OR_RETURN(m.dtype, ParseDataType(j["data_type"].get<std::string>()));
  }
  const auto& grid = j["chunk_grid"];
  if (!grid.is_object() || !grid.contains("name") || grid["name"] != "regular")
    return Unsupported("zarr.json: only the \"regular\" chunk_grid is supported");
  if (!grid.contains("configuration") || !grid["configuration"].contains("chunk_shape"))
    return InvalidArgument("zarr.json: chunk_grid has no configuration.chunk_shape");
  TESSERA_ASSIGN_OR_RETURN(m.chunk_shape, ParseShape(grid["configuration"]["chunk_shape"], "chunk_shape", false));
  if (m.chunk_shape.size() != m.shape.size())
    return InvalidArgument("zarr.json: chunk_shape rank does not match shape rank");
  TESSERA_ASSIGN_OR_RETURN(m.chunk_key_encoding, ChunkKeyEncoding::FromJson(j["chunk_key_encoding"]));
  if (m.fixed) {
    TESSERA_ASSIGN_OR_RETURN(m.element_fill, ParseFixedBytesFill(*m.fixed, j["fill_value"]));
  } else {
    TESSERA_ASSIGN_OR_RETURN(m.fill_value, m.time       ? ParseTimeFillValue(j["fill_value"])
                                           : m.bfloat16 ? ParseBFloat16FillValue(j["fill_value"])
                                                        : ParseFillValue(m.dtype, j["fill_value"]));
  }
  if (!j["codecs"].is_array() || j["codecs"].empty())
    return InvalidArgument("zarr.json: codecs must be a non-empty array");
  m.codecs = j["codecs"];
  if (j.contains("attributes")) {
    if (!j["attributes"].is_object()) return InvalidArgument("zarr.json: attributes must be an object");
    m.attributes = j["attributes"];
  }
  if (j.contains("storage_transformers") && !(j["storage_transformers"].is_array() && j["storage_transformers"].empty()))
    return Unsupported("zarr.json: storage_transformers are not supported");
  if (j.contains("dimension_names") && !j["dimension_names"].is_null()) {
    const auto& dn = j["dimension_names"];
    if (!dn.is_array() || dn.size() != m.shape.size())
      return InvalidArgument("zarr.json: dimension_names must have one entry per dimension");
    for (const auto& e : dn)
      if (!e.is_null() && !e.is_string()) return InvalidArgument("zarr.json: dimension_names entries must be strings or null");
    m.dimension_names = dn;
  }
  if (m.fixed) TESSERA_RETURN_IF_ERROR(AddUnitDimension(j, &m));
  return m;
}

}  // namespace

Result<ArrayMetadata> ArrayMetadata::FromJson(const nlohmann::json& j) {
  return GuardJson("zarr.json", [&] { return ParseArrayMetadata(j); });
}

Result<nlohmann::json> ParseJsonDocument(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return CorruptData(where + ": malformed JSON at byte " + std::to_string(e.byte) + " of " +
                       std::to_string(text.size()) + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for any JSON number type
    return CorruptData(where + ": malformed JSON: " + e.what());
  }
}

nlohmann::json GroupMetadataJson(const nlohmann::json& attributes) {
  return {{"zarr_format", 3}, {"node_type", "group"}, {"attributes", attributes}};
}

}  // namespace tessera::zarr
