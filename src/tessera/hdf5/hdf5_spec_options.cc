#include "tessera/hdf5/hdf5_spec_options.h"

#include <algorithm>
#include <cstring>

#include "tessera/spec/spec_error.h"

namespace tessera::hdf5 {

Status CheckHdf5Attribute(const std::string& name, const nlohmann::json& v) {
  // Integers are stored as int64: an unsigned value above its range would wrap.
  auto number = [](const nlohmann::json& e) {
    return e.is_number() && !(e.is_number_unsigned() && e.get<uint64_t>() > uint64_t{INT64_MAX});
  };
  if (v.is_string() || number(v)) return Status::Ok();
  if (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), number)) return Status::Ok();
  return FieldNotHonoured("attributes", "hdf5",
                          "attributes are numbers (integers within int64), strings or non-empty 1-D arrays of "
                          "numbers; \"" + name + "\" is " + v.dump());
}

namespace {

// A JSON attribute value (checked by CheckHdf5Attribute) as an HDF5 attribute.
Result<Attribute> ToAttribute(const std::string& name, const nlohmann::json& v) {
  if (v.is_string()) return Attribute::String(name, v.get<std::string>());
  const bool array = v.is_array();
  const nlohmann::json items = array ? v : nlohmann::json::array({v});
  bool integers = true;
  for (const auto& e : items) integers &= e.is_number_integer();
  Bytes data(items.size() * 8);
  for (size_t i = 0; i < items.size(); ++i) {
    if (integers) {
      const int64_t x = items[i].get<int64_t>();
      std::memcpy(data.data() + 8 * i, &x, 8);
    } else {
      const double x = items[i].get<double>();
      std::memcpy(data.data() + 8 * i, &x, 8);
    }
  }
  std::vector<uint64_t> dims;
  if (array) dims.push_back(items.size());
  return Attribute::Numeric(name, integers ? DataType::kInt64 : DataType::kFloat64, std::move(dims), std::move(data));
}

}  // namespace

Result<std::vector<Attribute>> Hdf5AttributesOf(const nlohmann::json& attributes) {
  std::vector<Attribute> out;
  if (attributes.is_null()) return out;
  if (!attributes.is_object())
    return InvalidField("attributes", "expected a JSON object of name: value, got " + attributes.dump());
  for (const auto& [name, value] : attributes.items()) {
    TESSERA_RETURN_IF_ERROR(CheckHdf5Attribute(name, value));
    TESSERA_ASSIGN_OR_RETURN(Attribute a, ToAttribute(name, value));
    out.push_back(std::move(a));
  }
  return out;
}

Result<Hdf5StreamOptions> Hdf5StreamOptionsOf(const ArraySpec& s) {
  Hdf5StreamOptions o;
  o.dataset = s.hdf5.dataset;
  o.dtype = s.dtype;
  o.shape = s.shape;
  o.chunk_shape = s.chunk_shape;
  o.deflate_level = *s.codec == Codec::kGzip ? *s.level : -1;
  o.shuffle = s.hdf5.shuffle;
  o.fletcher32 = s.hdf5.fletcher32;
  if (!s.fill_value.is_null()) {
    TESSERA_ASSIGN_OR_RETURN(o.fill, ParseFillValue(s.dtype, s.fill_value));
  }
  for (const auto& [name, value] : s.attributes.items()) {
    TESSERA_ASSIGN_OR_RETURN(Attribute a, ToAttribute(name, value));
    o.attributes.push_back(std::move(a));
  }
  return o;
}

}  // namespace tessera::hdf5
