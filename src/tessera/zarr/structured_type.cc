#include "tessera/zarr/structured_type.h"

#include <cctype>
#include <string>

namespace tessera::zarr {
namespace {

struct Field {
  std::string numpy;  // numpy's type string: "<i4", ">f8", "|S3"
  size_t bytes = 0;
  bool follows_endian = false;  // a v3 multi-byte name: stored in the bytes codec's byte order
};

// A numpy type string "<i4" / ">f8" / "|b1" / "|S3" / "<U2" / "|V5"; nullopt otherwise.
std::optional<Field> NumpyField(const std::string& t) {
  if (t.size() < 3 || (t[0] != '<' && t[0] != '>' && t[0] != '|')) return std::nullopt;
  size_t count = 0;
  for (size_t i = 2; i < t.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(t[i])) || i > 9) return std::nullopt;
    count = count * 10 + static_cast<size_t>(t[i] - '0');
  }
  const char kind = t[1];
  const bool sized = (kind == 'b' && count == 1) || ((kind == 'i' || kind == 'u') && (count == 1 || count == 2 || count == 4 || count == 8)) ||
                     (kind == 'f' && (count == 2 || count == 4 || count == 8)) || (kind == 'c' && (count == 8 || count == 16)) ||
                     ((kind == 'S' || kind == 'V') && count >= 1) || (kind == 'U' && count >= 1);
  if (!sized) return std::nullopt;
  return Field{t, kind == 'U' ? 4 * count : count, false};
}

// A v3 field type: a scalar name ("int32"), a fixed-size bytes or string object, or a numpy type string.
std::optional<Field> ParseField(const nlohmann::json& type) {
  if (type.is_object()) {
    Result<std::optional<FixedBytesType>> fixed = FixedBytesType::FromJson(type);
    if (!fixed.ok() || !*fixed) return std::nullopt;
    return Field{(*fixed)->Numpy(), (*fixed)->item_bytes, (*fixed)->kind == 'U'};
  }
  if (!type.is_string()) return std::nullopt;
  const std::string name = type.get<std::string>();
  if (std::optional<Field> f = NumpyField(name)) return f;
  Result<DataType> dtype = ParseDataType(name);
  if (!dtype.ok()) return std::nullopt;
  const size_t size = ItemSize(*dtype);
  char kind = 'u';
  if (*dtype == DataType::kBool) kind = 'b';
  else if (name.rfind("int", 0) == 0) kind = 'i';
  else if (name.rfind("float", 0) == 0) kind = 'f';
  else if (name.rfind("complex", 0) == 0) kind = 'c';
  return Field{std::string(size == 1 ? "|" : "<") + kind + std::to_string(size), size, size > 1};
}

}  // namespace

Result<std::optional<FixedBytesType>> StructuredTypeFromJson(const nlohmann::json& j) {
  if (!j.is_object() || j.value("name", nlohmann::json()) != "structured") return std::optional<FixedBytesType>();
  const nlohmann::json config = j.value("configuration", nlohmann::json::object());
  if (!config.is_object() || !config.contains("fields") || !config["fields"].is_array() || config["fields"].empty())
    return InvalidArgument("zarr.json: data_type structured needs configuration.fields, a non-empty list, got " + j.dump());
  FixedBytesType t;
  t.kind = 'V';
  t.item_bytes = 0;
  t.structure_data_type = j;
  nlohmann::json names = nlohmann::json::array(), formats = nlohmann::json::array(), offsets = nlohmann::json::array();
  std::string description = "structured {";
  bool endian_fields = false;
  for (const auto& entry : config["fields"]) {
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string())
      return Unsupported("zarr.json: structured field " + entry.dump() +
                         " (tessera reads [name, type] fields of scalar, bytes and string types; not subarrays)");
    std::optional<Field> field = ParseField(entry[1]);
    if (!field)
      return Unsupported("zarr.json: structured field \"" + entry[0].get<std::string>() + "\" of type " + entry[1].dump() +
                         " (tessera reads bool, integer, float, complex, bytes and string fields; not nested ones)");
    if (t.item_bytes > 0) description += ", ";
    description += entry[0].get<std::string>() + ": " + field->numpy;
    names.push_back(entry[0]);
    formats.push_back(field->numpy);
    offsets.push_back(t.item_bytes);
    t.item_bytes += field->bytes;
    endian_fields |= field->follows_endian;
  }
  t.structure = {{"names", names}, {"formats", formats}, {"offsets", offsets}, {"itemsize", t.item_bytes}};
  t.structure_description = description + "}";
  t.endian_fields = endian_fields;
  return std::optional<FixedBytesType>(t);
}

}  // namespace tessera::zarr
