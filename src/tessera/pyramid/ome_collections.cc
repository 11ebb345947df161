#include "tessera/pyramid/ome_collections.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace tessera::pyramid {
namespace {

constexpr const char* kVersion = "0.5";

nlohmann::json OmeGroup(const char* member, nlohmann::json value) {
  return {{"ome", {{"version", kVersion}, {member, std::move(value)}}}};
}

Status Invalid(const std::string& field, const std::string& what) {
  return InvalidArgument(field + ": " + what).WithField(field);
}

std::string Indexed(const std::string& field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// The spec's names of rows, columns and well images: ASCII letters and digits only, since they
// are also directory names.
bool Alphanumeric(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c); });
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "A, B, C" for messages that list what was expected.
std::string Listing(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// [{"name": "A"}, {"name": "B"}]: the plate's rows or columns.
nlohmann::json NameObjects(const std::vector<std::string>& names) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& n : names) out.push_back({{"name", n}});
  return out;
}

Status CheckNames(const std::vector<std::string>& names, const std::string& field) {
  if (names.empty()) return Invalid(field, "a plate has at least one");
  std::set<std::string> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!Alphanumeric(names[i]))
      return Invalid(Indexed(field, i) + ".name", Quoted(names[i]) + " is not alphanumeric (letters and digits only)");
    if (!seen.insert(Lower(names[i])).second)
      return Invalid(Indexed(field, i) + ".name", Quoted(names[i]) + " repeats an earlier name (names are unique, "
                                                  "also ignoring case)");
  }
  return Status::Ok();
}

// The label values of `properties` (objects with an integer "label-value"), each once.
Result<std::set<int64_t>> PropertyLabelValues(const nlohmann::json& properties) {
  const std::string field = "image-label.properties";
  if (!properties.is_array()) return Invalid(field, "expected an array of objects, got " + properties.dump());
  std::set<int64_t> values;
  for (size_t i = 0; i < properties.size(); ++i) {
    const nlohmann::json& p = properties[i];
    const auto value = p.is_object() ? p.find("label-value") : p.end();
    if (!p.is_object() || value == p.end() || !value->is_number_integer())
      return Invalid(Indexed(field, i), "expected an object with an integer \"label-value\", got " + p.dump());
    if (!values.insert(value->get<int64_t>()).second)
      return Invalid(Indexed(field, i), "label-value " + value->dump() + " is listed twice");
  }
  return values;
}

}  // namespace

nlohmann::json LabelsGroupAttributes(const std::vector<std::string>& names) { return OmeGroup("labels", names); }

Status CheckImageLabel(const OmeImageLabel& label) {
  std::set<int64_t> color_values;
  for (size_t i = 0; i < label.colors.size(); ++i) {
    const OmeLabelColor& c = label.colors[i];
    const std::string field = Indexed("image-label.colors", i);
    for (int v : c.rgba)
      if (v < 0 || v > 255) return Invalid(field + ".rgba", std::to_string(v) + " is outside 0 to 255");
    if (!color_values.insert(c.label_value).second)
      return Invalid(field, "label-value " + std::to_string(c.label_value) + " is listed twice");
  }
  TESSERA_ASSIGN_OR_RETURN(const std::set<int64_t> property_values, PropertyLabelValues(label.properties));
  if (!color_values.empty() && !property_values.empty() && color_values != property_values)
    return Invalid("image-label.properties", "colors and properties describe different label values (each value "
                                             "with a colour has properties and each with properties a colour)");
  return Status::Ok();
}

nlohmann::json ImageLabelMember(const OmeImageLabel& label) {
  // The spec asks for an image-label `version`; ome-zarr writes it too.
  nlohmann::json out = {{"version", kVersion}};
  if (!label.colors.empty()) {
    nlohmann::json& colors = out["colors"] = nlohmann::json::array();
    for (const OmeLabelColor& c : label.colors) colors.push_back({{"label-value", c.label_value}, {"rgba", c.rgba}});
  }
  if (!label.properties.empty()) out["properties"] = label.properties;
  if (!label.source_image.empty()) out["source"] = {{"image", label.source_image}};
  return out;
}

Status CheckPlate(const OmePlate& plate) {
  TESSERA_RETURN_IF_ERROR(CheckNames(plate.rows, "plate.rows"));
  TESSERA_RETURN_IF_ERROR(CheckNames(plate.columns, "plate.columns"));
  if (plate.field_count < 0)
    return Invalid("plate.field_count", std::to_string(plate.field_count) + " is negative (0 leaves it unset)");
  std::set<int> ids;
  for (size_t i = 0; i < plate.acquisitions.size(); ++i) {
    const OmeAcquisition& a = plate.acquisitions[i];
    const std::string field = Indexed("plate.acquisitions", i);
    if (a.id < 0) return Invalid(field + ".id", std::to_string(a.id) + " is negative");
    if (!ids.insert(a.id).second) return Invalid(field + ".id", std::to_string(a.id) + " is used twice");
    if (a.maximum_field_count < 0)
      return Invalid(field + ".maximumfieldcount",
                     std::to_string(a.maximum_field_count) + " is negative (0 leaves it unset)");
  }
  return Status::Ok();
}

nlohmann::json PlateAttributes(const OmePlate& plate, std::vector<OmeWell> wells) {
  nlohmann::json p = nlohmann::json::object();
  // ome-zarr-models warns when the plate has no version of its own, so ome-zarr writes one here
  // besides the group's; so do we.
  p["version"] = kVersion;
  if (!plate.name.empty()) p["name"] = plate.name;
  p["rows"] = NameObjects(plate.rows);
  p["columns"] = NameObjects(plate.columns);
  std::sort(wells.begin(), wells.end());
  wells.erase(std::unique(wells.begin(), wells.end()), wells.end());
  nlohmann::json& list = p["wells"] = nlohmann::json::array();
  for (const OmeWell& w : wells)
    list.push_back({{"path", plate.rows[w.row_index] + "/" + plate.columns[w.column_index]},
                    {"rowIndex", w.row_index},
                    {"columnIndex", w.column_index}});
  if (plate.field_count > 0) p["field_count"] = plate.field_count;
  if (!plate.acquisitions.empty()) {
    nlohmann::json& acquisitions = p["acquisitions"] = nlohmann::json::array();
    for (const OmeAcquisition& a : plate.acquisitions) {
      nlohmann::json j = {{"id", a.id}};
      if (!a.name.empty()) j["name"] = a.name;
      if (a.maximum_field_count > 0) j["maximumfieldcount"] = a.maximum_field_count;
      if (!a.description.empty()) j["description"] = a.description;
      if (a.start_time) j["starttime"] = *a.start_time;
      if (a.end_time) j["endtime"] = *a.end_time;
      acquisitions.push_back(std::move(j));
    }
  }
  return OmeGroup("plate", std::move(p));
}

Status CheckWell(const OmePlate& plate, const std::vector<OmeWellImage>& images) {
  if (plate.field_count > 0 && static_cast<int64_t>(images.size()) > plate.field_count)
    return Invalid("well.images", std::to_string(images.size()) +
                                      " fields of view, more than the plate's field_count " +
                                      std::to_string(plate.field_count));
  std::set<std::string> paths;
  for (size_t i = 0; i < images.size(); ++i) {
    const OmeWellImage& image = images[i];
    const std::string field = Indexed("well.images", i);
    if (!Alphanumeric(image.path))
      return Invalid(field + ".path", Quoted(image.path) + " is not alphanumeric (letters and digits only)");
    if (!paths.insert(image.path).second) return Invalid(field + ".path", Quoted(image.path) + " is used twice");
    if (!image.acquisition) {
      if (plate.acquisitions.size() > 1)
        return Invalid(field + ".acquisition", "the plate has " + std::to_string(plate.acquisitions.size()) +
                                                   " acquisitions, so each field of view names its own");
      continue;
    }
    const bool known = std::any_of(plate.acquisitions.begin(), plate.acquisitions.end(),
                                   [&](const OmeAcquisition& a) { return a.id == *image.acquisition; });
    if (!known) {
      std::vector<std::string> ids;
      for (const OmeAcquisition& a : plate.acquisitions) ids.push_back(std::to_string(a.id));
      return Invalid(field + ".acquisition", std::to_string(*image.acquisition) +
                                                 " is not an acquisition of the plate (ids: " +
                                                 (ids.empty() ? "none" : Listing(ids)) + ")");
    }
  }
  return Status::Ok();
}

nlohmann::json WellAttributes(const std::vector<OmeWellImage>& images) {
  nlohmann::json list = nlohmann::json::array();
  for (const OmeWellImage& image : images) {
    nlohmann::json j = {{"path", image.path}};
    if (image.acquisition) j["acquisition"] = *image.acquisition;
    list.push_back(std::move(j));
  }
  return OmeGroup("well", {{"version", kVersion}, {"images", std::move(list)}});
}

Result<OmeFieldPath> ParseFieldPath(const OmePlate& plate, std::string_view path) {
  const std::string what = "field path " + Quoted(path);
  std::vector<std::string_view> parts;
  for (size_t pos = 0;;) {
    const size_t slash = path.find('/', pos);
    parts.push_back(path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos));
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  if (parts.size() != 3)
    return InvalidArgument(what + ": expected row/column/field relative to the plate, e.g. \"" +
                           (plate.rows.empty() ? "A" : plate.rows[0]) + "/" +
                           (plate.columns.empty() ? "1" : plate.columns[0]) + "/0\"");
  const auto find = [](const std::vector<std::string>& names, std::string_view name) {
    return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  OmeFieldPath out;
  out.well.row_index = find(plate.rows, parts[0]);
  if (out.well.row_index == static_cast<int>(plate.rows.size()))
    return InvalidArgument(what + ": row " + Quoted(parts[0]) + " is not one of the plate's rows (" +
                           Listing(plate.rows) + ")");
  out.well.column_index = find(plate.columns, parts[1]);
  if (out.well.column_index == static_cast<int>(plate.columns.size()))
    return InvalidArgument(what + ": column " + Quoted(parts[1]) + " is not one of the plate's columns (" +
                           Listing(plate.columns) + ")");
  if (!Alphanumeric(parts[2]))
    return InvalidArgument(what + ": the field " + Quoted(parts[2]) + " is not alphanumeric (letters and digits only)");
  out.field = std::string(parts[2]);
  return out;
}

}  // namespace tessera::pyramid
