#include "tessera/zarr/time_data_type.h"

#include <cctype>
#include <cstring>
#include <limits>

namespace tessera::zarr {
namespace {

constexpr const char* kUnits[] = {"Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"};

// numpy's unit for `unit` ("μs" is zarr-python's other spelling of microseconds); empty if unknown.
std::string NumpyUnit(const std::string& unit) {
  if (unit == "\xce\xbcs") return "us";
  for (const char* u : kUnits)
    if (unit == u) return unit;
  return "";
}

}  // namespace

std::string TimeDataType::Numpy() const {
  std::string scale = scale_factor == 1 ? "" : std::to_string(scale_factor);
  return std::string("<") + kind + "8[" + scale + unit + "]";
}

std::string TimeDataType::Description() const {
  std::string scale = scale_factor == 1 ? "" : std::to_string(scale_factor);
  return std::string(kind == 'M' ? "datetime64[" : "timedelta64[") + scale + unit + "]";
}

nlohmann::json TimeDataType::ToJson() const {
  return {{"name", kind == 'M' ? "numpy.datetime64" : "numpy.timedelta64"},
          {"configuration", {{"unit", unit}, {"scale_factor", scale_factor}}}};
}

Result<std::optional<TimeDataType>> TimeDataType::FromJson(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) return std::optional<TimeDataType>();
  const std::string name = j["name"].get<std::string>();
  if (name != "numpy.datetime64" && name != "numpy.timedelta64") return std::optional<TimeDataType>();
  TimeDataType t;
  t.kind = name == "numpy.datetime64" ? 'M' : 'm';
  const nlohmann::json config = j.value("configuration", nlohmann::json::object());
  if (!config.is_object() || !config.contains("unit") || !config["unit"].is_string())
    return InvalidArgument("zarr.json: data_type " + name + " needs configuration.unit (a string), got " + j.dump());
  t.unit = NumpyUnit(config["unit"].get<std::string>());
  if (t.unit.empty())
    return Unsupported("zarr.json: data_type " + name + " unit " + config["unit"].dump() +
                       " (tessera reads Y, M, W, D, h, m, s, ms, us, ns, ps, fs, as)");
  if (config.contains("scale_factor")) {
    if (!config["scale_factor"].is_number_integer() || config["scale_factor"].get<int64_t>() < 1 ||
        config["scale_factor"].get<int64_t>() > std::numeric_limits<int32_t>::max())
      return InvalidArgument("zarr.json: data_type " + name + " scale_factor must be a positive 32-bit integer, got " +
                             config["scale_factor"].dump());
    t.scale_factor = config["scale_factor"].get<int64_t>();
  }
  return std::optional<TimeDataType>(t);
}

Result<std::optional<TimeDataType>> TimeDataType::FromNumpy(std::string_view t) {
  if (t.size() < 4 || (t[0] != 'M' && t[0] != 'm') || t[1] != '8' || t[2] != '[' || t.back() != ']')
    return std::optional<TimeDataType>();
  TimeDataType out;
  out.kind = t[0];
  std::string_view inside = t.substr(3, t.size() - 4);
  size_t digits = 0;
  while (digits < inside.size() && std::isdigit(static_cast<unsigned char>(inside[digits]))) ++digits;
  if (digits > 9) return std::optional<TimeDataType>();
  if (digits > 0) out.scale_factor = std::stoll(std::string(inside.substr(0, digits)));
  out.unit = NumpyUnit(std::string(inside.substr(digits)));
  if (out.unit.empty() || out.scale_factor < 1) return std::optional<TimeDataType>();
  return std::optional<TimeDataType>(out);
}

Result<FillValue> ParseTimeFillValue(const nlohmann::json& j) {
  if (j.is_string() && j.get<std::string>() == "NaT") {
    FillValue fill;
    fill.bytes.resize(8);
    const int64_t nat = std::numeric_limits<int64_t>::min();
    std::memcpy(fill.bytes.data(), &nat, 8);
    return fill;
  }
  return ParseFillValue(DataType::kInt64, j);
}

nlohmann::json TimeFillValueToJson(const FillValue& fill) { return FillValueToJson(DataType::kInt64, fill); }

}  // namespace tessera::zarr
