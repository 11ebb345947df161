#include "tessera/hdf5/h5_reader.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "tessera/core/text.h"
#include "tessera/hdf5/h5_attributes.h"
#include "tessera/hdf5/h5_external.h"
#include "tessera/hdf5/h5_group.h"
#include "tessera/hdf5/h5_shared_messages.h"
#include "tessera/hdf5/h5_virtual.h"

namespace tessera::hdf5 {
namespace {

// Target size of the virtual chunks of contiguous and compact datasets.
constexpr uint64_t kVirtualChunkBytes = uint64_t{1} << 20;
// HDF5 chunks are at most 4 GiB; anything that claims more is corrupt.
constexpr uint64_t kMaxChunkBytes = uint64_t{1} << 32;
bool MulOverflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_mul_overflow(a, b, out); }

}  // namespace

bool LooksLikeHdf5(const std::string& path) {
  Result<std::shared_ptr<RawFile>> file = RawFile::Open(path);
  return file.ok() && LooksLikeHdf5(**file);
}

bool LooksLikeHdf5(const RawFile& file) {
  Result<std::optional<uint64_t>> sig = FindSignature(file);
  return sig.ok() && sig->has_value();
}

Result<std::shared_ptr<Hdf5File>> Hdf5File::Open(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<RawFile> file, RawFile::Open(path));
  return Open(std::move(file));
}

Result<std::shared_ptr<Hdf5File>> Hdf5File::Open(const Location& location) {
  if (location.is_file()) return Open(location.path);
  TESSERA_ASSIGN_OR_RETURN(LocationObject object, OpenLocationObject(location, /*create=*/false));
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<RawFile> file, RawFile::Open(object.store, object.key));
  return Open(std::move(file));
}

Result<std::shared_ptr<Hdf5File>> Hdf5File::Open(std::shared_ptr<RawFile> file) {
  TESSERA_ASSIGN_OR_RETURN(Superblock sb, ReadSuperblock(file.get()));
  if (sb.extension != kUndefinedAddress) {
    // A metadata cache image holds some of the file's metadata in one block that only the HDF5
    // library unpacks: the objects' headers on disk may be stale until it has.
    TESSERA_ASSIGN_OR_RETURN(ObjectHeader ext, ReadObjectHeader(*file, sb.extension));
    if (const HeaderMessage* m = ext.Find(kMsgMetadataCacheImage))
      return Unsupported(file->Where("superblock extension", sb.extension, 0) +
                         ": the file holds a metadata cache image (message at byte " + std::to_string(m->addr) +
                         "), which tessera does not read; open it once read-write with the HDF5 library "
                         "(h5py) to write the metadata out");
    // Messages kept once in the shared-message heap: object headers read from here on resolve
    // them (ReadObjectHeader). A file reopened (a virtual dataset's own file) already has it.
    if (const HeaderMessage* m = ext.Find(kMsgSharedMessageTable); m != nullptr && file->shared_messages() == nullptr) {
      TESSERA_ASSIGN_OR_RETURN(SharedMessageTable table, ReadSharedMessageTable(*file, *m));
      file->set_shared_messages(std::make_shared<const SharedMessageTable>(std::move(table)));
    }
  }
  return std::shared_ptr<Hdf5File>(new Hdf5File(std::move(file), sb));
}

Result<nlohmann::json> Hdf5File::RootAttributes() const {
  TESSERA_ASSIGN_OR_RETURN(ObjectHeader oh, ReadObjectHeader(*file_, superblock_.root_object_header));
  return ReadAttributes(*file_, oh);
}

Result<nlohmann::json> Hdf5File::Attributes(const std::string& path) const {
  TESSERA_ASSIGN_OR_RETURN(ObjectHeader oh, ReadObjectHeader(*file_, superblock_.root_object_header));
  std::string at = "/";
  for (const std::string& part : SplitObjectPath(path)) {
    if (!IsGroup(oh)) return NotFound(file_->path() + ": \"" + at + "\" is not a group (looking up \"" + path + "\")");
    TESSERA_ASSIGN_OR_RETURN(std::vector<GroupLink> links, ReadGroupLinks(*file_, oh, at));
    auto it = std::find_if(links.begin(), links.end(), [&](const GroupLink& l) { return l.name == part; });
    at = JoinGroupPath(at, part);
    if (it == links.end()) return NotFound(file_->path() + ": no group or dataset \"" + at + "\"");
    if (!it->hard) return Unsupported(file_->path() + ": \"" + at + "\" is a soft or external link");
    TESSERA_ASSIGN_OR_RETURN(oh, ReadObjectHeader(*file_, it->object));
  }
  return ReadAttributes(*file_, oh);
}

Result<std::vector<std::string>> Hdf5File::ListDatasets() const {
  TESSERA_ASSIGN_OR_RETURN(std::vector<WalkedObject> objects, WalkDatasets());
  std::vector<std::string> out;
  for (WalkedObject& object : objects) {
    if (!object.error.ok()) return object.error;
    out.push_back(std::move(object.path));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<WalkedObject>> Hdf5File::WalkDatasets() const {
  std::vector<WalkedObject> out;
  std::set<uint64_t> seen{superblock_.root_object_header};
  // Groups waiting to be listed are held by address, their headers read again when listed: a
  // header can be large (and a hostile file can give a million groups one shared continuation
  // block), so the pending ones are not kept in memory.
  struct Pending {
    std::string path;
    uint64_t addr;
    int depth;
  };
  std::vector<Pending> stack{{"/", superblock_.root_object_header, 0}};
  while (!stack.empty()) {
    Pending g = std::move(stack.back());
    stack.pop_back();
    Result<ObjectHeader> header = ReadObjectHeader(*file_, g.addr);
    if (!header.ok()) {
      if (g.depth == 0) return header.status();
      out.push_back({g.path, header.status()});
      continue;
    }
    Result<std::vector<GroupLink>> links = ReadGroupLinks(*file_, *header, g.path);
    if (!links.ok()) {
      if (g.depth == 0) return links.status();  // nothing at all can be listed
      out.push_back({g.path, links.status()});
      continue;
    }
    for (const GroupLink& link : *links) {
      if (!link.hard || !seen.insert(link.object).second) continue;
      if (seen.size() > kMaxGroupObjects) return CorruptData(file_->path() + ": more than a million objects");
      const std::string child = JoinGroupPath(g.path, link.name);
      Result<ObjectHeader> coh = ReadObjectHeader(*file_, link.object);
      if (!coh.ok()) {
        out.push_back({child, coh.status()});
      } else if (IsDataset(*coh)) {
        out.push_back({child, Status::Ok()});
      } else if (IsGroup(*coh)) {
        if (g.depth + 1 > kMaxGroupDepth) {
          out.push_back({child, CorruptData(file_->path() + ": groups nested deeper than " +
                                            std::to_string(kMaxGroupDepth) + " at " + child)});
          continue;
        }
        stack.push_back({child, link.object, g.depth + 1});
      }
    }
  }
  return out;
}

namespace {

// The most elements per dimension, and in all, a dataset may have (int64 arithmetic stays exact).
constexpr uint64_t kMaxExtent = uint64_t{1} << 62;

}  // namespace

Result<std::unique_ptr<Hdf5Dataset>> Hdf5File::OpenDataset(const std::string& path) const {
  uint64_t addr = superblock_.root_object_header;
  std::string at = "/";
  TESSERA_ASSIGN_OR_RETURN(ObjectHeader oh, ReadObjectHeader(*file_, addr));
  for (const std::string& part : SplitObjectPath(path)) {
    if (!IsGroup(oh)) return NotFound(file_->path() + ": \"" + at + "\" is not a group (looking up \"" + path + "\")");
    TESSERA_ASSIGN_OR_RETURN(std::vector<GroupLink> links, ReadGroupLinks(*file_, oh, at));
    auto it = std::find_if(links.begin(), links.end(), [&](const GroupLink& l) { return l.name == part; });
    at = JoinGroupPath(at, part);
    if (it == links.end()) return NotFound(file_->path() + ": no dataset \"" + path + "\" (\"" + at + "\" does not exist)");
    if (!it->hard) return Unsupported(file_->path() + ": \"" + at + "\" is a soft or external link");
    TESSERA_ASSIGN_OR_RETURN(oh, ReadObjectHeader(*file_, it->object));
  }
  if (!IsDataset(oh)) return InvalidArgument(file_->path() + ": \"" + at + "\" is a group, not a dataset");
  return Hdf5Dataset::Open(file_, oh, at, linked_files_);
}

// ---------------------------------------------------------------------------------------------

std::string Hdf5Dataset::What() const { return "dataset " + name_; }

Result<std::unique_ptr<Hdf5Dataset>> Hdf5Dataset::Open(std::shared_ptr<RawFile> file, const ObjectHeader& oh,
                                                       const std::string& name, const LinkedFilePolicy& linked_files) {
  std::unique_ptr<Hdf5Dataset> ds(new Hdf5Dataset());
  ds->file_ = file;
  ds->name_ = name;
  const std::string where = file->path() + ": dataset " + name;
  const HeaderMessage* space = oh.Find(kMsgDataspace);
  const HeaderMessage* type = oh.Find(kMsgDatatype);
  const HeaderMessage* layout = oh.Find(kMsgLayout);
  if (!space || !type || !layout)
    return CorruptData(file->Where("object header of dataset " + name, oh.addr, 0) +
                       ": missing its dataspace, datatype or layout message");
  TESSERA_ASSIGN_OR_RETURN(ds->dataspace_, ParseDataspace(*file, *space));
  TESSERA_ASSIGN_OR_RETURN(ds->datatype_, ParseDatatype(*file, *type));
  TESSERA_ASSIGN_OR_RETURN(ds->element_fill_, ParseFillValue(*file, oh, ds->datatype_));
  const NumpyElement& element = ds->datatype_.element;
  if (!element.dtype) {
    auto type = std::make_shared<ElementType>();
    type->numpy = element.numpy;
    type->item_bytes = element.item_bytes;
    type->description = element.description;
    type->fill.assign(ds->element_fill_.bytes.begin(), ds->element_fill_.bytes.begin() + element.item_bytes);
    ds->element_type_ = std::move(type);
  }
  ds->fills_absent_chunks_ = !ds->datatype_.simple();
  ds->fill_.bytes.assign(ds->element_fill_.bytes.begin(),
                         ds->element_fill_.bytes.begin() + static_cast<std::ptrdiff_t>(ItemSize(ds->datatype_.dtype)));
  ds->attributes_ = ReadAttributes(*file, oh);
  if (const HeaderMessage* pipeline = oh.Find(kMsgFilterPipeline)) {
    TESSERA_ASSIGN_OR_RETURN(ds->filters_, ParseFilterPipeline(*file, *pipeline));
  }
  if (ds->dataspace_.is_null) return Unsupported(where + ": null dataspace (no elements)");
  const size_t rank = ds->dataspace_.dims.size();
  std::optional<GlobalHeapId> virtual_mappings;
  if (IsVirtualLayout(*layout)) {
    TESSERA_ASSIGN_OR_RETURN(virtual_mappings, ParseVirtualLayout(*file, *layout));
    ds->layout_.version = layout->body[0];
    ds->layout_.cls = LayoutClass::kVirtual;
    ds->layout_.size = kUndefinedAddress;
  } else {
    TESSERA_ASSIGN_OR_RETURN(ds->layout_, ParseLayout(*file, *layout, rank));
  }
  Layout& l = ds->layout_;
  const uint64_t item = ds->datatype_.size;
  if (virtual_mappings) {
    // The mapping copies whole file elements; a widened one would need widening there too.
    if (element.widened_from_bytes)
      return Unsupported(where + ": a virtual dataset of " + element.description + " elements");
    TESSERA_ASSIGN_OR_RETURN(ds->virtual_, VirtualStorage::Open(file, *virtual_mappings, ds->dataspace_.dims,
                                                                ds->dataspace_.max_dims, ds->datatype_.dtype, item,
                                                                linked_files, "dataset " + name));
    ds->dataspace_.dims = ds->virtual_->dims();  // unlimited mappings follow their sources
  }

  // Shape and element count within tessera's limits (valid HDF5 may exceed them: a sparse dataset
  // of 2^70 bytes is fine for h5py; it is unsupported here, the limit named, not corrupt).
  uint64_t elements = 1;
  for (size_t d = 0; d < rank; ++d) {
    const uint64_t n = ds->dataspace_.dims[d];
    if (n > kMaxExtent)
      return Unsupported(where + ": dimension " + std::to_string(d) + " has " + std::to_string(n) +
                         " elements, beyond tessera's limit of 2^62 per dimension");
    if (MulOverflows(elements, n, &elements) || elements > kMaxExtent)
      return Unsupported(where + ": the dataspace has more than 2^62 elements, tessera's limit (" +
                         JoinIntegers(ds->dataspace_.dims, " x ") + ")");
    ds->shape_.push_back(static_cast<int64_t>(n));
  }
  // Bytes of the whole dataspace, saturated: only contiguous and compact storage compare with it.
  uint64_t total = 0;
  if (MulOverflows(elements, item, &total)) total = UINT64_MAX;
  if (l.cls == LayoutClass::kChunked) {
    if (l.chunk_element_size != item && l.version >= 3)
      return CorruptData(where + ": chunk element size " + std::to_string(l.chunk_element_size) +
                         " differs from the datatype's " + std::to_string(item));
    uint64_t chunk_bytes = item;
    for (uint64_t c : l.chunk_dims) {
      if (MulOverflows(chunk_bytes, c, &chunk_bytes) || chunk_bytes > kMaxChunkBytes)
        return CorruptData(where + ": chunks of more than 4 GiB");
      ds->chunk_shape_.push_back(static_cast<int64_t>(c));
    }
    ds->chunk_bytes_ = chunk_bytes;
    ds->chunk_grid_ = H5ChunkGrid(ds->dataspace_.dims, l.chunk_dims);
  } else {
    if (const HeaderMessage* efl = oh.Find(kMsgExternalFiles); efl && l.cls == LayoutClass::kContiguous) {
      TESSERA_ASSIGN_OR_RETURN(ds->external_, ExternalStorage::Open(file, *efl, linked_files, "dataset " + name));
      if (ds->external_->total_bytes() < total)
        return CorruptData(where + ": external files of " + std::to_string(ds->external_->total_bytes()) + " bytes for " +
                           std::to_string(total) + " bytes of data");
      l.size = total;
    }
    if (l.size == kUndefinedAddress) l.size = total;  // layout v1/v2 record no byte count
    if (l.cls == LayoutClass::kContiguous && l.address != kUndefinedAddress && l.size < total)
      return CorruptData(where + ": contiguous storage of " + std::to_string(l.size) + " bytes for " +
                         std::to_string(total) + " bytes of data");
    if (l.cls == LayoutClass::kCompact && l.compact_data.size() < total)
      return CorruptData(where + ": compact data of " + std::to_string(l.compact_data.size()) + " bytes for " +
                         std::to_string(total) + " bytes of data");
    // A virtual grid of whole rows along dimension 0.
    if (rank > 0) {
      uint64_t row = item;
      for (size_t d = 1; d < rank; ++d) row *= ds->dataspace_.dims[d];
      ds->row_bytes_ = row;
      const uint64_t rows = std::max<uint64_t>(1, kVirtualChunkBytes / std::max<uint64_t>(1, row));
      ds->chunk_shape_.push_back(static_cast<int64_t>(std::max<uint64_t>(1, std::min<uint64_t>(rows, ds->dataspace_.dims[0]))));
      for (size_t d = 1; d < rank; ++d) ds->chunk_shape_.push_back(std::max<int64_t>(1, ds->shape_[d]));
      ds->chunk_bytes_ = static_cast<uint64_t>(ds->chunk_shape_[0]) * row;
      ds->chunk_grid_ = H5ChunkGrid(ds->dataspace_.dims,
                                    std::vector<uint64_t>(ds->chunk_shape_.begin(), ds->chunk_shape_.end()));
    } else {
      ds->row_bytes_ = item;
      ds->chunk_bytes_ = item;
    }
  }
  // The element's own dimensions, whole in every chunk.
  std::vector<int64_t> trailing = element.trailing_dims;
  if (ds->element_type_) trailing.push_back(element.item_bytes);
  for (int64_t n : trailing) {
    ds->shape_.push_back(n);
    ds->chunk_shape_.push_back(n);
  }
  return ds;
}

std::string Hdf5Dataset::LayoutText() const {
  switch (layout_.cls) {
    case LayoutClass::kCompact: return "compact";
    case LayoutClass::kContiguous: return "contiguous";
    case LayoutClass::kChunked: return "chunked (" + ChunkIndexName(layout_.index_type) + ")";
    case LayoutClass::kVirtual: return "virtual";
  }
  return "unknown";
}

nlohmann::json Hdf5Dataset::Describe() const {
  nlohmann::json filters = nlohmann::json::array();
  for (const Filter& f : filters_) {
    nlohmann::json j = {{"id", f.id}, {"name", FilterName(f.id)}};
    if (!f.client_data.empty()) j["client_data"] = f.client_data;
    filters.push_back(j);
  }
  nlohmann::json max_shape = nlohmann::json::array();
  for (uint64_t m : dataspace_.max_dims) max_shape.push_back(m == kUnlimited ? nlohmann::json(nullptr) : nlohmann::json(m));
  nlohmann::json j = {{"dataset", name_},
                      {"layout", LayoutText()},
                      {"hdf5_datatype", datatype_.description},
                      {"byte_order", datatype_.size == 1 ? "none" : datatype_.vax_order ? "VAX" : datatype_.big_endian ? "big" : "little"},
                      {"max_shape", max_shape},
                      {"filters", filters},
                      {"attributes", attributes_}};
  if (element_type_) j["numpy_dtype"] = element_type_->numpy;
  if (!datatype_.element.trailing_dims.empty()) j["element_dims"] = datatype_.element.trailing_dims;
  if (layout_.cls == LayoutClass::kChunked) {
    std::vector<uint64_t> chunks(layout_.chunk_dims.begin(), layout_.chunk_dims.end());
    j["hdf5_chunks"] = chunks;
    j["chunk_index"] = ChunkIndexName(layout_.index_type);
  } else {
    j["hdf5_chunks"] = nullptr;
  }
  if (virtual_) {
    nlohmann::json sources = nlohmann::json::array();
    for (const VirtualMapping& m : virtual_->mappings())
      sources.push_back({{"file", m.source_file},
                         {"dataset", m.source_dataset},
                         {"source_selection", m.source.ToString()},
                         {"virtual_selection", m.virtual_selection.ToString()}});
    j["virtual_sources"] = sources;
  }
  if (external_) {
    nlohmann::json files = nlohmann::json::array();
    for (const ExternalFileSlot& slot : external_->slots())
      files.push_back({{"file", slot.name},
                       {"offset", slot.offset},
                       {"size", slot.size == kUnlimited ? nlohmann::json(nullptr) : nlohmann::json(slot.size)}});
    j["external_files"] = files;
  }
  return j;
}

Status Hdf5Dataset::EnsureIndex() const {
  std::lock_guard<std::mutex> lock(index_mu_);
  if (index_loaded_) return index_status_;
  ChunkGeometry g;
  g.dims = dataspace_.dims;
  g.max_dims = dataspace_.max_dims;
  g.chunk_dims = layout_.chunk_dims;
  g.chunk_bytes = chunk_bytes_;
  g.filtered = !filters_.empty();
  Result<ChunkMap> map = LoadChunkIndex(*file_, layout_, g, What());
  index_loaded_ = true;
  if (map.ok()) {
    index_ = std::move(map).value();
  } else {
    index_status_ = map.status();
  }
  return index_status_;
}

Result<bool> Hdf5Dataset::ReadChunk(std::span<const int64_t> coords, Bytes* out) const {
  // The engine's coordinates include the element's dimensions (always chunk 0): the file's
  // chunk grid has the dataspace's rank.
  const std::span<const int64_t> grid_coords = coords.first(dataspace_.dims.size());
  // Source datasets give elements in numpy's layout already.
  if (virtual_) return ReadRows(grid_coords, out);
  Result<bool> r = layout_.cls == LayoutClass::kChunked ? ReadStoredChunk(grid_coords, out) : ReadRows(grid_coords, out);
  if (!r.ok()) return r;
  if (!*r) {
    if (!fills_absent_chunks_) return false;
    FillChunk(out);
    return true;
  }
  const NumpyElement& e = datatype_.element;
  ConvertToNumpy(e.steps, out->data(), out->size() / e.item_bytes, e.item_bytes);
  WidenToNumpy(e, out);  // a 12-byte long double: the chunk grows to numpy's 16 bytes an element
  return true;
}

void Hdf5Dataset::FillChunk(Bytes* out) const {
  out->resize(NumpyBytesOf(datatype_.element, chunk_bytes_));  // (element_fill_ is numpy's element)
  const size_t n = element_fill_.bytes.size();
  for (size_t i = 0; i + n <= out->size(); i += n) std::memcpy(out->data() + i, element_fill_.bytes.data(), n);
}

Result<bool> Hdf5Dataset::ReadStoredChunk(std::span<const int64_t> coords, Bytes* out) const {
  TESSERA_RETURN_IF_ERROR(EnsureIndex());
  const size_t rank = coords.size();
  std::vector<uint64_t> scaled(coords.begin(), coords.end());
  auto it = index_.find(chunk_grid_.Ravel(scaled.data()));
  if (it == index_.end()) return false;
  const ChunkRecord& rec = it->second;
  std::string coords_text;
  for (size_t d = 0; d < rank; ++d) coords_text += (d ? "," : "") + std::to_string(coords[d]);
  const std::string what = "chunk (" + coords_text + ") of " + What();
  if (filters_.empty()) {
    if (rec.size != chunk_bytes_)
      return file_->Corrupt(what, rec.addr, rec.size,
                            "stored size " + std::to_string(rec.size) + " differs from the chunk size " +
                                std::to_string(chunk_bytes_) + " (no filters)");
    out->resize(chunk_bytes_);
    TESSERA_RETURN_IF_ERROR(file_->ReadInto(rec.addr, chunk_bytes_, out->data(), what));
    return true;
  }
  uint32_t mask = rec.filter_mask;
  if (layout_.dont_filter_partial_edge_chunks) {
    for (size_t d = 0; d < rank; ++d)
      if (chunk_grid_.IsEdgeChunk(static_cast<int>(d), scaled[d])) mask = ~uint32_t{0};
  }
  TESSERA_ASSIGN_OR_RETURN(Bytes stored, file_->Read(rec.addr, rec.size, what));
  TESSERA_RETURN_IF_ERROR(DecodeChunk(filters_, mask, datatype_.size, stored, chunk_bytes_,
                                      file_->Where(what, rec.addr, rec.size), out));
  if (out->size() != chunk_bytes_)
    return file_->Corrupt(what, rec.addr, rec.size, "decoded to " + std::to_string(out->size()) + " bytes, expected " +
                                                          std::to_string(chunk_bytes_));
  return true;
}

Result<bool> Hdf5Dataset::ReadRows(std::span<const int64_t> coords, Bytes* out) const {
  if (layout_.cls == LayoutClass::kContiguous && layout_.address == kUndefinedAddress && !external_)
    return false;  // never written
  uint64_t first_row = 0, nrows = 1;
  if (!coords.empty()) {
    const uint64_t chunk = static_cast<uint64_t>(coords[0]);
    first_row = chunk_grid_.ChunkOrigin(0, chunk);
    if (first_row >= dataspace_.dims[0]) return false;
    nrows = chunk_grid_.ChunkExtent(0, chunk);
  }
  const uint64_t offset = first_row * row_bytes_;
  const uint64_t len = nrows * row_bytes_;
  out->resize(chunk_bytes_);
  if (len < chunk_bytes_) std::memset(out->data() + len, 0, chunk_bytes_ - len);
  if (layout_.cls == LayoutClass::kCompact) {
    if (len > 0) std::memcpy(out->data(), layout_.compact_data.data() + offset, len);
    return true;
  }
  if (virtual_) {
    // The fill value first, then whatever the mappings cover.
    FillChunk(out);
    std::vector<uint64_t> origin(shape_.size(), 0), extent(dataspace_.dims.begin(), dataspace_.dims.end());
    if (!extent.empty()) {
      origin[0] = first_row;
      extent[0] = nrows;
    }
    TESSERA_RETURN_IF_ERROR(virtual_->ReadBox(origin, extent, out->data()));
    return true;
  }
  if (external_) {
    TESSERA_RETURN_IF_ERROR(external_->Read(offset, len, out->data()));
    return true;
  }
  TESSERA_RETURN_IF_ERROR(file_->ReadInto(layout_.address + offset, len, out->data(), "contiguous data of " + What()));
  return true;
}

}  // namespace tessera::hdf5
