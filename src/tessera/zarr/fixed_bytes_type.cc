#include "tessera/zarr/fixed_bytes_type.h"

#include <cctype>

#include "tessera/zarr/base64_text.h"

namespace tessera::zarr {
namespace {

constexpr size_t kMaxItemBytes = size_t{1} << 24;

// The code points of UTF-8 `text`; nullopt when it is no UTF-8.
std::optional<std::u32string> DecodeUtf8(const std::string& text) {
  std::u32string out;
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    int extra = b < 0x80 ? 0 : (b >> 5) == 0x6 ? 1 : (b >> 4) == 0xe ? 2 : (b >> 3) == 0x1e ? 3 : -1;
    if (extra < 0 || i + extra >= text.size() + (extra == 0 ? 1 : 0)) return std::nullopt;
    char32_t c = extra == 0 ? b : (b & (0x3f >> extra));
    for (int k = 1; k <= extra; ++k) {
      const auto cont = static_cast<unsigned char>(text[i + k]);
      if ((cont >> 6) != 0x2) return std::nullopt;
      c = (c << 6) | (cont & 0x3f);
    }
    out.push_back(c);
    i += extra + 1;
  }
  return out;
}

}  // namespace

std::string FixedBytesType::Numpy() const {
  const size_t count = kind == 'U' ? item_bytes / 4 : item_bytes;
  return std::string(kind == 'U' ? "<" : "|") + kind + std::to_string(count);
}

std::string FixedBytesType::Description() const {
  if (!structure.is_null()) return structure_description;
  if (kind == 'U') return "UTF-32 string[" + std::to_string(item_bytes / 4) + "]";
  return std::string(kind == 'S' ? "bytes[" : "raw bytes[") + std::to_string(item_bytes) + "]";
}

nlohmann::json FixedBytesType::ToJson() const {
  if (!structure.is_null()) return structure_data_type;
  const char* name = kind == 'S' ? "null_terminated_bytes" : kind == 'U' ? "fixed_length_utf32" : "raw_bytes";
  return {{"name", name}, {"configuration", {{"length_bytes", item_bytes}}}};
}

Result<std::optional<FixedBytesType>> FixedBytesType::FromJson(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) return std::optional<FixedBytesType>();
  const std::string name = j["name"].get<std::string>();
  FixedBytesType t;
  // zarr-python's names, and the earlier spellings of the same layouts.
  if (name == "null_terminated_bytes" || name == "fixed_length_ascii") {
    t.kind = 'S';
  } else if (name == "fixed_length_utf32") {
    t.kind = 'U';
  } else if (name == "raw_bytes" || name == "fixed_length_bytes") {
    t.kind = 'V';
  } else {
    return std::optional<FixedBytesType>();
  }
  const nlohmann::json config = j.value("configuration", nlohmann::json::object());
  const nlohmann::json length = config.is_object() ? config.value("length_bytes", nlohmann::json()) : nlohmann::json();
  if (!length.is_number_integer() || length.get<int64_t>() < 1 || length.get<int64_t>() > int64_t{kMaxItemBytes} ||
      (t.kind == 'U' && length.get<int64_t>() % 4 != 0))
    return InvalidArgument("zarr.json: data_type " + name + " needs configuration.length_bytes, a positive integer" +
                           (t.kind == 'U' ? " divisible by 4" : "") + ", got " + j.dump());
  t.item_bytes = length.get<size_t>();
  return std::optional<FixedBytesType>(t);
}

std::optional<FixedBytesType> FixedBytesType::FromNumpy(std::string_view t) {
  if (t.size() < 2 || (t[0] != 'S' && t[0] != 'U' && t[0] != 'V') || t.size() > 9) return std::nullopt;
  size_t count = 0;
  for (char c : t.substr(1)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    count = count * 10 + static_cast<size_t>(c - '0');
  }
  FixedBytesType out;
  out.kind = t[0];
  out.item_bytes = t[0] == 'U' ? 4 * count : count;
  if (out.item_bytes < 1 || out.item_bytes > kMaxItemBytes) return std::nullopt;
  return out;
}

Result<Bytes> ParseFixedBytesFill(const FixedBytesType& type, const nlohmann::json& j) {
  Bytes out(type.item_bytes, 0);
  if (j.is_null() || (j.is_number_integer() && j.get<int64_t>() == 0)) return out;
  auto bad = [&] {
    return InvalidArgument("zarr.json: fill_value " + j.dump() + " for " + type.Description() + " (expected " +
                           (type.kind == 'U' ? "a string" : "base64 text") + " of at most " +
                           std::to_string(type.item_bytes) + " bytes)");
  };
  if (!j.is_string()) return bad();
  const std::string text = j.get<std::string>();
  if (type.kind == 'U') {
    std::optional<std::u32string> code_points = DecodeUtf8(text);
    if (!code_points || code_points->size() * 4 > type.item_bytes) return bad();
    for (size_t i = 0; i < code_points->size(); ++i)
      for (int b = 0; b < 4; ++b) out[4 * i + b] = static_cast<uint8_t>(((*code_points)[i] >> (8 * b)) & 0xff);
    return out;
  }
  std::optional<std::string> decoded = DecodeBase64(text);
  if (!decoded || decoded->size() > type.item_bytes) return bad();
  for (size_t i = 0; i < decoded->size(); ++i) out[i] = static_cast<uint8_t>((*decoded)[i]);
  return out;
}

Result<nlohmann::json> CodecsWithUnitDimension(const nlohmann::json& codecs, size_t rank, int64_t units) {
  nlohmann::json out = codecs;
  for (auto& codec : out) {
    if (!codec.is_object() || !codec.contains("name") || !codec["name"].is_string()) continue;  // refused later
    const std::string name = codec["name"].get<std::string>();
    if (name == "bytes") break;  // the array -> bytes codec: what follows acts on bytes
    if (name == "sharding_indexed") {
      nlohmann::json& config = codec["configuration"];
      if (!config.is_object() || !config.contains("chunk_shape") || !config["chunk_shape"].is_array())
        return InvalidArgument("zarr.json: sharding_indexed needs configuration.chunk_shape, got " + codec.dump());
      config["chunk_shape"].push_back(units);
      if (config.contains("codecs")) {
        TESSERA_ASSIGN_OR_RETURN(config["codecs"], CodecsWithUnitDimension(config["codecs"], rank, units));
      }
      break;  // an array -> bytes codec too
    }
    if (name == "transpose") {
      nlohmann::json& config = codec["configuration"];
      if (!config.is_object() || !config.contains("order") || !config["order"].is_array())
        return InvalidArgument("zarr.json: transpose needs configuration.order, got " + codec.dump());
      config["order"].push_back(rank);  // an element's units stay together, last
      continue;
    }
    return Unsupported("zarr.json: codec \"" + name + "\" before the bytes codec on a fixed-size bytes or string array");
  }
  return out;
}

}  // namespace tessera::zarr
