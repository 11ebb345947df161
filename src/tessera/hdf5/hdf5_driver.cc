#include "tessera/hdf5/hdf5_driver.h"

#include <algorithm>
#include <filesystem>

#include "tessera/core/chunk_shape.h"
#include "tessera/driver/driver_support.h"
#include "tessera/hdf5/h5_raw_file.h"
#include "tessera/hdf5/h5_reader.h"
#include "tessera/hdf5/h5_superblock.h"
#include "tessera/hdf5/h5_references.h"
#include "tessera/hdf5/h5_vlen.h"
#include "tessera/hdf5/hdf5_file_target.h"
#include "tessera/hdf5/hdf5_multi_array_file.h"
#include "tessera/hdf5/hdf5_spec_options.h"
#include "tessera/hdf5/hdf5_stream.h"
#include "tessera/spec/spec_error.h"

namespace tessera::hdf5 {
namespace {

constexpr std::string_view kName = "hdf5";

// The datasets of a file as an error names them: "/a, /b, ..." up to kListedDatasets, then "and N more".
constexpr size_t kListedDatasets = 20;
std::string DatasetListText(const std::vector<std::string>& names) {
  std::string list;
  for (size_t i = 0; i < names.size() && i < kListedDatasets; ++i) list += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kListedDatasets) list += " and " + std::to_string(names.size() - kListedDatasets) + " more";
  return list;
}

using driver::Member;

Status NotHonoured(std::string_view field, const std::string& why) { return FieldNotHonoured(field, kName, why); }

// Whether the remote object at `location` is an HDF5 file (nullopt: there is no such object).
Result<std::optional<bool>> RemoteHdf5(const Location& location) {
  Result<LocationObject> object = OpenLocationObject(location, /*create=*/false);
  if (!object.ok()) return std::optional<bool>();
  Result<std::shared_ptr<RawFile>> file = RawFile::Open(object->store, object->key);
  if (!file.ok()) {
    if (file.status().kind() == ErrorKind::kNotFound) return std::optional<bool>();
    return file.status();
  }
  // A read that fails (short, the network) is that error, not "no HDF5 file here".
  TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> signature, FindSignature(**file));
  return std::optional<bool>(signature.has_value());
}

class Driver final : public driver::FormatDriver {
 public:
  Format format() const override { return Format::kHdf5; }
  std::string_view name() const override { return kName; }
  std::vector<std::string_view> aliases() const override { return {"h5"}; }
  bool single_object() const override { return true; }
  bool ClaimsExtension(std::string_view ext) const override {
    return ext == ".h5" || ext == ".hdf5" || ext == ".he5" || ext == ".nc" || ext == ".hdf";
  }
  std::string_view stored_as() const override { return "HDF5 file"; }

  Result<driver::Detection> Detect(const Location& location) const override {
    if (location.is_file()) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(location.path, ec)) return driver::Detection::kAbsent;
      return LooksLikeHdf5(location.path) ? driver::Detection::kDetected : driver::Detection::kOtherObject;
    }
    TESSERA_ASSIGN_OR_RETURN(std::optional<bool> h5, RemoteHdf5(location));
    if (!h5) return driver::Detection::kAbsent;
    return *h5 ? driver::Detection::kDetected : driver::Detection::kOtherObject;
  }

  Result<std::string> DescribeStored(const Location&) const override {
    return std::string("an HDF5 file (tessera writes whole HDF5 files and cannot add a dataset to an existing one)");
  }

  // The file: tessera writes whole files, so the file is the array.
  Status Remove(const Location& location) const override {
    if (location.is_file()) {
      std::error_code ec;
      if (!std::filesystem::remove(location.path, ec) && ec)
        return IoError(location.path + ": remove: " + ec.message());
      return Status::Ok();
    }
    TESSERA_ASSIGN_OR_RETURN(LocationObject object, OpenLocationObject(location, /*create=*/false));
    return object.store->Erase(object.key);
  }

  Status ResolveSpec(ArraySpec* s) const override {
    if (!s->codec) s->codec = Codec::kNone;
    if (s->dtype == DataType::kBool || s->dtype == DataType::kComplex64 || s->dtype == DataType::kComplex128)
      return NotHonoured("dtype", "datasets are written with integer and floating-point types, not " +
                                      std::string(DataTypeName(s->dtype)));
    if (*s->codec != Codec::kNone && *s->codec != Codec::kGzip)
      return NotHonoured("codec", "datasets take none or gzip (the deflate filter), not " +
                                      std::string(CodecName(*s->codec)));
    if (*s->codec == Codec::kGzip && !s->level) s->level = 4;  // h5py's default
    if (!s->shard_chunks.empty()) return NotHonoured("shard_chunks", "datasets are not sharded");
    if (!s->dimension_names.empty()) return NotHonoured("dimension_names", "dimension scales are not written");
    if (s->hdf5.dataset.empty() || s->hdf5.dataset == "/")
      return InvalidField("dataset", "\"" + s->hdf5.dataset + "\" is the root group; name a dataset such as /data");
    for (const auto& [name, value] : s->attributes.items()) TESSERA_RETURN_IF_ERROR(CheckHdf5Attribute(name, value));
    if (!s->chunk_shape.empty())
      for (size_t d = s->shape[0] == 0 ? 1 : 0; d < s->shape.size(); ++d)
        if (s->chunk_shape[d] > s->shape[d])
          return NotHonoured("chunk_shape", "chunk extent " + std::to_string(s->chunk_shape[d]) +
                                                " exceeds the fixed extent " + std::to_string(s->shape[d]) +
                                                " of dimension " + std::to_string(d) +
                                                " (HDF5 refuses chunks larger than a fixed dimension)");
    if (s->chunk_shape.empty()) s->chunk_shape = AutoChunkShape(s->shape, s->shape[0] == 0, ItemSize(s->dtype));
    return Status::Ok();
  }

  Status CheckOptionsUnset(const ArraySpec& s, std::string_view writing) const override {
    const Hdf5SpecOptions d;
    if (s.hdf5.shuffle != d.shuffle) return FieldNotHonoured("shuffle", writing, "has no shuffle filter (an HDF5 option)");
    if (s.hdf5.fletcher32 != d.fletcher32)
      return FieldNotHonoured("fletcher32", writing, "has no fletcher32 checksum (an HDF5 option)");
    if (s.hdf5.dataset != d.dataset) return FieldNotHonoured("dataset", writing, "has no datasets (an HDF5 option)");
    return Status::Ok();
  }
  void ClearOptions(ArraySpec* s) const override { s->hdf5 = {}; }

  Status ResolveMultiscale(ArraySpec* s) const override {
    if (s->pyramid.levels != 1)
      return NotHonoured("pyramid", "datasets have no multiscale levels (write zarr3 or precomputed)");
    return Status::Ok();
  }

  Status AbandonShared(const ArraySpec&, Store&) const override { return CheckSharedWriting(); }

  void DescribeSpec(const driver::StoredArray& a, ArraySpec* s) const override {
    const nlohmann::json& desc = a.description;
    s->codec = Codec::kNone;
    if (const nlohmann::json* filters = Member(desc, "filters"); filters && filters->is_array()) {
      for (const nlohmann::json& f : *filters) {
        const int id = f.value("id", 0);
        const nlohmann::json* data = Member(f, "client_data");
        if (id == 1) {  // deflate
          s->codec = Codec::kGzip;
          if (data && data->is_array() && !data->empty()) s->level = (*data)[0].get<int>();
        }
        if (id == 2) s->hdf5.shuffle = true;
        if (id == 3) s->hdf5.fletcher32 = true;
      }
    }
    if (const nlohmann::json* name = Member(desc, "dataset"); name && name->is_string()) {
      s->hdf5.dataset = name->get<std::string>();
      if (s->hdf5.dataset.empty() || s->hdf5.dataset[0] != '/') s->hdf5.dataset.insert(0, "/");
    }
    if (const nlohmann::json* attrs = Member(desc, "attributes"); attrs && attrs->is_object()) s->attributes = *attrs;
  }

  Result<driver::OpenedArray> Open(const Location& location, const OpenOptions& options) const override {
    if (options.scale != 0)
      return FieldError(ErrorKind::kInvalidArgument, "scale", "applies to precomputed volumes only; " + location.path + " is hdf5");
    if (options.level != 0) return FieldError(ErrorKind::kInvalidArgument, "level", "HDF5 datasets have no levels; " + location.path + " is hdf5");
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Hdf5File> file, Hdf5File::Open(location));
    LinkedFilePolicy linked_files;
    linked_files.allowed_paths = options.hdf5_allowed_paths;
    file->set_linked_file_policy(std::move(linked_files));
    std::string name = options.dataset;
    if (name.empty()) {
      TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> names, file->ListDatasets());
      if (names.size() != 1) {
        return FieldError(ErrorKind::kInvalidArgument, "dataset", "" + location.ToString() + " holds " + std::to_string(names.size()) +
                               " datasets; name one" + (names.empty() ? "" : ": " + DatasetListText(names)));
      }
      name = names[0];
    }
    Result<std::unique_ptr<Hdf5Dataset>> opened = file->OpenDataset(name);
    if (!opened.ok() && opened.status().kind() == ErrorKind::kNotFound) {
      // A misspelt name: the datasets the file does hold are the likely candidates. (A file whose
      // listing fails keeps the lookup's own error.)
      Result<std::vector<std::string>> names = file->ListDatasets();
      if (names.ok())
        return NotFound(opened.status().message() + "; the file holds " +
                        (names->empty() ? std::string("no datasets") : DatasetListText(*names)));
    }
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Hdf5Dataset> ds, std::move(opened));
    driver::OpenedArray out;
    out.description = ds->Describe();
    out.metadata = out.description;
    if (HoldsVariableLength(ds->datatype().type)) {
      // Variable-length strings and sequences, alone or inside compounds and arrays: the dataset
      // reads their stored bytes, whose references the object source resolves through the file's
      // global heap.
      const std::string where = location.ToString() + ": dataset " + ds->name();
      std::shared_ptr<const RawFile> file_of = ds->raw_file();
      const H5Type type = ds->datatype().type;
      TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<VlenElements> elements,
                               VlenElements::Make(std::shared_ptr<const ChunkSource>(std::move(ds)), file_of, type, where));
      std::shared_ptr<const VlenElements> objects = std::move(elements);
      out.source = ObjectArrayPlaceholder(objects, where);
      out.objects = std::move(objects);
      return out;
    }
    if (IsReference(ds->datatype().type)) {
      // Object references: their stored addresses, read as the paths of the objects (h5_references.h).
      const std::string where = location.ToString() + ": dataset " + ds->name();
      std::shared_ptr<const RawFile> file_of = ds->raw_file();
      TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<ObjectReferencePaths> paths,
                               ObjectReferencePaths::Make(std::shared_ptr<const ChunkSource>(std::move(ds)), file_of,
                                                          file->superblock().root_object_header, where));
      std::shared_ptr<const ObjectReferencePaths> objects = std::move(paths);
      out.source = ObjectArrayPlaceholder(objects, where);
      out.objects = std::move(objects);
      return out;
    }
    out.source = std::move(ds);
    return out;
  }

  Status CheckWriterSettings(const driver::WriterSettings& settings) const override {
    if (settings.backend != stream::Backend::kCpu)
      return FieldError(ErrorKind::kUnsupported, "backend", "hdf5 datasets are filtered on the CPU backend only");
    if (settings.discard) return FieldError(ErrorKind::kUnsupported, "discard", "hdf5 streams build a file; there is no discarding sink");
    return Status::Ok();
  }
  Status CheckSharedWriting() const override {
    return FieldError(ErrorKind::kUnsupported, "format", "an HDF5 dataset is one file, which many processes cannot write at once; convert it "
                       "with one process (tessera convert), or write zarr3 or precomputed");
  }
  bool UsesUploadQueue(const Location&) const override { return false; }

  Result<stream::StreamLayout> Plan(const ArraySpec& spec, int threads) const override {
    TESSERA_ASSIGN_OR_RETURN(Hdf5StreamOptions h5, Hdf5StreamOptionsOf(spec));
    return PlanHdf5Stream(h5, threads);
  }

  Result<driver::FormatWriter> OpenWriter(const ArraySpec& spec, const Location& location,
                                          const driver::WriterSettings& settings) const override {
    TESSERA_ASSIGN_OR_RETURN(Hdf5StreamOptions h5, Hdf5StreamOptionsOf(spec));
    // The file appears complete at Close or not at all (hdf5_file_target.h).
    struct Held {
      Hdf5FileTarget target;  // destroyed after the stream
      Hdf5SinkAndWriter stream;
    };
    auto held = std::make_shared<Held>();
    TESSERA_ASSIGN_OR_RETURN(held->target, CreateHdf5FileTarget(location));
    TESSERA_ASSIGN_OR_RETURN(held->stream, OpenHdf5Stream(held->target.file.get(), h5,
                                                          driver::StreamWriterOptionsOf(settings)));
    driver::FormatWriter out;
    out.writer = held->stream.writer.get();
    out.finish = [held] { return held->target.file->Close(); };  // Close commits the file (the upload)
    out.abandon = [held] { held->target.file->Abandon(); };
    out.keep_alive = held;
    return out;
  }

  Result<driver::FormatWriter> OpenRegionWriter(const ArraySpec&, const ArraySpec&, const Location&,
                                                const driver::WriterSettings&, std::vector<int64_t>) const override {
    return FieldError(ErrorKind::kUnsupported, "format", "hdf5 has no region writer (one file: see shared_write.h)");
  }
  Status CreateMetadata(const ArraySpec&, const Location&) const override { return FieldError(ErrorKind::kUnsupported, "format", "hdf5"); }
  // An acquisition's arrays: datasets of one file.
  Result<std::unique_ptr<driver::MultiArrayFile>> CreateMultiArrayFile(const Location& location) const override {
    return CreateHdf5MultiArrayFile(location);
  }
};

}  // namespace

const driver::FormatDriver& Hdf5Driver() {
  static const Driver driver;
  return driver;
}

}  // namespace tessera::hdf5
