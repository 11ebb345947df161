#include "tessera/api/acquisition.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "tessera/api/create_mode.h"
#include "tessera/api/driver_registry.h"
#include "tessera/api/pyramid_stream.h"
#include "tessera/api/stream_lifecycle.h"
#include "tessera/store/location.h"
#include "tessera/zarr/array.h"

namespace tessera {

namespace {

std::string Mib(int64_t bytes) {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

bool IsNameCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.';
}

// "a/b/c": components of name characters, none empty, "." or "..", none starting with "__"
// (Zarr v3 reserves those).
Status CheckKey(const std::string& key, const char* what) {
  if (key.empty()) return InvalidArgument(std::string(what) + ": must not be empty").WithField(what);
  size_t begin = 0;
  for (;;) {
    const size_t end = std::min(key.find('/', begin), key.size());
    const std::string part = key.substr(begin, end - begin);
    const bool ok = !part.empty() && part != "." && part != ".." && part.rfind("__", 0) != 0 &&
                    std::all_of(part.begin(), part.end(), IsNameCharacter);
    if (!ok)
      return InvalidArgument(std::string(what) + ": \"" + key +
                             "\" is not a path of names (letters, digits, '_', '-', '.'; separated by '/')")
          .WithField(what);
    if (end == key.size()) return Status::Ok();
    begin = end + 1;
  }
}

std::string Parent(const std::string& key) {
  const size_t slash = key.rfind('/');
  return slash == std::string::npos ? std::string() : key.substr(0, slash);
}

bool IsUnder(const std::string& key, const std::string& ancestor) {
  return ancestor.empty() || (key.size() > ancestor.size() && key.compare(0, ancestor.size(), ancestor) == 0 &&
                              key[ancestor.size()] == '/');
}

// A group's attributes: the caller's, with the OME-Zarr metadata tessera keeps for it (`fixed`,
// {"ome": {...}}) laid over them; the caller's other "ome" members stay beside it.
nlohmann::json GroupAttributes(const nlohmann::json& fixed, const nlohmann::json& caller) {
  nlohmann::json out = caller;
  for (const auto& [name, value] : fixed.items()) {
    if (name == "ome" && value.is_object() && out.contains("ome") && out["ome"].is_object()) {
      for (const auto& [member, v] : value.items()) out["ome"][member] = v;
    } else {
      out[name] = value;
    }
  }
  return out;
}

// Makes the root ready for a new acquisition: refuses anything there (w-), or (w) removes an array
// tessera recognises or a Zarr group hierarchy (an earlier acquisition), its zarr.json first so
// nothing half-removed looks valid.
Status PrepareRoot(const Location& root, Format format, Mode mode) {
  if (mode != Mode::kOverwrite || format != Format::kZarr3) return api_internal::PrepareToCreate(root, format, mode);
  Result<std::shared_ptr<Store>> opened = OpenLocationStore(root, /*create=*/false);
  if (!opened.ok()) return api_internal::PrepareToCreate(root, format, mode);
  const std::shared_ptr<Store> store = *opened;
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> meta, store->Get("zarr.json"));
  const nlohmann::json group =
      meta ? nlohmann::json::parse(meta->begin(), meta->end(), nullptr, /*allow_exceptions=*/false) : nlohmann::json();
  if (!group.is_object() || group.value("node_type", "") != "group" ||
      group.value("attributes", nlohmann::json::object()).contains("ome"))  // an OME image: the drivers replace it
    return api_internal::PrepareToCreate(root, format, mode);
  TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> keys, store->List(""));
  TESSERA_RETURN_IF_ERROR(store->Erase("zarr.json"));
  for (const std::string& key : keys)
    if (key != "zarr.json") TESSERA_RETURN_IF_ERROR(store->Erase(key));
  if (root.is_file()) {
    std::error_code ec;
    std::filesystem::remove_all(root.path, ec);
  }
  return Status::Ok();
}

}  // namespace

struct Acquisition::Impl {
  struct Group {
    nlohmann::json fixed = nlohmann::json::object();   // OME-Zarr metadata tessera writes
    nlohmann::json caller = nlohmann::json::object();  // the caller's attributes (SetAttributes)
    bool dirty = false;                                // changed since it was last written
  };
  struct Array {
    std::string key;
    std::unique_ptr<Stream> stream;
    int64_t planned_peak = 0;
  };
  struct Plate {
    pyramid::OmePlate plate;
    std::vector<pyramid::OmeWell> wells;
    std::map<std::string, std::vector<pyramid::OmeWellImage>> images;  // by well path "A/1"
  };

  std::string root_text;
  Location root;
  Format format = Format::kZarr3;
  AcquisitionOptions options;
  std::shared_ptr<WorkerPool> pool;
  std::shared_ptr<Store> store;                // zarr3: the root's
  // A format stored as one object (HDF5): the one file of all arrays (the driver's
  // CreateMultiArrayFile); null where each array is a stream of its own under the root.
  std::unique_ptr<driver::MultiArrayFile> file;
  std::map<std::string, Group> groups;
  std::vector<Array> arrays;
  std::map<std::string, std::vector<std::string>> labels;  // image key -> its label images' names
  std::map<std::string, Plate> plates;
  int64_t planned_peak = 0;
  enum class State { kOpen, kClosed, kFailed } state = State::kOpen;

  bool has_groups() const { return format == Format::kZarr3; }

  Status CheckOpen(const char* call) const {
    if (state == State::kOpen) return Status::Ok();
    return FailedPrecondition(std::string(call) + (state == State::kClosed
                                                       ? ": the acquisition is closed"
                                                       : ": the acquisition was aborted (after an error or Abort)"));
  }

  // Any error ends the acquisition: every array keeps what it published.
  Status Fail(Status st) {
    if (!st.ok()) AbortAll();
    return st;
  }

  void AbortAll() {
    if (state != State::kOpen) return;
    state = State::kFailed;
    for (auto it = arrays.rbegin(); it != arrays.rend(); ++it) it->stream->Abort();
    if (file) file->Abandon();
  }

  Array* FindArray(const std::string& key) {
    for (Array& a : arrays)
      if (a.key == key) return &a;
    return nullptr;
  }

  std::string ArrayLocation(const std::string& key) const { return root_text + "/" + key; }

  Status WriteGroup(const std::string& path) {
    Group& g = groups[path];
    TESSERA_RETURN_IF_ERROR(zarr::CreateGroup(*store, path, GroupAttributes(g.fixed, g.caller)));
    g.dirty = false;
    return Status::Ok();
  }

  // Where a new node `key` may go: not at or under an array (an OME image holds only its levels
  // and its labels), not where a group is.
  Status CheckPlace(const std::string& key, bool labels_of_image) const {
    for (const Array& a : arrays) {
      if (a.key == key) return AlreadyExists("\"" + key + "\": the acquisition has an array there");
      if (IsUnder(a.key, key)) return AlreadyExists("\"" + key + "\": the acquisition has the array \"" + a.key + "\" under it");
      if (IsUnder(key, a.key) && !(labels_of_image && IsUnder(key, a.key + "/labels")))
        return InvalidArgument("\"" + key + "\": lies inside the array \"" + a.key + "\"");
    }
    if (groups.count(key)) return AlreadyExists("\"" + key + "\": the acquisition has a group there");
    return Status::Ok();
  }

  // The groups on the way to `key` that do not exist yet, written outermost first.
  Status WriteParents(const std::string& key) {
    if (!has_groups()) return Status::Ok();
    std::vector<std::string> missing;
    for (std::string p = Parent(key); !p.empty() && !groups.count(p); p = Parent(p)) missing.push_back(p);
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) TESSERA_RETURN_IF_ERROR(WriteGroup(*it));
    return Status::Ok();
  }

  // The planned peak of a new array and the budget's verdict.
  Result<int64_t> Admit(const std::string& key, const ArraySpec& spec) {
    TESSERA_ASSIGN_OR_RETURN(const ArraySpec resolved, ResolveSpec(spec, format));
    TESSERA_ASSIGN_OR_RETURN(const int64_t peak, api_internal::PlannedPeakBytes(format, resolved, pool->size(),
                                                                               options.input_buffers));
    const int64_t limit = options.memory_limit;
    if (limit > 0 && planned_peak + peak > limit)
      return Status(ErrorKind::kOutOfResources, "memory_limit: the array \"" + key + "\" plans " + Mib(peak) + "; with the " +
                               Mib(planned_peak) + " the acquisition's " + std::to_string(arrays.size()) +
                               " arrays plan, that is " + Mib(planned_peak + peak) + ", over the limit of " +
                               Mib(limit))
          .WithField("memory_limit");
    return peak;
  }

  Result<Stream*> Open(const std::string& key, const ArraySpec& spec, int64_t peak) {
    StreamOptions so;
    so.format = format;
    so.pool = pool;
    so.backend = options.backend;
    so.mode = Mode::kCreate;
    so.input_buffers = options.input_buffers;
    so.storage = options.storage;
    std::unique_ptr<Stream> stream;
    if (file) {
      // An array of the acquisition's one file.
      TESSERA_ASSIGN_OR_RETURN(const ArraySpec resolved, ResolveSpec(spec, format));
      TESSERA_ASSIGN_OR_RETURN(driver::FormatWriter w,
                               file->OpenArray(resolved, "/" + key, api_internal::SettingsOf(so, pool->size())));
      if (resolved.reorders_arrival()) {
        // As OpenLevelWriter does for a stream of its own: the input is scattered in its order.
        if (Status st = w.writer->SetArrivalOrder(resolved.arrival_order); !st.ok()) {
          w.writer->Abort();
          if (w.abandon) w.abandon();
          return st;
        }
      }
      stream = api_internal::MakeFormatStream(format, resolved, pool->size(), std::move(w));
    } else {
      TESSERA_ASSIGN_OR_RETURN(stream, CreateStream(ArrayLocation(key), spec, so));
    }
    arrays.push_back(Array{key, std::move(stream), peak});
    planned_peak += peak;
    return arrays.back().stream.get();
  }
};

Acquisition::Acquisition(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Acquisition::~Acquisition() { Abort(); }

Result<std::unique_ptr<Acquisition>> Acquisition::Create(const std::string& root, const AcquisitionOptions& options) {
  auto impl = std::make_unique<Impl>();
  TESSERA_ASSIGN_OR_RETURN(impl->root, ParseLocation(root, options.storage));
  impl->root_text = root;
  while (impl->root_text.size() > 1 && impl->root_text.back() == '/') impl->root_text.pop_back();
  impl->format = options.format ? *options.format : FormatFromName(impl->root);
  impl->options = options;
  if (options.threads < 0)
    return InvalidArgument("threads: must be >= 0 (0: hardware threads), not " + std::to_string(options.threads))
        .WithField("threads");
  if (options.input_buffers != 1 && options.input_buffers != 2)
    return InvalidArgument("input_buffers: 1 or 2, not " + std::to_string(options.input_buffers)).WithField("input_buffers");
  if (options.memory_limit < 0)
    return InvalidArgument("memory_limit: must be >= 0 (0: none)").WithField("memory_limit");
  if (!options.attributes.is_object())
    return InvalidArgument("attributes: must be a JSON object").WithField("attributes");
  if (options.mode != Mode::kCreate && options.mode != Mode::kOverwrite)
    return InvalidArgument("mode " + std::string(ModeName(options.mode)) + ": an acquisition creates (w-, w)")
        .WithField("mode");
  // What is at the root is refused (w-) or removed (w): a whole group hierarchy too, under w.
  TESSERA_RETURN_IF_ERROR(PrepareRoot(impl->root, impl->format, options.mode));
  impl->pool = std::make_shared<WorkerPool>(options.threads);
  TESSERA_ASSIGN_OR_RETURN(impl->file, DriverOf(impl->format).CreateMultiArrayFile(impl->root));
  if (impl->file) {
    if (!options.attributes.empty()) TESSERA_RETURN_IF_ERROR(impl->file->SetAttributes("/", options.attributes));
    return std::unique_ptr<Acquisition>(new Acquisition(std::move(impl)));
  }
  TESSERA_ASSIGN_OR_RETURN(impl->store, OpenLocationStore(impl->root, /*create=*/true));
  if (impl->has_groups()) {
    impl->groups[""].caller = options.attributes;
    TESSERA_RETURN_IF_ERROR(impl->WriteGroup(""));
  } else if (!options.attributes.empty()) {
    return Unsupported("attributes: " + std::string(FormatName(impl->format)) + " has no groups to hold them")
        .WithField("attributes");
  }
  return std::unique_ptr<Acquisition>(new Acquisition(std::move(impl)));
}

Result<Stream*> Acquisition::CreateArray(const std::string& key, const ArraySpec& spec,
                                         std::optional<int> acquisition) {
  Impl& m = *impl_;
  TESSERA_RETURN_IF_ERROR(m.CheckOpen("CreateArray"));
  TESSERA_RETURN_IF_ERROR(CheckKey(key, "key"));
  TESSERA_RETURN_IF_ERROR(m.CheckPlace(key, /*labels_of_image=*/false));
  // A field of view of a plate: an OME image in a well, listed by the well and the plate.
  Impl::Plate* plate = nullptr;
  pyramid::OmeFieldPath field;
  std::string plate_key;
  for (auto& [k, p] : m.plates)
    if (IsUnder(key, k)) plate = &p, plate_key = k;
  ArraySpec s = spec;
  std::vector<pyramid::OmeWellImage> well_images;
  std::string well_key;
  if (plate) {
    TESSERA_ASSIGN_OR_RETURN(field, pyramid::ParseFieldPath(plate->plate, key.substr(plate_key.size() + 1)));
    well_key = Parent(key);
    well_images = plate->images[well_key.substr(plate_key.size() + 1)];
    well_images.push_back({field.field, acquisition});
    TESSERA_RETURN_IF_ERROR(pyramid::CheckWell(plate->plate, well_images));
    s.ome.image = true;
  } else if (acquisition) {
    return InvalidArgument("acquisition: \"" + key + "\" is not a field of view of a plate").WithField("acquisition");
  }
  TESSERA_ASSIGN_OR_RETURN(const int64_t peak, m.Admit(key, s));
  TESSERA_RETURN_IF_ERROR(m.Fail(m.WriteParents(key)));
  TESSERA_ASSIGN_OR_RETURN(Stream * stream, m.Open(key, s, peak));
  if (plate) {
    // The image exists before the well lists it, and the well before the plate does: a reader
    // that follows the lists finds every node they name.
    const std::string rel_well = well_key.substr(plate_key.size() + 1);
    plate->images[rel_well] = well_images;
    m.groups[well_key].fixed = pyramid::WellAttributes(well_images);
    TESSERA_RETURN_IF_ERROR(m.Fail(m.WriteGroup(well_key)));
    if (std::find(plate->wells.begin(), plate->wells.end(), field.well) == plate->wells.end()) {
      plate->wells.push_back(field.well);
      m.groups[plate_key].fixed = pyramid::PlateAttributes(plate->plate, plate->wells);
      TESSERA_RETURN_IF_ERROR(m.Fail(m.WriteGroup(plate_key)));
    }
  }
  return stream;
}

Result<Stream*> Acquisition::CreateLabels(const std::string& image_key, const std::string& name,
                                          const ArraySpec& spec, const pyramid::OmeImageLabel& label) {
  Impl& m = *impl_;
  TESSERA_RETURN_IF_ERROR(m.CheckOpen("CreateLabels"));
  if (!m.has_groups())
    return Unsupported("labels: " + std::string(FormatName(m.format)) + " has no OME-Zarr label images");
  TESSERA_RETURN_IF_ERROR(CheckKey(name, "name"));
  if (name.find('/') != std::string::npos) return InvalidArgument("name: \"" + name + "\" must be one name").WithField("name");
  Impl::Array* image = m.FindArray(image_key);
  if (!image || !image->stream->spec().multiscale())
    return NotFound("image_key: \"" + image_key + "\" is not an OME-Zarr image of the acquisition").WithField("image_key");
  TESSERA_RETURN_IF_ERROR(pyramid::CheckImageLabel(label));
  const std::string labels_key = image_key + "/labels";
  const std::string key = labels_key + "/" + name;
  TESSERA_RETURN_IF_ERROR(m.CheckPlace(key, /*labels_of_image=*/true));
  // A label image: an OME image with the image's levels, reduced by mode (a label is a category:
  // its mean is another label), unless the caller chose otherwise.
  const ArraySpec& img = image->stream->spec();
  ArraySpec s = spec;
  s.ome.image = true;
  // The label's dimensions are the image's, or the image's without its channel axis (labels
  // (t, z, y, x) of a (t, c, z, y, x) image): those take the image's axes, voxel size, translation
  // and factors unless the caller gave them.
  std::vector<size_t> same;  // the image dimension of each label dimension
  const size_t rank = spec.shape.size(), image_rank = img.shape.size();
  for (size_t d = 0; d < image_rank; ++d)
    if (rank == image_rank || (rank + 1 == image_rank && d < img.ome.axes.size() && img.ome.axes[d].type != "channel"))
      same.push_back(d);
  if (same.size() == rank) {
    auto pick = [&](const auto& values) {
      std::decay_t<decltype(values)> out;
      if (values.size() == image_rank)
        for (size_t d : same) out.push_back(values[d]);
      return out;
    };
    if (s.ome.axes.empty()) s.ome.axes = pick(img.ome.axes);
    if (s.ome.voxel_size.empty()) s.ome.voxel_size = pick(img.ome.voxel_size);
    if (s.ome.offset.empty()) s.ome.offset = pick(img.ome.offset);
    if (s.pyramid.factors.empty() && s.pyramid.levels == 1) s.pyramid.factors = pick(img.pyramid.factors);
  }
  if (s.pyramid.levels == 1 && img.level_count() > 1) s.pyramid.levels = img.level_count();
  if (!s.pyramid.method) s.pyramid.method = pyramid::DownsampleMethod::kMode;
  if (!s.attributes.is_object()) return InvalidArgument("attributes: must be a JSON object").WithField("attributes");
  s.attributes["ome"]["image-label"] = pyramid::ImageLabelMember(label);
  TESSERA_ASSIGN_OR_RETURN(const int64_t peak, m.Admit(key, s));
  if (!m.groups.count(labels_key)) {
    // The labels group holds no list until its first label image exists.
    m.groups[labels_key];
    TESSERA_RETURN_IF_ERROR(m.Fail(m.WriteGroup(labels_key)));
  }
  TESSERA_ASSIGN_OR_RETURN(Stream * stream, m.Open(key, s, peak));
  std::vector<std::string>& names = m.labels[image_key];
  names.push_back(name);
  m.groups[labels_key].fixed = pyramid::LabelsGroupAttributes(names);
  TESSERA_RETURN_IF_ERROR(m.Fail(m.WriteGroup(labels_key)));
  return stream;
}

Status Acquisition::CreatePlate(const std::string& key, const pyramid::OmePlate& plate) {
  Impl& m = *impl_;
  TESSERA_RETURN_IF_ERROR(m.CheckOpen("CreatePlate"));
  if (!m.has_groups()) return Unsupported("plate: " + std::string(FormatName(m.format)) + " has no OME-Zarr plates");
  TESSERA_RETURN_IF_ERROR(CheckKey(key, "key"));
  TESSERA_RETURN_IF_ERROR(m.CheckPlace(key, false));
  for (const auto& [k, p] : m.plates)
    if (IsUnder(key, k) || IsUnder(k, key)) return InvalidArgument("key: \"" + key + "\" would nest in the plate \"" + k + "\"");
  for (const auto& [k, g] : m.groups)
    if (IsUnder(k, key)) return AlreadyExists("\"" + key + "\": the acquisition has the group \"" + k + "\" under it");
  TESSERA_RETURN_IF_ERROR(pyramid::CheckPlate(plate));
  TESSERA_RETURN_IF_ERROR(m.Fail(m.WriteParents(key)));
  m.plates[key].plate = plate;
  m.groups[key].fixed = pyramid::PlateAttributes(plate, {});
  return m.Fail(m.WriteGroup(key));
}

Status Acquisition::SetAttributes(const std::string& path, nlohmann::json attributes) {
  Impl& m = *impl_;
  TESSERA_RETURN_IF_ERROR(m.CheckOpen("SetAttributes"));
  if (!attributes.is_object())
    return InvalidArgument("attributes: must be a JSON object, not " + std::string(attributes.type_name()))
        .WithField("attributes");
  if (m.file) {
    // Written with the file at Close.
    const std::string node = "/" + path;
    if (m.FindArray(path) && m.FindArray(path)->stream->state() != StreamState::kOpen)
      return FailedPrecondition("SetAttributes: the dataset \"" + path + "\" is closed");
    return m.Fail(m.file->SetAttributes(node, attributes));
  }
  if (Impl::Array* a = m.FindArray(path)) return a->stream->SetAttributes(std::move(attributes));
  auto g = m.groups.find(path);
  if (g == m.groups.end()) {
    std::string known;
    for (const Impl::Array& a : m.arrays) known += (known.empty() ? "" : ", ") + ("\"" + a.key + "\"");
    for (const auto& [k, unused] : m.groups) known += (known.empty() ? "" : ", ") + ("\"" + k + "\"");
    return NotFound("path: \"" + path + "\" is no array or group of the acquisition (it has " + known + ")")
        .WithField("path");
  }
  g->second.caller = std::move(attributes);
  g->second.dirty = true;
  return Status::Ok();
}

Stream* Acquisition::Find(const std::string& key) const {
  for (const Impl::Array& a : impl_->arrays)
    if (a.key == key) return a.stream.get();
  return nullptr;
}

std::vector<std::string> Acquisition::keys() const {
  std::vector<std::string> out;
  for (const Impl::Array& a : impl_->arrays) out.push_back(a.key);
  return out;
}

Status Acquisition::Append(const std::string& key, ByteView bytes) {
  TESSERA_RETURN_IF_ERROR(impl_->CheckOpen("Append"));
  Stream* s = Find(key);
  if (!s) return NotFound("key: \"" + key + "\" is no array of the acquisition").WithField("key");
  return impl_->Fail(s->Append(bytes));
}

Status Acquisition::Flush() {
  Impl& m = *impl_;
  TESSERA_RETURN_IF_ERROR(m.CheckOpen("Flush"));
  // An array that failed (an error from its own stream's call) ends the acquisition here.
  std::string aborted;
  for (const Impl::Array& a : m.arrays)
    if (a.stream->state() == StreamState::kAborted) aborted += (aborted.empty() ? "\"" : ", \"") + a.key + "\"";
  if (!aborted.empty())
    return m.Fail(FailedPrecondition("Flush: the arrays " + aborted +
                                     " were aborted (after an error or Abort); the acquisition ends, each array "
                                     "keeping what it published"));
  for (Impl::Array& a : m.arrays)
    if (a.stream->state() == StreamState::kOpen) TESSERA_RETURN_IF_ERROR(m.Fail(a.stream->Flush()));
  for (auto& [path, g] : m.groups)
    if (g.dirty) TESSERA_RETURN_IF_ERROR(m.Fail(m.WriteGroup(path)));
  return m.store ? m.Fail(m.store->Flush()) : Status::Ok();
}

Status Acquisition::Close() {
  Impl& m = *impl_;
  TESSERA_RETURN_IF_ERROR(m.CheckOpen("Close"));
  std::string aborted;
  for (Impl::Array& a : m.arrays) {
    if (a.stream->state() == StreamState::kOpen) TESSERA_RETURN_IF_ERROR(m.Fail(a.stream->Close()));
    if (a.stream->state() == StreamState::kAborted) aborted += (aborted.empty() ? "\"" : ", \"") + a.key + "\"";
  }
  for (auto& [path, g] : m.groups)
    if (g.dirty) TESSERA_RETURN_IF_ERROR(m.Fail(m.WriteGroup(path)));
  if (m.store) TESSERA_RETURN_IF_ERROR(m.Fail(m.store->Flush()));
  if (m.file && aborted.empty()) TESSERA_RETURN_IF_ERROR(m.Fail(m.file->Close()));
  if (!aborted.empty()) {
    m.AbortAll();  // an HDF5 file is not written: one of its datasets is incomplete
    return FailedPrecondition("Close: the arrays " + aborted +
                              " were aborted before the acquisition closed; they keep what they published");
  }
  m.state = Impl::State::kClosed;
  return Status::Ok();
}

void Acquisition::Abort() { impl_->AbortAll(); }

Format Acquisition::format() const { return impl_->format; }

int64_t Acquisition::planned_peak_bytes() const { return impl_->planned_peak; }

std::string Acquisition::DescribePlan() const {
  const Impl& m = *impl_;
  std::string text = "acquisition " + m.root_text + " (" + std::string(FormatName(m.format)) + "): " +
                     std::to_string(m.arrays.size()) + " arrays, one pool of " + std::to_string(m.pool->size()) +
                     " compression threads\n";
  for (const Impl::Array& a : m.arrays) {
    text += "array \"" + a.key + "\" (planned peak " + Mib(a.planned_peak) + "):\n";
    const std::string plan = a.stream->DescribePlan();
    size_t begin = 0;
    while (begin < plan.size()) {
      const size_t end = std::min(plan.find('\n', begin), plan.size());
      text += "  " + plan.substr(begin, end - begin) + "\n";
      begin = end + 1;
    }
  }
  text += "planned peak, all arrays: " + Mib(m.planned_peak) +
          (m.options.memory_limit > 0 ? " of the memory limit " + Mib(m.options.memory_limit) : std::string(" (no memory limit)")) +
          "\n";
  return text;
}

}  // namespace tessera
