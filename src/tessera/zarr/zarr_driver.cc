#include "tessera/zarr/zarr_driver.h"


#include "tessera/codec/registry.h"
#include "tessera/core/chunk_shape.h"
#include "tessera/driver/driver_support.h"
#include "tessera/pyramid/downsample.h"
#include "tessera/pyramid/ome.h"
#include "tessera/spec/spec_error.h"
#include "tessera/zarr/array.h"
#include "tessera/zarr/blosc_settings.h"
#include "tessera/zarr/bfloat16_source.h"
#include "tessera/zarr/element_view_source.h"
#include "tessera/zarr/metadata.h"
#include "tessera/zarr/stored_node.h"
#include "tessera/zarr/string_array.h"
#include "tessera/zarr/zarr_region_target.h"
#include "tessera/zarr/zarr_stream.h"

namespace tessera::zarr {
namespace {

constexpr std::string_view kName = "zarr3";

using driver::Member;

ArrayOptions ToZarrOptions(const ArraySpec& s) {
  ArrayOptions o;
  o.dtype = s.dtype;
  o.shape = s.shape;
  o.chunk_shape = s.chunk_shape;
  o.chunks_per_shard = s.shard_chunks;
  o.codec = std::string(CodecName(*s.codec));
  o.level = s.level;
  o.blosc = s.zarr.blosc;
  o.chunk_codecs = s.zarr.chunk_codecs;
  o.index_location = s.zarr.index_at_start ? IndexLocation::kStart : IndexLocation::kEnd;
  o.fill_value = s.fill_value;
  if (!s.dimension_names.empty()) o.dimension_names = nlohmann::json(s.dimension_names);
  o.attributes = s.attributes;
  return o;
}

// An OME-Zarr image (a group whose `ome.multiscales` lists its levels): the path of level `level`
// and what the description says of the image. Empty path: `location` is a plain array, whose
// zarr.json (read here) is `array_document`.
struct OmeLevel {
  std::string path;
  nlohmann::json description;
  std::optional<nlohmann::json> array_document;
};

// " (it holds cam1, cam2, plate)": the group's child nodes (those with a zarr.json or .zarray /
// .zgroup), the first 20; empty when the store cannot list or holds none.
std::string GroupMembersText(const Store& store) {
  Result<std::vector<std::string>> keys = store.List("");
  if (!keys.ok()) return "";
  std::vector<std::string> members;
  for (const std::string& key : *keys) {
    const size_t slash = key.find('/');
    if (slash == std::string::npos || slash == 0) continue;
    const std::string rest = key.substr(slash + 1);
    if (rest != "zarr.json" && rest != ".zarray" && rest != ".zgroup") continue;
    const std::string name = key.substr(0, slash);
    if (members.empty() || members.back() != name) members.push_back(name);
  }
  if (members.empty()) return "";
  std::string text;
  for (size_t i = 0; i < members.size() && i < 20; ++i) text += (i ? ", " : "") + members[i];
  if (members.size() > 20) text += " and " + std::to_string(members.size() - 20) + " more";
  return " (it holds " + text + ")";
}

Result<OmeLevel> FindOmeLevel(const Store& store, const Location& location, int level) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> bytes, store.Get("zarr.json"));
  std::string where = store.Describe("zarr.json");
  nlohmann::json meta;
  if (bytes) {
    TESSERA_ASSIGN_OR_RETURN(meta, ParseJsonDocument(std::string(bytes->begin(), bytes->end()), where));
  } else {
    // Zarr v2: a group (.zgroup) whose .zattrs may hold OME-Zarr 0.4 multiscales; else an array,
    // which ZarrArray::Open reads (or reports missing).
    TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> group, store.Size(".zgroup"));
    if (!group) return OmeLevel{};
    where = store.Describe(".zattrs");
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> attrs, store.Get(".zattrs"));
    nlohmann::json zattrs = nlohmann::json::object();
    if (attrs) {
      TESSERA_ASSIGN_OR_RETURN(zattrs, ParseJsonDocument(std::string(attrs->begin(), attrs->end()), where));
    }
    // Read as the v3 group of OME-Zarr 0.5 would hold it: multiscales and omero inside `ome`.
    meta = {{"node_type", "group"}, {"attributes", zattrs.is_object() ? zattrs : nlohmann::json::object()}};
    nlohmann::json& attributes = meta["attributes"];
    for (const char* key : {"multiscales", "omero"}) {
      if (!attributes.contains(key)) continue;
      attributes["ome"][key] = attributes[key];
      attributes.erase(key);
    }
  }
  if (!meta.is_object() || !meta.contains("node_type") || meta["node_type"] != "group") {
    if (level != 0) return FieldError(ErrorKind::kInvalidArgument, "level", "" + location.path + " is a single Zarr array (level 0 only)");
    OmeLevel plain;
    plain.array_document = std::move(meta);
    return plain;
  }
  const nlohmann::json* ms = nullptr;
  if (meta.contains("attributes") && meta["attributes"].is_object() && meta["attributes"].contains("ome") &&
      meta["attributes"]["ome"].is_object() && meta["attributes"]["ome"].contains("multiscales"))
    ms = &meta["attributes"]["ome"]["multiscales"];
  if (!ms || !ms->is_array() || ms->empty() || !(*ms)[0].is_object() || !(*ms)[0].contains("datasets") ||
      !(*ms)[0]["datasets"].is_array())
    return InvalidArgument(where + ": a Zarr group without OME-Zarr multiscales metadata; open one of its members" +
                           GroupMembersText(store));
  const nlohmann::json& datasets = (*ms)[0]["datasets"];
  if (level < 0 || level >= static_cast<int>(datasets.size()))
    return FieldError(ErrorKind::kOutOfRange, "level", "" + std::to_string(level) + " is not a level of " + location.path + " (it has " +
                      std::to_string(datasets.size()) + ": 0.." + std::to_string(datasets.size() - 1) + ")");
  const nlohmann::json& ds = datasets[static_cast<size_t>(level)];
  if (!ds.is_object() || !ds.contains("path") || !ds["path"].is_string())
    return InvalidArgument(where + ": multiscales dataset " + std::to_string(level) + " has no path");
  OmeLevel out;
  out.path = ds["path"].get<std::string>();
  out.description = {{"levels", datasets.size()},
                     {"level", level},
                     {"path", out.path},
                     {"axes", (*ms)[0].value("axes", nlohmann::json(nullptr))},
                     {"coordinateTransformations", ds.value("coordinateTransformations", nlohmann::json(nullptr))},
                     {"type", (*ms)[0].value("type", nlohmann::json(nullptr))},
                     {"attributes", pyramid::CallerAttributes(meta["attributes"])}};
  return out;
}

// The compressor (and its level) of a Zarr array's codecs: the bytes->bytes codec of the chunks
// (inside sharding_indexed when sharded). Codecs tessera does not write (and checksums) are left.
void CodecOf(const nlohmann::json& codecs, ArraySpec* s) {
  if (!codecs.is_array()) return;
  s->codec = Codec::kNone;
  for (const nlohmann::json& c : codecs) {
    const nlohmann::json* name = Member(c, "name");
    if (!name || !name->is_string()) continue;
    const nlohmann::json* config = Member(c, "configuration");
    const std::string n = name->get<std::string>();
    if (n == "sharding_indexed" && config) {
      if (const nlohmann::json* inner = Member(*config, "codecs")) CodecOf(*inner, s);
      const nlohmann::json* where = Member(*config, "index_location");
      s->zarr.index_at_start = where && *where == "start";
      return;
    }
    auto level = [&](const char* key) -> std::optional<int> {
      const nlohmann::json* l = config ? Member(*config, key) : nullptr;
      if (l && l->is_number_integer()) return l->get<int>();
      return std::nullopt;
    };
    if (n == "zstd") {
      s->codec = Codec::kZstd;
      s->level = level("level");
    } else if (n == "gzip") {
      s->codec = Codec::kGzip;
      s->level = level("level");
    } else if (n == "blosc") {
      // A blosc codec tessera does not write (snappy, say) is left: the chain is carried as stored.
      if (std::optional<SpelledBlosc> spelled = config ? SpellBlosc(*config, s->dtype) : std::nullopt) {
        s->codec = spelled->codec;
        s->level = spelled->clevel;
        s->zarr.blosc = spelled->blosc;
      }
    }
  }
}

std::string ImageName(const ArraySpec& s, const Location& location) {
  if (!s.ome.name.empty()) return s.ome.name;
  std::string path = location.path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class Driver final : public driver::FormatDriver {
 public:
  Format format() const override { return Format::kZarr3; }
  std::string_view name() const override { return kName; }
  std::vector<std::string_view> aliases() const override { return {"zarr"}; }
  bool single_object() const override { return false; }
  std::string_view stored_as() const override { return "Zarr array (zarr.json, .zarray or .zgroup)"; }

  // A Zarr v3 array or group, or a v2 one (read as v3).
  Result<driver::Detection> Detect(const Location& location) const override {
    return driver::DetectByKeys(location, {"zarr.json", ".zarray", ".zgroup"});
  }

  Result<std::string> DescribeStored(const Location& location) const override {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
    TESSERA_ASSIGN_OR_RETURN(std::optional<StoredNode> node, ReadStoredNode(*store));
    return node ? DescribeStoredNode(*node) : std::string("no Zarr node");
  }

  // An array, or an OME-Zarr image with all its levels (stored_node.h); a plain group is refused.
  Status Remove(const Location& location) const override {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
    TESSERA_ASSIGN_OR_RETURN(std::optional<StoredNode> node, ReadStoredNode(*store));
    if (!node) return Status::Ok();
    return RemoveStoredNode(*store, *node, location.ToString());
  }

  Status ResolveSpec(ArraySpec* s) const override {
    if (!s->codec) s->codec = Codec::kZstd;
    // Codec blosc's settings, checked against the codec and spelled the Zarr way.
    TESSERA_RETURN_IF_ERROR(CheckBloscSettings(CodecName(*s->codec), s->zarr.blosc));
    if (*s->codec == Codec::kBlosc) {
      TESSERA_ASSIGN_OR_RETURN(s->zarr.blosc, CanonicalBloscSettings(s->zarr.blosc));
    }
    if (!s->zarr.chunk_codecs.is_null() && (!s->zarr.chunk_codecs.is_array() || s->zarr.chunk_codecs.empty()))
      return InvalidField("chunk_codecs", "must be a non-empty list of Zarr v3 codecs, not " + s->zarr.chunk_codecs.dump());
    if (s->zarr.index_at_start && s->shard_chunks.empty())
      return InvalidField("index_at_start", "applies to sharded arrays (give shard_chunks)");
    if (s->chunk_shape.empty()) s->chunk_shape = AutoChunkShape(s->shape, s->shape[0] == 0, ItemSize(s->dtype));
    return Status::Ok();
  }

  Status CheckOptionsUnset(const ArraySpec& s, std::string_view writing) const override {
    if (!s.zarr.chunk_codecs.is_null())
      return FieldNotHonoured("chunk_codecs", writing, "takes its own codecs (Zarr v3 codecs are a zarr3 option)");
    if (const BloscSpecOptions& b = s.zarr.blosc; b.given()) {
      const char* field = !b.cname.empty() ? "cname" : !b.shuffle.empty() ? "shuffle" : b.typesize ? "typesize" : "blocksize";
      return FieldNotHonoured(field, writing, "writes no blosc (codec blosc and its settings are zarr3's)");
    }
    if (!(s.zarr == ZarrSpecOptions{}))
      return FieldNotHonoured("index_at_start", writing, "has no shard index (a Zarr v3 option)");
    if (!(s.ome == OmeSpec{})) {
      const char* field = !s.ome.axes.empty()         ? "axes"
                          : !s.ome.voxel_size.empty() ? "voxel_size"
                          : !s.ome.offset.empty()     ? "translation"
                                                      : "pyramid";
      return FieldNotHonoured(field, writing, "is not an OME-Zarr image (a zarr3 option)");
    }
    return Status::Ok();
  }
  void ClearOptions(ArraySpec* s) const override {
    s->zarr = {};
    s->ome = {};
  }

  // A pyramid is an OME-Zarr image; so is a single level asked for as one.
  Status ResolveMultiscale(ArraySpec* s) const override {
    OmeSpec& ome = s->ome;
    const size_t rank = s->shape.size();
    const bool pyramid = s->pyramid.levels != 1;
    if (!ome.image && !pyramid) return Status::Ok();
    ome.image = true;
    if (ome.axes.empty()) ome.axes = pyramid::DefaultOmeAxes(static_cast<int>(rank), s->dimension_names);
    if (ome.axes.size() != rank)
      return InvalidField("axes", std::to_string(ome.axes.size()) + " axes for a rank-" + std::to_string(rank) + " array");
    TESSERA_RETURN_IF_ERROR(pyramid::CheckOmeAxes(ome.axes));
    std::vector<std::string> names;
    for (const pyramid::OmeAxis& a : ome.axes) names.push_back(a.name);
    if (s->dimension_names.empty()) s->dimension_names = names;
    if (s->dimension_names != names)
      return InvalidField("axes", "OME-Zarr requires the arrays' dimension_names to be the axes' names");
    for (const auto& [v, field] : {std::pair{&ome.voxel_size, "voxel_size"}, std::pair{&ome.offset, "translation"}}) {
      if (!v->empty() && v->size() != rank)
        return InvalidField(field, std::to_string(v->size()) + " values for a rank-" + std::to_string(rank) + " array");
    }
    for (double v : ome.voxel_size)
      if (!(v > 0) || !std::isfinite(v)) return InvalidField("voxel_size", "entries must be finite and > 0");
    for (double v : ome.offset)
      if (!std::isfinite(v)) return InvalidField("translation", "entries must be finite");
    if (pyramid && s->pyramid.factors.empty()) s->pyramid.factors = pyramid::DefaultFactors(ome.axes);
    return Status::Ok();
  }

  Location LevelLocation(const Location& root, int level) const override {
    Location where = root;
    where.path.append("/").append(std::to_string(level));
    return where;
  }

  bool HasMultiscaleRoot() const override { return true; }
  Status AbandonMultiscaleRoot(Store& store) const override { return store.Erase("zarr.json"); }
  Status CreateMultiscaleRoot(const ArraySpec& s, const Location& root, Store& store) const override {
    pyramid::OmeImage image;
    image.name = ImageName(s, root);
    image.axes = s.ome.axes;
    image.voxel_size = s.ome.voxel_size;
    image.offset = s.ome.offset;
    image.levels = s.level_count();
    image.factors = s.level_count() > 1 ? s.pyramid.factors : std::vector<int64_t>(s.shape.size(), 1);
    if (s.level_count() > 1) image.method = std::string(pyramid::DownsampleMethodName(*s.pyramid.method));
    // The caller's attributes describe the image (omero's channels above all): the group holds
    // them, not the level arrays (LevelSpec leaves those without).
    return CreateGroup(store, "", pyramid::ImageGroupAttributes(image, s.attributes));
  }

  Status AbandonShared(const ArraySpec& resolved, Store& root) const override {
    Status first = root.Erase("zarr.json");
    if (resolved.multiscale())
      for (int j = 0; j < resolved.level_count(); ++j) {
        Status st = root.Erase(std::to_string(j) + "/zarr.json");
        if (first.ok()) first = st;
      }
    return first;
  }

  void DescribeSpec(const driver::StoredArray& a, ArraySpec* s) const override {
    if (const nlohmann::json* codecs = Member(a.metadata, "codecs")) CodecOf(*codecs, s);
    // A chunk codec chain that codec and level do not spell as stored is carried as it is.
    const nlohmann::json stored = ChunkCodecs(a.metadata);
    if (!stored.is_null()) {
      ArrayOptions spelled;
      spelled.dtype = s->dtype;
      spelled.shape = s->shape;
      spelled.chunk_shape = a.chunk_shape;
      spelled.codec = std::string(CodecName(s->codec.value_or(Codec::kNone)));
      spelled.level = s->level;
      spelled.blosc = s->zarr.blosc;
      Result<ArrayMetadata> m = BuildArrayMetadata(spelled);
      if (!m.ok() || ChunkCodecs(m->ToJson()) != stored) s->zarr.chunk_codecs = stored;
    }
    if (!a.shard_shape.empty()) {
      s->shard_chunks.resize(s->shape.size());
      for (size_t d = 0; d < s->shape.size(); ++d)
        s->shard_chunks[d] = std::max<int64_t>(1, a.shard_shape[d] / a.chunk_shape[d]);
    }
    if (const nlohmann::json* names = Member(a.metadata, "dimension_names"); names && names->is_array()) {
      for (const nlohmann::json& n : *names) s->dimension_names.push_back(n.is_string() ? n.get<std::string>() : "");
      // Unnamed dimensions (null) cannot be carried one by one: all names or none.
      if (std::find(s->dimension_names.begin(), s->dimension_names.end(), "") != s->dimension_names.end())
        s->dimension_names.clear();
    }
    if (const nlohmann::json* attrs = Member(a.metadata, "attributes"); attrs && attrs->is_object())
      s->attributes = *attrs;
    if (const nlohmann::json* ome = Member(a.description, "ome"); ome && ome->is_object()) DescribeImage(*ome, s);
  }

  // A level of an OME-Zarr image (`ome`: its description, FindOmeLevel's) as a new image's level
  // 0: its axes, its scale and translation as the voxel size and offset, and the group's
  // attributes (omero included) over the level array's own.
  static void DescribeImage(const nlohmann::json& ome, ArraySpec* s) {
    const size_t rank = s->shape.size();
    s->ome.image = true;
    std::vector<pyramid::OmeAxis> axes;
    if (const nlohmann::json* stored = Member(ome, "axes"); stored && stored->is_array()) {
      for (const nlohmann::json& a : *stored) {
        const nlohmann::json* name = Member(a, "name");
        const nlohmann::json* type = Member(a, "type");
        const nlohmann::json* unit = Member(a, "unit");
        if (!name || !name->is_string()) break;
        axes.push_back({name->get<std::string>(), type && type->is_string() ? type->get<std::string>() : "space",
                        unit && unit->is_string() ? unit->get<std::string>() : ""});
      }
    }
    // Axes the spec cannot hold as they are (unnamed, too many or few) are not carried at all.
    if (axes.size() == rank) s->ome.axes = std::move(axes);
    if (const nlohmann::json* transforms = Member(ome, "coordinateTransformations"); transforms && transforms->is_array()) {
      for (const nlohmann::json& t : *transforms) {
        const nlohmann::json* type = Member(t, "type");
        if (!type || !type->is_string()) continue;
        const std::string key = type->get<std::string>();
        if (key != "scale" && key != "translation") continue;  // a path to a file of them: not carried
        const nlohmann::json* values = Member(t, key.c_str());
        if (!values || !values->is_array() || values->size() != rank) continue;
        std::vector<double> v;
        for (const nlohmann::json& x : *values) v.push_back(x.is_number() ? x.get<double>() : 0.0);
        (key == "scale" ? s->ome.voxel_size : s->ome.offset) = std::move(v);
      }
    }
    if (const nlohmann::json* group = Member(ome, "attributes"); group && group->is_object())
      for (const auto& [key, value] : group->items()) s->attributes[key] = value;
  }

  Result<driver::OpenedArray> Open(const Location& location, const OpenOptions& options) const override {
    Result<LevelArray> level = OpenLevelArray(location, options, /*writable=*/false);
    if (!level.ok() && level.status().kind() == ErrorKind::kUnsupported) {
      // The fixed-size reader refuses variable-length element types: a string array, perhaps.
      TESSERA_ASSIGN_OR_RETURN(std::optional<driver::OpenedArray> objects, OpenObjectArray(location, options));
      if (objects) return std::move(*objects);
    }
    TESSERA_ASSIGN_OR_RETURN(LevelArray opened, std::move(level));
    OmeLevel& ome = opened.ome;
    std::unique_ptr<ZarrArray>& array = opened.array;
    const ArrayMetadata& m = array->metadata();
    driver::OpenedArray out;
    out.shard_shape = array->sharding() ? m.chunk_shape : std::vector<int64_t>{};
    out.description = {
        {"shard_shape", array->sharding() ? nlohmann::json(m.chunk_shape) : nlohmann::json(nullptr)},
        {"codecs", m.codecs},
        {"chunk_key_encoding", m.chunk_key_encoding.ToJson()},
        {"dimension_names", m.dimension_names ? *m.dimension_names : nlohmann::json(nullptr)}};
    if (!ome.path.empty()) {
      out.level = ome.description["level"].get<int>();
      out.level_count = ome.description["levels"].get<int>();
      out.description["ome"] = std::move(ome.description);
    }
    out.metadata = m.ToJson();
    if (m.fixed) {
      // numpy's S, U and V elements: the code-unit array's trailing dimension, as bytes.
      out.source = ElementBytesSource(std::shared_ptr<const ChunkSource>(std::move(array)),
                                      ElementType{.numpy = m.fixed->NumpyJson(),
                                                  .item_bytes = m.fixed->item_bytes,
                                                  .description = m.fixed->Description(),
                                                  .fill = m.element_fill});
    } else if (m.time) {
      // numpy's datetime64 / timedelta64 are no tessera DataType: an element type over the int64 counts.
      out.source = ElementViewSource(std::shared_ptr<const ChunkSource>(std::move(array)), m.time->Numpy(),
                                     m.time->Description());
    } else if (m.bfloat16) {
      // numpy's bfloat16 is no tessera DataType: an element type over the uint16 bits.
      out.source = BFloat16ElementSource(std::shared_ptr<const ChunkSource>(std::move(array)));
    } else {
      out.source = std::move(array);
    }
    return out;
  }

  // The array of variable-length elements (zarr/string_array.h) `location` and `options` name;
  // nullopt when it is some other array.
  Result<std::optional<driver::OpenedArray>> OpenObjectArray(const Location& location, const OpenOptions& options) const {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
    TESSERA_ASSIGN_OR_RETURN(OmeLevel ome, FindOmeLevel(*store, location, options.level));
    const std::string where = store->Describe(ome.path.empty() ? "zarr.json" : ome.path + "/zarr.json");
    std::unique_ptr<StringArray> strings;
    if (ome.array_document) {
      TESSERA_ASSIGN_OR_RETURN(strings, StringArray::OpenIfVariableLength(store, "", *ome.array_document));
    } else {
      TESSERA_ASSIGN_OR_RETURN(strings, StringArray::OpenIfVariableLength(store, ome.path));
    }
    if (!strings) return std::optional<driver::OpenedArray>();
    driver::OpenedArray out;
    out.description = strings->Description();
    if (out.description["shard_shape"].is_array()) out.shard_shape = out.description["shard_shape"].get<std::vector<int64_t>>();
    if (!ome.path.empty()) {
      out.level = ome.description["level"].get<int>();
      out.level_count = ome.description["levels"].get<int>();
      out.description["ome"] = std::move(ome.description);
    }
    out.metadata = strings->metadata();
    std::shared_ptr<const StringArray> objects = std::move(strings);
    out.source = ObjectArrayPlaceholder(objects, where);
    out.objects = std::move(objects);
    return std::optional<driver::OpenedArray>(std::move(out));
  }

  // The array (or OME-Zarr level) at `location`, written through the region-write engine.
  Result<std::unique_ptr<RegionTarget>> OpenRegionTarget(const Location& location,
                                                         const OpenOptions& options) const override {
    Result<LevelArray> level = OpenLevelArray(location, options, /*writable=*/true);
    if (!level.ok() && level.status().kind() == ErrorKind::kUnsupported) {
      TESSERA_ASSIGN_OR_RETURN(std::optional<driver::OpenedArray> objects, OpenObjectArray(location, options));
      if (objects) {
        return Unsupported(location.ToString() + ": arrays of variable-length elements (" +
                           objects->objects->object_type().name + ") are read-only in tessera");
      }
    }
    TESSERA_ASSIGN_OR_RETURN(LevelArray opened, std::move(level));
    return std::unique_ptr<RegionTarget>(std::make_unique<ZarrRegionTarget>(std::move(opened.array)));
  }

  // A v3 array's chunk codecs: the inner chain of one sharding_indexed codec, else its codecs (a
  // sharding codec chained with others encodes whole shards: null).
  nlohmann::json ChunkCodecs(const nlohmann::json& metadata) const override {
    const nlohmann::json* format = Member(metadata, "zarr_format");
    const nlohmann::json* codecs = Member(metadata, "codecs");
    if (!format || *format != 3 || !codecs || !codecs->is_array()) return nullptr;
    for (const nlohmann::json& c : *codecs) {
      if (!c.is_object() || c.value("name", "") != "sharding_indexed") continue;
      if (codecs->size() != 1) return nullptr;
      const nlohmann::json* config = Member(c, "configuration");
      const nlohmann::json* inner = config ? Member(*config, "codecs") : nullptr;
      return inner ? *inner : nlohmann::json(nullptr);
    }
    return *codecs;
  }

  nlohmann::json ChunkCodecsOfSpec(const ArraySpec& spec) const override {
    Result<ArrayMetadata> m = BuildArrayMetadata(ToZarrOptions(spec));
    return m.ok() ? ChunkCodecs(m->ToJson()) : nlohmann::json(nullptr);
  }

  // The array over its store before its zarr.json exists; each publication writes zarr.json with
  // the rows published (the last: the whole shape, as a closed stream leaves it).
  Result<driver::CopyTarget> OpenCopyTarget(const ArraySpec& spec, const Location& location) const override {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/true));
    TESSERA_ASSIGN_OR_RETURN(ArrayMetadata whole, BuildArrayMetadata(ToZarrOptions(spec)));
    // Validated as Open would read it.
    TESSERA_ASSIGN_OR_RETURN(ArrayMetadata checked, ArrayMetadata::FromJson(whole.ToJson()));
    TESSERA_ASSIGN_OR_RETURN(CodecChain codecs,
                             ParseCodecChain(checked.codecs, ChunkSpec{checked.dtype, checked.chunk_shape, checked.fill_value}));
    driver::CopyTarget out;
    out.target = std::make_unique<ZarrRegionTarget>(ZarrArray::Attach(store, "", checked, std::move(codecs)));
    out.publish_rows = [store, whole](int64_t rows) -> Status {
      ArrayMetadata m = whole;
      m.shape[0] = rows;
      return ZarrArray::Create(store, "", std::move(m)).status();
    };
    return out;
  }

  // The array `location` and `options` name: an OME-Zarr image's level options.level, or the array
  // itself. `writable`: Zarr v2 arrays are refused, since their chunks would be written with v3 codecs.
  struct LevelArray {
    OmeLevel ome;
    std::unique_ptr<ZarrArray> array;
  };
  Result<LevelArray> OpenLevelArray(const Location& location, const OpenOptions& options, bool writable) const {
    if (options.scale != 0)
      return FieldError(ErrorKind::kInvalidArgument, "scale", "applies to precomputed volumes only; " + location.path + " is zarr3");
    if (!options.dataset.empty())
      return FieldError(ErrorKind::kInvalidArgument, "dataset", "applies to HDF5 files only; " + location.path + " is zarr3");
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
    LevelArray out;
    TESSERA_ASSIGN_OR_RETURN(out.ome, FindOmeLevel(*store, location, options.level));
    if (writable && !out.ome.array_document) {
      const std::string& path = out.ome.path;
      TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> v3, store->Size(path.empty() ? "zarr.json" : path + "/zarr.json"));
      if (!v3)
        return Unsupported(store->Describe(path.empty() ? ".zarray" : path + "/.zarray") +
                           ": Zarr v2 arrays are read only (convert it to Zarr v3 to write to it)");
    }
    TESSERA_ASSIGN_OR_RETURN(out.array, out.ome.array_document ? ZarrArray::Open(store, "", *out.ome.array_document)
                                                               : ZarrArray::Open(store, out.ome.path));
    if (writable && out.array->metadata().bfloat16) {
      const std::string& path = out.ome.path;
      return Unsupported(store->Describe(path.empty() ? "zarr.json" : path + "/zarr.json") +
                         ": data_type bfloat16 arrays are read-only in tessera (open them with mode r)");
    }
    if (writable && out.array->metadata().fixed) {
      const std::string& path = out.ome.path;
      return Unsupported(store->Describe(path.empty() ? "zarr.json" : path + "/zarr.json") + ": data_type " +
                         out.array->metadata().fixed->Description() +
                         " arrays are read-only in tessera (open them with mode r)");
    }
    if (writable && out.array->metadata().time) {
      const std::string& path = out.ome.path;
      return Unsupported(store->Describe(path.empty() ? "zarr.json" : path + "/zarr.json") + ": data_type " +
                         out.array->metadata().time->Description() +
                         " arrays are read-only in tessera (open them with mode r)");
    }
    return out;
  }

  Result<stream::StreamLayout> Plan(const ArraySpec& spec, int threads) const override {
    return PlanZarrStream(ToZarrOptions(spec), threads);
  }

  Result<driver::FormatWriter> OpenWriter(const ArraySpec& spec, const Location& location,
                                          const driver::WriterSettings& settings) const override {
    int64_t queue_bytes = 0;
    TESSERA_ASSIGN_OR_RETURN(
        std::shared_ptr<Store> store,
        driver::OpenStreamStore(location, settings, [&] { return Plan(spec, settings.threads); }, &queue_bytes));
    TESSERA_ASSIGN_OR_RETURN(ZarrSinkAndWriter zs, OpenZarrStream(store, "", ToZarrOptions(spec),
                                                           driver::StreamWriterOptionsOf(settings)));
    // The array exists (and a store that refuses writes says so) when the stream opens.
    TESSERA_RETURN_IF_ERROR(store->Flush());
    ZarrShardSink* sink = zs.sink.get();  // owned by the writer's keep_alive, as long as the lambda
    driver::FormatWriter w =
        driver::HoldStream(std::move(zs), store, queue_bytes, [](ZarrSinkAndWriter&) { return Status::Ok(); });
    w.set_attributes = [sink](const nlohmann::json& attributes) { return sink->PublishAttributes(attributes); };
    return w;
  }

  Result<driver::FormatWriter> OpenRegionWriter(const ArraySpec& array, const ArraySpec& region,
                                                const Location& location, const driver::WriterSettings& settings,
                                                std::vector<int64_t> shard_offset) const override {
    int64_t queue_bytes = 0;
    TESSERA_ASSIGN_OR_RETURN(
        std::shared_ptr<Store> store,
        driver::OpenStreamStore(location, settings, [&] { return Plan(region, settings.threads); }, &queue_bytes));
    TESSERA_ASSIGN_OR_RETURN(ZarrSinkAndWriter zs,
                             OpenZarrRegionStream(store, "", ToZarrOptions(array), ToZarrOptions(region),
                                                  std::move(shard_offset), driver::StreamWriterOptionsOf(settings)));
    return driver::HoldRegionStream(std::move(zs), std::move(store), queue_bytes);
  }

  // An OME-Zarr image tessera wrote: its levels, and the method and factors its multiscales'
  // "type" and "metadata" record.
  Result<PyramidSpec> StoredPyramid(const Location& location) const override {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> bytes, store->Get("zarr.json"));
    const std::string where = store->Describe("zarr.json");
    if (!bytes) return NotFound(where + ": no OME-Zarr group here");
    TESSERA_ASSIGN_OR_RETURN(nlohmann::json group, ParseJsonDocument(std::string(bytes->begin(), bytes->end()), where));
    if (const nlohmann::json* node = Member(group, "node_type"); node && *node == "array")
      return NotFound(where + ": an array, not an OME-Zarr image");
    const nlohmann::json* attributes = Member(group, "attributes");
    const nlohmann::json* ome = attributes ? Member(*attributes, "ome") : nullptr;
    const nlohmann::json* all = ome ? Member(*ome, "multiscales") : nullptr;
    const nlohmann::json* ms = all && all->is_array() && !all->empty() ? &(*all)[0] : nullptr;
    const nlohmann::json* datasets = ms ? Member(*ms, "datasets") : nullptr;
    const nlohmann::json* type = ms ? Member(*ms, "type") : nullptr;
    const nlohmann::json* metadata = ms ? Member(*ms, "metadata") : nullptr;
    const nlohmann::json* factors = metadata ? Member(*metadata, "factors") : nullptr;
    if (datasets && datasets->is_array() && datasets->size() == 1) {
      PyramidSpec single;  // one level: nothing is downsampled
      single.levels = 1;
      return single;
    }
    if (!datasets || !datasets->is_array() || !type || !type->is_string() || !factors || !factors->is_array())
      return Unsupported(where + ": an OME-Zarr image without the downsampling tessera records (multiscales "
                         "\"type\" and \"metadata\".factors); continuing it (mode a) is not supported");
    PyramidSpec p;
    p.levels = static_cast<int>(datasets->size());
    TESSERA_ASSIGN_OR_RETURN(p.method, pyramid::ParseDownsampleMethod(type->get<std::string>()));
    for (const nlohmann::json& f : *factors) {
      if (!f.is_number_integer()) return CorruptData(where + ": multiscales metadata.factors: not integers");
      p.factors.push_back(f.get<int64_t>());
    }
    return p;
  }

  Result<driver::FormatWriter> OpenAppendWriter(const ArraySpec& spec, const Location& location,
                                                const driver::WriterSettings& settings, int64_t first_row,
                                                int64_t stored_rows) const override {
    int64_t queue_bytes = 0;
    TESSERA_ASSIGN_OR_RETURN(
        std::shared_ptr<Store> store,
        driver::OpenStreamStore(location, settings, [&] { return Plan(spec, settings.threads); }, &queue_bytes));
    ArrayOptions rows = ToZarrOptions(spec);  // the writer's rows: from first_row on
    if (rows.shape[0] > 0) rows.shape[0] -= first_row;
    TESSERA_ASSIGN_OR_RETURN(ZarrSinkAndWriter zs, OpenZarrAppendStream(store, "", rows, first_row, stored_rows,
                                                                 driver::StreamWriterOptionsOf(settings)));
    return driver::HoldStream(std::move(zs), store, queue_bytes, [](ZarrSinkAndWriter&) { return Status::Ok(); });
  }

  Status CreateMetadata(const ArraySpec& spec, const Location& location) const override {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/true));
    TESSERA_ASSIGN_OR_RETURN(ArrayMetadata m, BuildArrayMetadata(ToZarrOptions(spec)));
    return ZarrArray::Create(store, "", std::move(m)).status();
  }
};

}  // namespace

const driver::FormatDriver& ZarrDriver() {
  static const Driver driver;
  return driver;
}

}  // namespace tessera::zarr
