#include "tessera/hdf5/h5_writer.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "tessera/hdf5/h5_chunk_log.h"
#include "tessera/hdf5/h5_structures.h"
#include "tessera/index/index.h"
#include "tessera/store/file_store.h"

namespace tessera::hdf5 {
namespace {

constexpr int kMaxRank = 32;                              // HDF5's limit
constexpr uint64_t kMaxChunkBytes = (uint64_t{1} << 32) - 1;  // chunk sizes are 32-bit in the B-tree

std::vector<uint64_t> ToU64(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

Bytes AttributeMessage(const Attribute& a) {
  const Bytes space = EncodeDataspace(a.dims, {});
  return EncodeAttribute(a.name, a.datatype, space, a.data);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Attributes and the automatic chunk shape.

Result<Attribute> Attribute::Numeric(std::string name, DataType dtype, std::vector<uint64_t> dims, Bytes data) {
  Attribute a;
  a.name = std::move(name);
  TESSERA_ASSIGN_OR_RETURN(a.datatype, EncodeNumericDatatype(dtype));
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  if (data.size() != n * ItemSize(dtype)) {
    return InvalidArgument("HDF5 attribute \"" + a.name + "\": " + std::to_string(data.size()) + " bytes for " +
                           std::to_string(n) + " " + std::string(DataTypeName(dtype)) + " elements");
  }
  a.dims = std::move(dims);
  a.data = std::move(data);
  return a;
}

Attribute Attribute::String(std::string name, const std::string& value) {
  Attribute a;
  a.name = std::move(name);
  a.datatype = EncodeStringDatatype(value.size() + 1);
  a.data.assign(value.begin(), value.end());
  a.data.push_back(0);
  return a;
}

Attribute Attribute::Parse(std::string name, const std::string& text) {
  if (!text.empty()) {
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(text.c_str(), &end, 10);
    if (errno == 0 && *end == '\0') {
      Bytes b(8);
      EncodeFixed64LE(b.data(), static_cast<uint64_t>(i));
      return *Numeric(std::move(name), DataType::kInt64, {}, std::move(b));
    }
    const double d = std::strtod(text.c_str(), &end);
    if (*end == '\0' && text.find_first_of("0123456789") != std::string::npos) {
      Bytes b(8);
      std::memcpy(b.data(), &d, 8);
      return *Numeric(std::move(name), DataType::kFloat64, {}, std::move(b));
    }
  }
  return String(std::move(name), text);
}

// ---------------------------------------------------------------------------------------------
// Datasets.

H5DatasetWriter::H5DatasetWriter(H5Writer* file, std::string path, DatasetOptions options)
    : file_(file), path_(std::move(path)), options_(std::move(options)) {
  chunk_bytes_ = static_cast<int64_t>(ItemSize(options_.dtype));
  for (int64_t c : options_.chunk_shape) chunk_bytes_ *= c;
}

Status H5DatasetWriter::CheckCoords(const std::vector<int64_t>& coords) const {
  if (coords.size() != options_.shape.size()) {
    return InvalidArgument(path_ + ": chunk coordinates of rank " + std::to_string(coords.size()) +
                           " for a dataset of rank " + std::to_string(options_.shape.size()));
  }
  for (size_t d = 0; d < coords.size(); ++d) {
    const bool unlimited = d == 0 && options_.unlimited0;
    const int64_t grid = index::CeilDiv(options_.shape[d], options_.chunk_shape[d]);
    if (coords[d] < 0 || (!unlimited && coords[d] >= grid)) {
      return OutOfRange(path_ + ": chunk coordinate " + std::to_string(coords[d]) + " of dimension " +
                        std::to_string(d) + " is outside the chunk grid of " + std::to_string(grid));
    }
  }
  return Status::Ok();
}

Status H5DatasetWriter::WriteChunk(const std::vector<int64_t>& chunk_coords, ByteView raw) {
  TESSERA_RETURN_IF_ERROR(CheckCoords(chunk_coords));
  if (static_cast<int64_t>(raw.size()) != chunk_bytes_) {
    return InvalidArgument(path_ + ": a chunk holds " + std::to_string(chunk_bytes_) + " bytes, got " +
                           std::to_string(raw.size()));
  }
  Bytes encoded;
  TESSERA_RETURN_IF_ERROR(EncodeChunk(options_.filters, ItemSize(options_.dtype), raw, &encoded));
  const uint64_t address = file_->Allocate(encoded.size());
  TESSERA_RETURN_IF_ERROR(file_->WriteAt(address, encoded));
  RecordChunk(chunk_coords, address, static_cast<uint32_t>(encoded.size()), 0);
  return Status::Ok();
}

void H5DatasetWriter::RecordChunk(const std::vector<int64_t>& chunk_coords, uint64_t address, uint32_t bytes,
                                  uint32_t filter_mask) {
  std::lock_guard<std::mutex> lock(mu_);
  chunks_.push_back({ToU64(chunk_coords), address, bytes, filter_mask});
}

void H5DatasetWriter::RemoveChunk(const std::vector<int64_t>& chunk_coords) {
  std::lock_guard<std::mutex> lock(mu_);
  chunks_.push_back({ToU64(chunk_coords), kUndefinedAddress, 0, 0});
}

void H5DatasetWriter::SetExtent0(int64_t rows) {
  std::lock_guard<std::mutex> lock(mu_);
  options_.shape[0] = rows;
}

void H5DatasetWriter::ShiftChunkAddresses(uint64_t delta) {
  std::lock_guard<std::mutex> lock(mu_);
  for (StoredChunk& c : chunks_)
    if (c.address != kUndefinedAddress) c.address += delta;
  log_address_shift_ += delta;
}

void H5DatasetWriter::UseChunkLog(std::shared_ptr<ChunkLog> log) {
  std::lock_guard<std::mutex> lock(mu_);
  log_ = std::move(log);
}

// ---------------------------------------------------------------------------------------------
// The file.

H5Writer::H5Writer(std::unique_ptr<WritableStore> owned_store, std::unique_ptr<WritableFile> file, std::string path)
    : owned_store_(std::move(owned_store)), file_(std::move(file)), path_(std::move(path)), end_(kSuperblockV0Bytes) {}

H5Writer::~H5Writer() {
  if (!closed_) Abandon();
}

Result<std::unique_ptr<H5Writer>> H5Writer::Create(std::unique_ptr<WritableFile> file) {
  if (file == nullptr) return InvalidArgument("HDF5 writer: no file to write");
  std::string path = file->Describe();
  return std::unique_ptr<H5Writer>(new H5Writer(nullptr, std::move(file), std::move(path)));
}

Result<std::unique_ptr<H5Writer>> H5Writer::Create(const std::string& path) {
  if (path.empty()) return InvalidArgument("HDF5 writer: empty file path");
  // The file store's temporary file goes in the same directory, so the final rename is atomic.
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  // Like writing the file directly: its directory must exist (a store would create it).
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(dir, ec);
  if (!std::filesystem::is_directory(status)) {
    std::error_code why = std::make_error_code(std::errc::no_such_file_or_directory);
    if (std::filesystem::exists(status)) {
      why = std::make_error_code(std::errc::not_a_directory);
    } else if (ec) {
      why = ec;
    }
    return IoError(path + ": cannot create a temporary file beside it: " + why.message());
  }
  auto store = std::make_unique<FileStore>(dir);
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                           store->OpenWritableFile(path.substr(slash == std::string::npos ? 0 : slash + 1)));
  return std::unique_ptr<H5Writer>(new H5Writer(std::move(store), std::move(file), path));
}

void H5Writer::Abandon() {
  file_->Abandon();
  closed_ = true;
}

uint64_t H5Writer::Allocate(uint64_t bytes) { return end_.fetch_add(bytes); }

Status H5Writer::WriteAt(uint64_t address, ByteView bytes) {
  if (closed_) return FailedPrecondition(path_ + ": write after Close or Abandon");
  return file_->WriteAt(address, bytes);
}

Result<uint64_t> H5Writer::Append(ByteView bytes) {
  const uint64_t address = Allocate(bytes.size());
  TESSERA_RETURN_IF_ERROR(WriteAt(address, bytes));
  return address;
}

Result<H5Writer::Node*> H5Writer::Walk(const std::string& path, bool create_missing, std::string* leaf) {
  std::vector<std::string> parts = SplitObjectPath(path);
  if (parts.empty()) return InvalidArgument(path_ + ": \"" + path + "\" names the root group");
  for (const std::string& p : parts) {
    if (p == "..") return InvalidArgument(path_ + ": \"" + path + "\": '..' is not a name");
  }
  *leaf = parts.back();
  parts.pop_back();
  Node* node = &root_;
  std::string so_far;
  for (const std::string& p : parts) {
    so_far += "/" + p;
    auto it = node->children.find(p);
    if (it == node->children.end()) {
      if (!create_missing) return NotFound(path_ + ": no group " + so_far);
      it = node->children.emplace(p, std::make_unique<Node>()).first;
    } else if (!it->second->is_group) {
      return InvalidArgument(path_ + ": " + so_far + " is a dataset, not a group");
    }
    node = it->second.get();
  }
  if (node->children.count(*leaf) != 0) {
    return InvalidArgument(path_ + ": " + path + " already exists");
  }
  return node;
}

H5Writer::Node* H5Writer::FindLocked(const std::string& path) {
  Node* node = &root_;
  for (const std::string& p : SplitObjectPath(path)) {
    if (!node->is_group) return nullptr;
    auto it = node->children.find(p);
    if (it == node->children.end()) return nullptr;
    node = it->second.get();
  }
  return node;
}

H5Writer::ObjectKind H5Writer::KindOf(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* node = FindLocked(path);
  if (node == nullptr) return ObjectKind::kAbsent;
  return node->is_group ? ObjectKind::kGroup : ObjectKind::kDataset;
}

Status H5Writer::SetAttributes(const std::string& path, std::vector<Attribute> attributes) {
  std::lock_guard<std::mutex> lock(mu_);
  Node* node = FindLocked(path);
  if (node == nullptr) return NotFound(path_ + ": no group or dataset \"" + path + "\" to set attributes on");
  if (node->is_group) {
    node->attributes = std::move(attributes);
    return Status::Ok();
  }
  H5DatasetWriter& ds = *node->dataset;
  std::lock_guard<std::mutex> dataset_lock(ds.mu_);
  ds.options_.attributes = std::move(attributes);
  return Status::Ok();
}

Status H5Writer::CreateGroup(const std::string& path, std::vector<Attribute> attributes) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string leaf;
  TESSERA_ASSIGN_OR_RETURN(Node * parent, Walk(path, true, &leaf));
  auto node = std::make_unique<Node>();
  node->attributes = std::move(attributes);
  parent->children.emplace(leaf, std::move(node));
  return Status::Ok();
}

Result<H5DatasetWriter*> H5Writer::CreateDataset(const std::string& path, DatasetOptions o) {
  const std::string where = path_ + ": dataset " + path;
  const size_t rank = o.shape.size();
  if (rank == 0 || rank > kMaxRank) {
    return InvalidArgument(where + ": rank " + std::to_string(rank) + " (HDF5 chunked datasets have 1.." +
                           std::to_string(kMaxRank) + " dimensions)");
  }
  TESSERA_RETURN_IF_ERROR(EncodeNumericDatatype(o.dtype).status().WithContext(where));
  for (size_t d = 0; d < rank; ++d) {
    if (o.shape[d] < 0) return InvalidArgument(where + ": negative extent in dimension " + std::to_string(d));
  }
  if (o.chunk_shape.empty()) o.chunk_shape = AutoChunkShape(o.shape, o.unlimited0, ItemSize(o.dtype));
  if (o.chunk_shape.size() != rank) {
    return InvalidArgument(where + ": chunk shape has " + std::to_string(o.chunk_shape.size()) +
                           " dimensions, the dataset " + std::to_string(rank));
  }
  uint64_t chunk_bytes = ItemSize(o.dtype);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t c = o.chunk_shape[d];
    if (c < 1 || c > 0xFFFFFFFFll) {
      return InvalidArgument(where + ": chunk extent " + std::to_string(c) + " in dimension " + std::to_string(d) +
                             " (must be 1..4294967295)");
    }
    const bool unlimited = d == 0 && o.unlimited0;
    if (!unlimited && c > std::max<int64_t>(o.shape[d], 1)) {
      return InvalidArgument(where + ": chunk extent " + std::to_string(c) + " exceeds the fixed extent " +
                             std::to_string(o.shape[d]) + " of dimension " + std::to_string(d) +
                             " (HDF5 requires chunks no larger than a fixed dimension)");
    }
    chunk_bytes *= static_cast<uint64_t>(c);
  }
  if (chunk_bytes > kMaxChunkBytes) {
    return InvalidArgument(where + ": a chunk of " + std::to_string(chunk_bytes) +
                           " bytes exceeds HDF5's 4 GiB chunk limit");
  }
  if (o.fill.bytes.empty()) o.fill = ZeroFill(o.dtype);
  if (o.fill.bytes.size() != ItemSize(o.dtype)) return InvalidArgument(where + ": fill value of the wrong size");
  std::lock_guard<std::mutex> lock(mu_);
  std::string leaf;
  TESSERA_ASSIGN_OR_RETURN(Node * parent, Walk(path, true, &leaf));
  auto node = std::make_unique<Node>();
  node->is_group = false;
  std::string canonical;
  for (const std::string& p : SplitObjectPath(path)) canonical += "/" + p;
  node->dataset.reset(new H5DatasetWriter(this, canonical, std::move(o)));
  H5DatasetWriter* dataset = node->dataset.get();
  parent->children.emplace(leaf, std::move(node));
  return dataset;
}

Result<H5Writer::Written> H5Writer::WriteDataset(H5DatasetWriter& ds) {
  std::vector<StoredChunk> chunks;
  {
    std::lock_guard<std::mutex> lock(ds.mu_);
    chunks = std::move(ds.chunks_);
  }
  const DatasetOptions& o = ds.options_;
  const std::vector<uint64_t> chunk_dims = ToU64(o.chunk_shape);
  // Chunks beyond the final extent of dimension 0 (a stream's padding) are not part of it.
  const uint64_t grid0 = index::CeilDiv(static_cast<uint64_t>(o.shape[0]), chunk_dims[0]);
  const auto write_at = [this](uint64_t a, ByteView b) { return WriteAt(a, b); };
  const uint64_t base = end_.load();
  uint64_t end = base;
  uint64_t btree = kUndefinedAddress;
  if (ds.log_ != nullptr) {
    if (!chunks.empty())
      return FailedPrecondition(ds.path_ + ": chunks recorded in memory as well as in the dataset's chunk log");
    // Replayed in B-tree order, twice: the count sizes the tree's levels.
    std::vector<int64_t> row_grid;
    for (size_t d = 1; d < o.shape.size(); ++d) row_grid.push_back(index::CeilDiv(o.shape[d], o.chunk_shape[d]));
    TESSERA_ASSIGN_OR_RETURN(const uint64_t count, ds.log_->CountLive(row_grid, grid0));
    ChunkLog::Cursor cursor = ds.log_->Read(row_grid, grid0, ds.log_address_shift_);
    TESSERA_ASSIGN_OR_RETURN(btree, WriteChunkBTree(count, [&cursor] { return cursor.Next(); }, chunk_dims, base,
                                                    write_at, &end));
  } else {
    // The last record of each chunk wins; removed chunks drop out.
    std::stable_sort(chunks.begin(), chunks.end(),
                     [](const StoredChunk& a, const StoredChunk& b) { return a.coords < b.coords; });
    std::vector<StoredChunk> live;
    live.reserve(chunks.size());
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (i + 1 < chunks.size() && chunks[i + 1].coords == chunks[i].coords) continue;
      if (chunks[i].address != kUndefinedAddress) live.push_back(std::move(chunks[i]));
    }
    std::erase_if(live, [&](const StoredChunk& c) { return c.coords[0] >= grid0; });
    TESSERA_ASSIGN_OR_RETURN(btree, WriteChunkBTree(&live, chunk_dims, base, write_at, &end));
  }
  end_.store(end);

  std::vector<Message> messages;
  std::vector<uint64_t> dims = ToU64(o.shape), max_dims = dims;
  if (o.unlimited0) max_dims[0] = kUnlimited;
  messages.push_back({MessageType::kDataspace, EncodeDataspace(dims, max_dims)});
  messages.push_back({MessageType::kDatatype, *EncodeNumericDatatype(o.dtype), 1});
  messages.push_back({MessageType::kFillValue, EncodeFillValue(o.fill.bytes), 1});
  messages.push_back(
      {MessageType::kLayout, EncodeChunkedLayout(btree, chunk_dims, static_cast<uint32_t>(ItemSize(o.dtype)))});
  if (!o.filters.empty()) messages.push_back({MessageType::kFilterPipeline, EncodeFilterPipeline(o.filters)});
  for (const Attribute& a : o.attributes) messages.push_back({MessageType::kAttribute, AttributeMessage(a)});
  Written w;
  TESSERA_ASSIGN_OR_RETURN(w.header_address, Append(EncodeObjectHeaderV1(messages)));
  return w;
}

Result<H5Writer::Written> H5Writer::WriteGroup(Node& group) {
  // Children first: their entries need their addresses.
  std::vector<std::string> names;
  std::vector<SymbolEntry> entries;
  for (auto& [name, child] : group.children) {
    Written w;
    if (child->is_group) {
      TESSERA_ASSIGN_OR_RETURN(w, WriteGroup(*child));
    } else {
      TESSERA_ASSIGN_OR_RETURN(w, WriteDataset(*child->dataset));
    }
    names.push_back(name);
    SymbolEntry e;
    e.header_address = w.header_address;
    e.is_group = child->is_group;
    e.btree_address = w.btree_address;
    e.heap_address = w.heap_address;
    entries.push_back(e);
  }
  // The local heap with the names (its header, then its data segment).
  std::vector<uint64_t> offsets;
  Bytes segment;
  const uint64_t heap = Allocate(LocalHeapHeaderBytes());
  const Bytes heap_header = EncodeLocalHeap(names, heap + LocalHeapHeaderBytes(), &offsets, &segment);
  TESSERA_RETURN_IF_ERROR(WriteAt(heap, heap_header));
  TESSERA_RETURN_IF_ERROR(Append(segment).status());
  for (size_t i = 0; i < entries.size(); ++i) entries[i].name_offset = offsets[i];

  // Symbol table nodes of up to 2 * leaf K entries, in name order.
  const size_t per_node = 2 * kGroupLeafK;
  std::vector<uint64_t> children;  // SNODs, then nodes of each level
  std::vector<uint64_t> keys{0};   // key i: heap offset of the last name left of child i; key 0: ""
  for (size_t lo = 0; lo < entries.size(); lo += per_node) {
    const size_t hi = std::min(entries.size(), lo + per_node);
    TESSERA_ASSIGN_OR_RETURN(uint64_t snod,
                             Append(EncodeSymbolNode({entries.begin() + lo, entries.begin() + hi})));
    children.push_back(snod);
    keys.push_back(offsets[hi - 1]);
  }
  // The group B-tree, bottom-up, up to 2 * internal K children per node.
  const size_t fanout = 2 * kGroupInternalK;
  const uint64_t node_bytes = GroupBTreeNodeBytes();
  int level = 0;
  uint64_t root = kUndefinedAddress;
  do {
    const size_t nodes = std::max<size_t>(1, index::CeilDiv(children.size(), fanout));
    const uint64_t level_base = Allocate(nodes * node_bytes);
    std::vector<uint64_t> up_children, up_keys{keys[0]};
    for (size_t j = 0; j < nodes; ++j) {
      const size_t lo = j * fanout, hi = std::min(children.size(), lo + fanout);
      const uint64_t address = level_base + j * node_bytes;
      const uint64_t left = j > 0 ? address - node_bytes : kUndefinedAddress;
      const uint64_t right = j + 1 < nodes ? address + node_bytes : kUndefinedAddress;
      std::vector<uint64_t> node_children(children.begin() + lo, children.begin() + hi);
      std::vector<uint64_t> node_keys(keys.begin() + lo, keys.begin() + hi + 1);
      TESSERA_RETURN_IF_ERROR(WriteAt(address, EncodeGroupBTreeNode(level, left, right, node_keys, node_children)));
      up_children.push_back(address);
      up_keys.push_back(keys[hi]);
    }
    root = up_children.size() == 1 ? up_children[0] : kUndefinedAddress;
    children = std::move(up_children);
    keys = std::move(up_keys);
    ++level;
  } while (children.size() > 1);

  std::vector<Message> messages;
  messages.push_back({MessageType::kSymbolTable, EncodeSymbolTableMessage(root, heap)});
  for (const Attribute& a : group.attributes) messages.push_back({MessageType::kAttribute, AttributeMessage(a)});
  Written w;
  TESSERA_ASSIGN_OR_RETURN(w.header_address, Append(EncodeObjectHeaderV1(messages)));
  w.btree_address = root;
  w.heap_address = heap;
  return w;
}

Status H5Writer::Close() {
  if (closed_) return FailedPrecondition(path_ + ": HDF5 writer closed twice");
  Status st = [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(Written root, WriteGroup(root_));
    SymbolEntry entry;
    entry.header_address = root.header_address;
    entry.is_group = true;
    entry.btree_address = root.btree_address;
    entry.heap_address = root.heap_address;
    TESSERA_RETURN_IF_ERROR(WriteAt(0, EncodeSuperblockV0(end_.load(), entry)));
    // The file ends where the superblock says (Allocate may have reserved bytes never written).
    TESSERA_RETURN_IF_ERROR(file_->Truncate(end_.load()));
    return file_->Commit();
  }();
  if (!st.ok()) {
    Abandon();
    return st;
  }
  closed_ = true;
  return Status::Ok();
}

}  // namespace tessera::hdf5
