#include "tessera/pyramid/ome.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace tessera::pyramid {
namespace {

constexpr std::string_view kSpaceUnits[] = {
    "angstrom",   "attometer", "centimeter", "decimeter",  "exameter",  "femtometer", "foot",
    "gigameter",  "hectometer", "inch",      "kilometer",  "megameter", "meter",      "micrometer",
    "mile",       "millimeter", "nanometer", "parsec",     "petameter", "picometer",  "terameter",
    "yard",       "yoctometer", "yottameter", "zeptometer", "zettameter"};
constexpr std::string_view kTimeUnits[] = {
    "attosecond", "centisecond", "day",         "decisecond", "exasecond",  "femtosecond", "gigasecond",
    "hectosecond", "hour",       "kilosecond",  "megasecond", "microsecond", "millisecond", "minute",
    "nanosecond", "petasecond",  "picosecond",  "second",     "terasecond", "yoctosecond", "yottasecond",
    "zeptosecond", "zettasecond"};

template <size_t N>
bool Listed(const std::string_view (&list)[N], std::string_view unit) {
  return std::find(std::begin(list), std::end(list), unit) != std::end(list);
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  for (size_t pos = 0;;) {
    const size_t next = text.find(sep, pos);
    out.push_back(text.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos));
    if (next == std::string_view::npos) return out;
    pos = next + 1;
  }
}

// The rank of an axis type in the order the spec requires: time, then channel or custom, then space.
int TypeRank(const std::string& type) { return type == "time" ? 0 : type == "space" ? 2 : 1; }

nlohmann::json Vector(const std::vector<double>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (double x : v) out.push_back(x);
  return out;
}

}  // namespace

Result<std::vector<OmeAxis>> ParseOmeAxes(std::string_view text) {
  std::vector<OmeAxis> axes;
  for (std::string_view item : Split(text, ',')) {
    const std::vector<std::string_view> parts = Split(item, ':');
    if (parts.size() < 2 || parts.size() > 3 || parts[0].empty() || parts[1].empty())
      return InvalidArgument("axes: \"" + std::string(item) + "\" is not name:type or name:type:unit").WithField("axes");
    axes.push_back({std::string(parts[0]), std::string(parts[1]), parts.size() == 3 ? std::string(parts[2]) : ""});
  }
  TESSERA_RETURN_IF_ERROR(CheckOmeAxes(axes));
  return axes;
}

std::vector<OmeAxis> DefaultOmeAxes(int rank, const std::vector<std::string>& dimension_names) {
  std::vector<OmeAxis> axes(static_cast<size_t>(rank));
  if (static_cast<int>(dimension_names.size()) == rank) {
    for (int d = 0; d < rank; ++d) {
      const std::string& n = dimension_names[d];
      axes[d].name = n;
      axes[d].type = n == "t" || n == "time" ? "time" : n == "c" || n == "ch" || n == "channel" ? "channel" : "space";
    }
    return axes;
  }
  static const char* kSpace[] = {"z", "y", "x"};
  const int space = std::min(rank, 3);
  for (int d = rank - 1, s = 2, k = 0; d >= 0; --d, ++k) {
    if (k < space) {
      axes[d] = {kSpace[s--], "space", ""};
    } else if (k == space) {
      axes[d] = {"c", "channel", ""};
    } else {
      axes[d] = {k == space + 1 ? "t" : "d" + std::to_string(d), "time", ""};
    }
  }
  return axes;
}

Status CheckOmeAxes(const std::vector<OmeAxis>& axes) {
  if (axes.size() < 2 || axes.size() > 5)
    return InvalidArgument("axes: OME-Zarr images have 2 to 5 axes, not " + std::to_string(axes.size())).WithField("axes");
  std::set<std::string> names;
  int space = 0, time = 0, other = 0, last_rank = 0;
  for (const OmeAxis& a : axes) {
    if (!names.insert(a.name).second) return InvalidArgument("axes: the name \"" + a.name + "\" is used twice").WithField("axes");
    const int rank = TypeRank(a.type);
    if (rank < last_rank)
      return InvalidArgument("axes: \"" + a.name + "\" (" + a.type +
                             ") is out of order: time first, then channel (or a custom type), then space").WithField("axes");
    last_rank = rank;
    space += a.type == "space";
    time += a.type == "time";
    other += rank == 1;
    if (a.unit.empty()) continue;
    if (a.type == "space" && !Listed(kSpaceUnits, a.unit))
      return InvalidArgument("axes: \"" + a.unit + "\" is not a space unit of OME-Zarr (e.g. micrometer)").WithField("axes");
    if (a.type == "time" && !Listed(kTimeUnits, a.unit))
      return InvalidArgument("axes: \"" + a.unit + "\" is not a time unit of OME-Zarr (e.g. second)").WithField("axes");
  }
  if (space < 2 || space > 3)
    return InvalidArgument("axes: OME-Zarr images have 2 or 3 space axes, not " + std::to_string(space)).WithField("axes");
  if (time > 1) return InvalidArgument("axes: at most one time axis").WithField("axes");
  if (other > 1) return InvalidArgument("axes: at most one channel (or custom) axis").WithField("axes");
  return Status::Ok();
}

std::vector<int64_t> DefaultFactors(const std::vector<OmeAxis>& axes) {
  std::vector<int64_t> f;
  for (const OmeAxis& a : axes) f.push_back(a.type == "space" ? 2 : 1);
  return f;
}

nlohmann::json OmeAttributes(const OmeImage& image) {
  const size_t rank = image.axes.size();
  nlohmann::json axes = nlohmann::json::array();
  for (const OmeAxis& a : image.axes) {
    nlohmann::json j = {{"name", a.name}, {"type", a.type}};
    if (!a.unit.empty()) j["unit"] = a.unit;
    axes.push_back(std::move(j));
  }
  nlohmann::json datasets = nlohmann::json::array();
  std::vector<double> scale(rank), translation(rank);
  for (int k = 0; k < image.levels; ++k) {
    bool translated = false;
    for (size_t d = 0; d < rank; ++d) {
      const double f = std::pow(static_cast<double>(image.factors[d]), k);
      const double size = d < image.voxel_size.size() ? image.voxel_size[d] : 1.0;
      const double offset = d < image.offset.size() ? image.offset[d] : 0.0;
      scale[d] = size * f;
      translation[d] = offset + size * (f - 1) / 2;
      translated |= translation[d] != 0;
    }
    nlohmann::json transforms = nlohmann::json::array({{{"type", "scale"}, {"scale", Vector(scale)}}});
    if (translated) transforms.push_back({{"type", "translation"}, {"translation", Vector(translation)}});
    datasets.push_back({{"path", std::to_string(k)}, {"coordinateTransformations", std::move(transforms)}});
  }
  nlohmann::json multiscale = {{"axes", std::move(axes)}, {"datasets", std::move(datasets)}};
  if (!image.name.empty()) multiscale["name"] = image.name;
  if (!image.method.empty()) {
    multiscale["type"] = image.method;
    multiscale["metadata"] = {{"method", "tessera"}, {"description", "each level reduces blocks of the level above "
                                                                     "(tensorstore's downsample rules)"},
                              {"factors", image.factors}};
  }
  return {{"ome", {{"version", "0.5"}, {"multiscales", nlohmann::json::array({std::move(multiscale)})}}}};
}

nlohmann::json ImageGroupAttributes(const OmeImage& image, const nlohmann::json& attributes) {
  nlohmann::json group = OmeAttributes(image);
  nlohmann::json& ome = group["ome"];
  if (!attributes.is_object()) return group;
  for (const auto& [key, value] : attributes.items()) {
    if (key == "omero") {
      ome["omero"] = value;
    } else if (key == "ome" && value.is_object()) {
      for (const auto& [member, v] : value.items())
        if (member != "version" && member != "multiscales") ome[member] = v;
    } else if (key != "ome") {
      group[key] = value;
    }
  }
  return group;
}

nlohmann::json CallerAttributes(const nlohmann::json& group_attributes) {
  nlohmann::json out = nlohmann::json::object();
  if (!group_attributes.is_object()) return out;
  for (const auto& [key, value] : group_attributes.items()) {
    if (key != "ome") {
      out[key] = value;
    } else if (value.is_object()) {
      if (auto omero = value.find("omero"); omero != value.end()) out["omero"] = *omero;
    }
  }
  return out;
}

std::optional<std::array<double, 3>> VoxelSizeNanometresXyz(const std::vector<OmeAxis>& axes,
                                                           const std::vector<double>& voxel_size) {
  // Nanometres per unit of the lengths microscopes record.
  static const std::pair<std::string_view, double> kNanometres[] = {
      {"picometer", 1e-3}, {"angstrom", 0.1}, {"nanometer", 1}, {"micrometer", 1e3},
      {"millimeter", 1e6}, {"centimeter", 1e7}, {"meter", 1e9}};
  std::array<double, 3> xyz{1, 1, 1};
  int found = 0;
  for (size_t d = axes.size(); d-- > 0;) {
    if (axes[d].type != "space") continue;
    if (found == 3) return std::nullopt;
    const auto unit = std::find_if(std::begin(kNanometres), std::end(kNanometres),
                                   [&](const auto& u) { return u.first == axes[d].unit; });
    if (unit == std::end(kNanometres)) return std::nullopt;
    const double size = d < voxel_size.size() ? voxel_size[d] : 1.0;
    xyz[static_cast<size_t>(found++)] = size * unit->second;
  }
  if (found < 2) return std::nullopt;
  return xyz;
}

}  // namespace tessera::pyramid
