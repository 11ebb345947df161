#include "tessera/spec/array_spec_json.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/pyramid/downsample.h"
#include "tessera/pyramid/ome.h"
#include "tessera/spec/spec_error.h"

namespace tessera {
namespace {

using nlohmann::json;

// The members that are objects of fields of their own (PatchSpecJson patches them key by key).
constexpr std::string_view kObjects[] = {"zarr3", "precomputed", "hdf5", "pyramid", "ome"};

// "a.b" + "c" -> "a.b.c"; "" + "c" -> "c".
std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
std::string Index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// The value as an error quotes it: short, one line.
std::string Quote(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

Status Bad(const std::string& path, const std::string& what) { return InvalidField(path, what); }
Status Expected(const std::string& path, const std::string& what, const json& got) {
  return Bad(path, "must be " + what + ", not " + Quote(got));
}

// An object's keys must be among `known`.
Status CheckKeys(const json& object, const std::string& path, std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : object.items()) {
    bool found = false;
    for (std::string_view k : known) found = found || key == k;
    if (found) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    return Bad(Join(path, key), "unknown field (" + (path.empty() ? std::string("a spec") : path) + " has " + list + ")");
  }
  return Status::Ok();
}

// Reads the members of one JSON object; a member left out or null is not read (the default stays).
class Fields {
 public:
  Fields(const json& object, std::string path) : object_(object), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  std::string PathOf(std::string_view key) const { return Join(path_, key); }

  // The member, or nullptr when left out or null.
  const json* Get(std::string_view key) const {
    auto it = object_.find(std::string(key));
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  Status Bool(std::string_view key, bool* out) const {
    const json* v = Get(key);
    if (!v) return Status::Ok();
    if (!v->is_boolean()) return Expected(PathOf(key), "true or false", *v);
    *out = v->get<bool>();
    return Status::Ok();
  }

  Status String(std::string_view key, std::string* out) const {
    const json* v = Get(key);
    if (!v) return Status::Ok();
    if (!v->is_string()) return Expected(PathOf(key), "a string", *v);
    *out = v->get<std::string>();
    return Status::Ok();
  }

  Status Int(std::string_view key, int* out) const {
    const json* v = Get(key);
    if (!v) return Status::Ok();
    TESSERA_ASSIGN_OR_RETURN(int64_t i, IntOf(*v, PathOf(key)));
    if (i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max())
      return Bad(PathOf(key), std::to_string(i) + " is out of range");
    *out = static_cast<int>(i);
    return Status::Ok();
  }

  Status Ints(std::string_view key, std::vector<int64_t>* out) const {
    const json* v = Get(key);
    if (!v) return Status::Ok();
    const std::string path = PathOf(key);
    if (!v->is_array()) return Expected(path, "an array of integers", *v);
    std::vector<int64_t> values;
    for (size_t i = 0; i < v->size(); ++i) {
      TESSERA_ASSIGN_OR_RETURN(int64_t x, IntOf((*v)[i], Index(path, i)));
      values.push_back(x);
    }
    *out = std::move(values);
    return Status::Ok();
  }

  Status Numbers(std::string_view key, std::vector<double>* out) const {
    const json* v = Get(key);
    if (!v) return Status::Ok();
    const std::string path = PathOf(key);
    if (!v->is_array()) return Expected(path, "an array of numbers", *v);
    std::vector<double> values;
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_number()) return Expected(Index(path, i), "a number", (*v)[i]);
      values.push_back((*v)[i].get<double>());
    }
    *out = std::move(values);
    return Status::Ok();
  }

  // Three values (x, y, z).
  template <typename T>
  Status Xyz(std::string_view key, std::array<T, 3>* out) const {
    const json* v = Get(key);
    if (!v) return Status::Ok();
    const std::string path = PathOf(key);
    const char* what = std::is_integral_v<T> ? "an array of 3 integers (x, y, z)" : "an array of 3 numbers (x, y, z)";
    if (!v->is_array() || v->size() != 3) return Expected(path, what, *v);
    std::array<T, 3> values{};
    for (size_t i = 0; i < 3; ++i) {
      if constexpr (std::is_integral_v<T>) {
        TESSERA_ASSIGN_OR_RETURN(values[i], IntOf((*v)[i], Index(path, i)));
      } else {
        if (!(*v)[i].is_number()) return Expected(Index(path, i), "a number", (*v)[i]);
        values[i] = (*v)[i].get<T>();
      }
    }
    *out = values;
    return Status::Ok();
  }

  Status Strings(std::string_view key, std::vector<std::string>* out) const {
    const json* v = Get(key);
    if (!v) return Status::Ok();
    const std::string path = PathOf(key);
    if (!v->is_array()) return Expected(path, "an array of strings", *v);
    std::vector<std::string> values;
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) return Expected(Index(path, i), "a string", (*v)[i]);
      values.push_back((*v)[i].get<std::string>());
    }
    *out = std::move(values);
    return Status::Ok();
  }

  // The member as an object (nullptr when left out or null), its keys among `known`.
  Result<const json*> Object(std::string_view key, std::initializer_list<std::string_view> known) const {
    const json* v = Get(key);
    if (!v) return static_cast<const json*>(nullptr);
    if (!v->is_object()) return Expected(PathOf(key), "an object", *v);
    TESSERA_RETURN_IF_ERROR(CheckKeys(*v, PathOf(key), known));
    return v;
  }

  static Result<int64_t> IntOf(const json& v, const std::string& path) {
    if (!v.is_number_integer()) return Expected(path, "an integer", v);
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return Bad(path, Quote(v) + " is out of range (int64)");
    return v.get<int64_t>();
  }

 private:
  const json& object_;
  std::string path_;
};

// A field's error from a parser that names the field its own way ("axes: ..."), or not at all,
// re-anchored at the field's JSON path.
Status AtPath(const Status& status, const std::string& path) {
  if (status.field_leads_message()) return RespellSpecField(status, path);
  return FieldError(status.kind(), path, status.message());
}

Status ReadAxes(const json& v, const std::string& path, std::vector<pyramid::OmeAxis>* out) {
  if (v.is_string()) {
    Result<std::vector<pyramid::OmeAxis>> parsed = pyramid::ParseOmeAxes(v.get<std::string>());
    if (!parsed.ok()) return AtPath(parsed.status(), path);
    *out = std::move(parsed).value();
    return Status::Ok();
  }
  if (!v.is_array()) return Expected(path, "an array of axes ({\"name\", \"type\", \"unit\"}) or \"name:type[:unit],...\"", v);
  std::vector<pyramid::OmeAxis> axes;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string at = Index(path, i);
    const json& a = v[i];
    if (!a.is_object()) return Expected(at, "an object {\"name\", \"type\", \"unit\"}", a);
    TESSERA_RETURN_IF_ERROR(CheckKeys(a, at, {"name", "type", "unit"}));
    Fields f(a, at);
    pyramid::OmeAxis axis;
    TESSERA_RETURN_IF_ERROR(f.String("name", &axis.name));
    TESSERA_RETURN_IF_ERROR(f.String("type", &axis.type));
    TESSERA_RETURN_IF_ERROR(f.String("unit", &axis.unit));
    if (axis.name.empty()) return Bad(f.PathOf("name"), "must be a non-empty string");
    if (axis.type.empty()) return Bad(f.PathOf("type"), "must be a non-empty string");
    axes.push_back(std::move(axis));
  }
  *out = std::move(axes);
  return Status::Ok();
}

}  // namespace

nlohmann::json ArraySpecToJson(const ArraySpec& s) {
  json j = json::object();
  j["dtype"] = std::string(DataTypeName(s.dtype));
  j["shape"] = s.shape;
  if (!s.chunk_shape.empty()) j["chunk_shape"] = s.chunk_shape;
  if (!s.shard_chunks.empty()) j["shard_chunks"] = s.shard_chunks;
  if (s.codec) j["codec"] = std::string(CodecName(*s.codec));
  if (s.level) j["level"] = *s.level;
  if (!s.fill_value.is_null()) j["fill_value"] = s.fill_value;
  if (!s.dimension_names.empty()) j["dimension_names"] = s.dimension_names;
  if (!s.arrival_order.empty()) j["arrival_order"] = s.arrival_order;
  if (!(s.attributes.is_object() && s.attributes.empty())) j["attributes"] = s.attributes;

  if (s.zarr.index_at_start) j["zarr3"]["index_at_start"] = true;
  if (!s.zarr.chunk_codecs.is_null()) j["zarr3"]["chunk_codecs"] = s.zarr.chunk_codecs;
  const BloscSpecOptions& blosc = s.zarr.blosc;
  if (!blosc.cname.empty()) j["zarr3"]["cname"] = blosc.cname;
  if (!blosc.shuffle.empty()) j["zarr3"]["shuffle"] = blosc.shuffle;
  if (blosc.typesize) j["zarr3"]["typesize"] = *blosc.typesize;
  if (blosc.blocksize) j["zarr3"]["blocksize"] = *blosc.blocksize;

  const PrecomputedSpecOptions& p = s.precomputed;
  const PrecomputedSpecOptions pd;
  json pj = json::object();
  if (p.encoding != pd.encoding) pj["encoding"] = p.encoding;
  if (p.cseg_block_xyz != pd.cseg_block_xyz) pj["cseg_block_xyz"] = p.cseg_block_xyz;
  if (p.jpeg_quality) pj["jpeg_quality"] = *p.jpeg_quality;
  if (p.png_level) pj["png_level"] = *p.png_level;
  if (p.hash != pd.hash) pj["hash"] = p.hash;
  if (p.resolution_xyz != pd.resolution_xyz) pj["resolution_xyz"] = p.resolution_xyz;
  if (p.voxel_offset_xyz != pd.voxel_offset_xyz) pj["voxel_offset_xyz"] = p.voxel_offset_xyz;
  if (p.scale_key != pd.scale_key) pj["scale_key"] = p.scale_key;
  if (!pj.empty()) j["precomputed"] = std::move(pj);

  const Hdf5SpecOptions hd;
  json hj = json::object();
  if (s.hdf5.dataset != hd.dataset) hj["dataset"] = s.hdf5.dataset;
  if (s.hdf5.shuffle != hd.shuffle) hj["shuffle"] = s.hdf5.shuffle;
  if (s.hdf5.fletcher32 != hd.fletcher32) hj["fletcher32"] = s.hdf5.fletcher32;
  if (!hj.empty()) j["hdf5"] = std::move(hj);

  json py = json::object();
  if (s.pyramid.levels != PyramidSpec{}.levels) py["levels"] = s.pyramid.levels;
  if (s.pyramid.method) py["method"] = std::string(pyramid::DownsampleMethodName(*s.pyramid.method));
  if (!s.pyramid.factors.empty()) py["factors"] = s.pyramid.factors;
  if (!py.empty()) j["pyramid"] = std::move(py);

  json ome = json::object();
  if (s.ome.image) ome["image"] = true;
  if (!s.ome.axes.empty()) {
    json axes = json::array();
    for (const pyramid::OmeAxis& a : s.ome.axes) {
      json axis = {{"name", a.name}, {"type", a.type}};
      if (!a.unit.empty()) axis["unit"] = a.unit;
      axes.push_back(std::move(axis));
    }
    ome["axes"] = std::move(axes);
  }
  if (!s.ome.voxel_size.empty()) ome["voxel_size"] = s.ome.voxel_size;
  if (!s.ome.offset.empty()) ome["offset"] = s.ome.offset;
  if (!s.ome.name.empty()) ome["name"] = s.ome.name;
  if (!ome.empty()) j["ome"] = std::move(ome);
  return j;
}

Result<ArraySpec> ArraySpecFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("the spec must be a JSON object, not " + Quote(j));
  TESSERA_RETURN_IF_ERROR(CheckKeys(j, "", {"dtype", "shape", "chunk_shape", "shard_chunks", "codec", "level",
                                           "fill_value", "dimension_names", "arrival_order", "attributes", "zarr3",
                                           "precomputed", "hdf5", "pyramid", "ome"}));
  ArraySpec s;
  const Fields f(j, "");
  if (const json* dtype = f.Get("dtype")) {
    if (!dtype->is_string()) return Expected("dtype", "a string (\"uint16\", \"float32\", ...)", *dtype);
    Result<DataType> t = ParseDataType(dtype->get<std::string>());
    if (!t.ok()) return AtPath(t.status(), "dtype");
    s.dtype = *t;
  }
  TESSERA_RETURN_IF_ERROR(f.Ints("shape", &s.shape));
  TESSERA_RETURN_IF_ERROR(f.Ints("chunk_shape", &s.chunk_shape));
  TESSERA_RETURN_IF_ERROR(f.Ints("shard_chunks", &s.shard_chunks));
  if (const json* codec = f.Get("codec")) {
    if (!codec->is_string()) return Expected("codec", "a string (\"none\", \"zstd\", ...)", *codec);
    Result<Codec> c = ParseCodec(codec->get<std::string>());
    if (!c.ok()) return AtPath(c.status(), "codec");
    s.codec = *c;
  }
  if (f.Get("level")) {
    int level = 0;
    TESSERA_RETURN_IF_ERROR(f.Int("level", &level));
    s.level = level;
  }
  if (const json* fill = f.Get("fill_value")) s.fill_value = *fill;
  TESSERA_RETURN_IF_ERROR(f.Strings("dimension_names", &s.dimension_names));
  TESSERA_RETURN_IF_ERROR(f.Ints("arrival_order", &s.arrival_order));
  if (const json* attributes = f.Get("attributes")) {
    if (!attributes->is_object()) return Expected("attributes", "an object", *attributes);
    s.attributes = *attributes;
  }

  TESSERA_ASSIGN_OR_RETURN(const json* zarr, f.Object("zarr3", {"index_at_start", "chunk_codecs", "cname", "shuffle",
                                                                "typesize", "blocksize"}));
  if (zarr) {
    const Fields z(*zarr, "zarr3");
    TESSERA_RETURN_IF_ERROR(z.Bool("index_at_start", &s.zarr.index_at_start));
    if (const json* codecs = z.Get("chunk_codecs")) {
      if (!codecs->is_array() && !codecs->is_null()) return Expected("zarr3.chunk_codecs", "a list of codecs", *codecs);
      s.zarr.chunk_codecs = *codecs;
    }
    BloscSpecOptions& blosc = s.zarr.blosc;
    TESSERA_RETURN_IF_ERROR(z.String("cname", &blosc.cname));
    TESSERA_RETURN_IF_ERROR(z.String("shuffle", &blosc.shuffle));
    for (auto [key, field] : {std::pair{"typesize", &blosc.typesize}, std::pair{"blocksize", &blosc.blocksize}}) {
      if (!z.Get(key)) continue;
      int value = 0;
      TESSERA_RETURN_IF_ERROR(z.Int(key, &value));
      *field = value;
    }
  }

  TESSERA_ASSIGN_OR_RETURN(const json* pre, f.Object("precomputed", {"encoding", "cseg_block_xyz", "jpeg_quality",
                                                                      "png_level", "hash", "resolution_xyz",
                                                                      "voxel_offset_xyz", "scale_key"}));
  if (pre) {
    const Fields p(*pre, "precomputed");
    PrecomputedSpecOptions& o = s.precomputed;
    TESSERA_RETURN_IF_ERROR(p.String("encoding", &o.encoding));
    TESSERA_RETURN_IF_ERROR(p.Xyz("cseg_block_xyz", &o.cseg_block_xyz));
    for (auto [key, out] : {std::pair{"jpeg_quality", &o.jpeg_quality}, std::pair{"png_level", &o.png_level}}) {
      if (!pre->contains(key) || (*pre)[key].is_null()) continue;
      int v = 0;
      TESSERA_RETURN_IF_ERROR(p.Int(key, &v));
      *out = v;
    }
    TESSERA_RETURN_IF_ERROR(p.String("hash", &o.hash));
    TESSERA_RETURN_IF_ERROR(p.Xyz("resolution_xyz", &o.resolution_xyz));
    TESSERA_RETURN_IF_ERROR(p.Xyz("voxel_offset_xyz", &o.voxel_offset_xyz));
    TESSERA_RETURN_IF_ERROR(p.String("scale_key", &o.scale_key));
  }

  TESSERA_ASSIGN_OR_RETURN(const json* hdf5, f.Object("hdf5", {"dataset", "shuffle", "fletcher32"}));
  if (hdf5) {
    const Fields h(*hdf5, "hdf5");
    TESSERA_RETURN_IF_ERROR(h.String("dataset", &s.hdf5.dataset));
    TESSERA_RETURN_IF_ERROR(h.Bool("shuffle", &s.hdf5.shuffle));
    TESSERA_RETURN_IF_ERROR(h.Bool("fletcher32", &s.hdf5.fletcher32));
  }

  TESSERA_ASSIGN_OR_RETURN(const json* pyr, f.Object("pyramid", {"levels", "method", "factors"}));
  if (pyr) {
    const Fields p(*pyr, "pyramid");
    const json* levels = p.Get("levels");
    if (levels && levels->is_string()) {
      if (*levels != "auto") return Expected(p.PathOf("levels"), "a level count or \"auto\"", *levels);
      s.pyramid.levels = 0;
    } else if (levels) {
      if (!levels->is_number_integer()) return Expected(p.PathOf("levels"), "a level count or \"auto\"", *levels);
      TESSERA_RETURN_IF_ERROR(p.Int("levels", &s.pyramid.levels));
    }
    if (const json* method = p.Get("method")) {
      if (!method->is_string()) return Expected(p.PathOf("method"), "a string (\"mean\", \"mode\", ...)", *method);
      Result<pyramid::DownsampleMethod> m = pyramid::ParseDownsampleMethod(method->get<std::string>());
      if (!m.ok()) return AtPath(m.status(), p.PathOf("method"));
      s.pyramid.method = *m;
    }
    TESSERA_RETURN_IF_ERROR(p.Ints("factors", &s.pyramid.factors));
  }

  TESSERA_ASSIGN_OR_RETURN(const json* ome, f.Object("ome", {"image", "axes", "voxel_size", "offset", "name"}));
  if (ome) {
    const Fields o(*ome, "ome");
    TESSERA_RETURN_IF_ERROR(o.Bool("image", &s.ome.image));
    if (const json* axes = o.Get("axes")) TESSERA_RETURN_IF_ERROR(ReadAxes(*axes, o.PathOf("axes"), &s.ome.axes));
    TESSERA_RETURN_IF_ERROR(o.Numbers("voxel_size", &s.ome.voxel_size));
    TESSERA_RETURN_IF_ERROR(o.Numbers("offset", &s.ome.offset));
    TESSERA_RETURN_IF_ERROR(o.String("name", &s.ome.name));
  }
  return s;
}

Status PatchSpecJson(nlohmann::json* spec, const nlohmann::json& patch) {
  if (spec->is_null()) *spec = json::object();
  if (!spec->is_object()) return InvalidArgument("the spec must be a JSON object, not " + Quote(*spec));
  if (!patch.is_object()) return InvalidArgument("the spec must be a JSON object, not " + Quote(patch));
  for (const auto& [key, value] : patch.items()) {
    if (value.is_null()) {
      spec->erase(key);
      continue;
    }
    bool nested = false;
    for (std::string_view k : kObjects) nested = nested || key == k;
    if (!nested || !value.is_object()) {
      (*spec)[key] = value;
      continue;
    }
    json& into = (*spec)[key];
    if (into.is_null()) into = json::object();
    if (!into.is_object()) return Expected(key, "an object", into);
    for (const auto& [k, v] : value.items()) {
      if (v.is_null()) {
        into.erase(k);
      } else {
        into[k] = v;
      }
    }
    if (into.empty()) spec->erase(key);
  }
  return Status::Ok();
}

}  // namespace tessera
