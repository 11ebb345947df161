#include "tessera/hdf5/h5_virtual.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "tessera/hdf5/h5_checksum.h"
#include "tessera/hdf5/h5_numeric_conversion.h"
#include "tessera/hdf5/h5_reader.h"
#include "tessera/read/selection_read.h"

namespace tessera::hdf5 {
namespace {

constexpr uint8_t kLayoutClassVirtual = 3;
constexpr uint8_t kEntrySourceIsThisFile = 0x04;
// More entries than bytes in the block is corrupt; this bounds the allocation before parsing.
constexpr size_t kMinEntryBytes = 2 + 16 + 16;

// Positions [k, k + n) map to virtual indices v0 + t * v_step and source indices s0 + t * s_step.
struct Progression {
  uint64_t n = 0, v0 = 0, v_step = 1, s0 = 0, s_step = 1;
  bool singles = false;  // built from single positions (may grow by one at a time)
};

// The progressions covering positions [k0, k1) of a pair of selection dimensions: split wherever
// either side leaves a block, single positions with constant steps merged.
std::vector<Progression> Progressions(const SelectionDim& v, const SelectionDim& s, uint64_t k0, uint64_t k1) {
  std::vector<Progression> out;
  for (uint64_t k = k0; k < k1;) {
    const uint64_t end = std::min({k1, (k / v.block + 1) * v.block, (k / s.block + 1) * s.block});
    const uint64_t vi = SelectedIndexAt(v, k), si = SelectedIndexAt(s, k);
    if (end - k == 1 && !out.empty() && out.back().singles) {
      Progression& p = out.back();
      if (p.n == 1 && vi > p.v0 && si > p.s0) {
        p.v_step = vi - p.v0;
        p.s_step = si - p.s0;
        p.n = 2;
        k = end;
        continue;
      }
      if (vi == p.v0 + p.n * p.v_step && si == p.s0 + p.n * p.s_step) {
        ++p.n;
        k = end;
        continue;
      }
    }
    out.push_back({end - k, vi, 1, si, 1, end - k == 1});
    k = end;
  }
  return out;
}

// Per dimension of one side of a mapping: the paired (non-unit) dimension it is, or -1 for a unit
// dimension at a fixed index.
struct SidePlan {
  std::vector<SelectionDim> dims;
  std::vector<int> pair;  // -1: unit
};

// `unlimited[d]`: dimension d was unlimited before clipping; it pairs even when it clipped to one
// element, so both sides of a mapping pair the same dimensions whatever the sources' extents.
SidePlan PlanSide(std::vector<SelectionDim> dims, const std::vector<bool>& unlimited) {
  SidePlan p;
  int j = 0;
  for (size_t d = 0; d < dims.size(); ++d) p.pair.push_back(SelectedCount(dims[d]) == 1 && !unlimited[d] ? -1 : j++);
  p.dims = std::move(dims);
  return p;
}

std::vector<bool> UnlimitedDims(const std::vector<SelectionDim>& dims) {
  std::vector<bool> out;
  for (const SelectionDim& d : dims) out.push_back(d.count == kSelectionUnlimited || d.block == kSelectionUnlimited);
  return out;
}

// An unlimited source dimension clipped to the source's extent: an unlimited block runs to the end;
// an unlimited count takes the whole blocks that fit.
SelectionDim ClipToExtent(SelectionDim d, uint64_t extent) {
  const uint64_t room = extent > d.start ? extent - d.start : 0;
  if (d.block == kSelectionUnlimited) {
    d.block = room;
    d.count = 1;
  } else if (d.count == kSelectionUnlimited) {
    d.count = room >= d.block ? (room - d.block) / d.stride + 1 : 0;
  }
  return d;
}

// An unlimited virtual dimension sized to select `n` elements (what its paired source dimension
// selects after clipping).
SelectionDim SizeToElements(SelectionDim d, uint64_t n) {
  if (d.block == kSelectionUnlimited) {
    d.block = n;
    d.count = 1;
  } else if (d.count == kSelectionUnlimited) {
    d.count = n / d.block;
  }
  return d;
}

std::vector<uint64_t> PairedCounts(const SidePlan& p) {
  std::vector<uint64_t> n;
  for (size_t d = 0; d < p.dims.size(); ++d)
    if (p.pair[d] >= 0) n.push_back(SelectedCount(p.dims[d]));
  return n;
}

std::string CountsText(const std::vector<uint64_t>& n) {
  std::string s;
  for (size_t i = 0; i < n.size(); ++i) s += (i ? " x " : "") + std::to_string(n[i]);
  return s.empty() ? "1" : s;
}

// How far a fixed virtual selection may reach along an unlimited dimension (tessera's dataspace
// limit), so that its positions are computed without overflow.
constexpr uint64_t kMaxVirtualReach = uint64_t{1} << 62;

// Most sources one printf-style mapping expands to.
constexpr uint64_t kMaxPrintfBlocks = 1 << 16;

// Whether a stored source name holds "%b" (HDF5's printf-style names; "%%" is a literal "%").
bool HasBlockPattern(const std::string& stored) {
  for (size_t i = 0; i + 1 < stored.size(); ++i) {
    if (stored[i] != '%') continue;
    if (stored[i + 1] == 'b') return true;
    if (stored[i + 1] == '%') ++i;
  }
  return false;
}

// A stored source name as HDF5 reads it for block `block`: "%%" is "%", "%b" the block number.
std::string SubstituteBlock(const std::string& stored, uint64_t block) {
  std::string out;
  for (size_t i = 0; i < stored.size(); ++i) {
    if (stored[i] == '%' && i + 1 < stored.size() && (stored[i + 1] == '%' || stored[i + 1] == 'b')) {
      out += stored[i + 1] == '%' ? std::string("%") : std::to_string(block);
      ++i;
    } else {
      out += stored[i];
    }
  }
  return out;
}

}  // namespace

bool IsVirtualLayout(const HeaderMessage& m) { return m.body.size() >= 2 && m.body[0] >= 3 && m.body[1] == kLayoutClassVirtual; }

Result<GlobalHeapId> ParseVirtualLayout(const RawFile& file, const HeaderMessage& m) {
  FieldReader r(m.body, file, "data layout message", m.addr);
  const uint8_t version = r.U8();
  r.U8();
  const uint64_t addr = r.Addr();
  const uint32_t index = r.U32();
  if (!r.ok()) return r.status();
  if (version < 4) return r.Fail("virtual layout in a version " + std::to_string(version) + " message (expected 4 or 5)");
  return GlobalHeapId{addr, index};
}

Result<std::vector<VirtualMapping>> DecodeVirtualMappings(ByteView block, const std::string& what) {
  auto corrupt = [&](size_t at, const std::string& message) {
    return CorruptData(what + ": virtual dataset mappings at byte " + std::to_string(at) + " of " +
                       std::to_string(block.size()) + ": " + message);
  };
  if (block.size() < 1 + 8 + 4) return corrupt(0, "truncated (" + std::to_string(block.size()) + " bytes)");
  const size_t body = block.size() - 4;
  const uint32_t stored = DecodeFixed32LE(block.data() + body);
  const uint32_t computed = Lookup3Hash(block.subspan(0, body));
  if (stored != computed) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "checksum mismatch (stored 0x%08x, computed 0x%08x)", stored, computed);
    return corrupt(body, buf);
  }
  const uint8_t version = block[0];
  if (version > 1) return corrupt(0, "encoding version " + std::to_string(version) + " (expected 0 or 1)");
  const uint64_t entries = DecodeFixed64LE(block.data() + 1);
  if (entries > body / kMinEntryBytes) return corrupt(1, std::to_string(entries) + " entries in " + std::to_string(body) + " bytes");
  ByteView data = block.subspan(0, body);
  size_t pos = 9;
  auto take_string = [&](std::string* s) -> Status {
    const uint8_t* begin = data.data() + pos;
    const uint8_t* end = data.data() + data.size();
    const uint8_t* nul = std::find(begin, end, uint8_t{0});
    if (nul == end) return corrupt(pos, "unterminated name");
    s->assign(begin, nul);
    pos += static_cast<size_t>(nul - begin) + 1;
    return Status::Ok();
  };
  std::vector<VirtualMapping> out;
  for (uint64_t i = 0; i < entries; ++i) {
    VirtualMapping m;
    uint8_t flags = 0;
    if (version == 1) {
      if (pos >= data.size()) return corrupt(pos, "truncated entry " + std::to_string(i));
      flags = data[pos++];
      if (flags & ~kEntrySourceIsThisFile) {
        char text[8];
        std::snprintf(text, sizeof text, "0x%02x", flags);
        return Unsupported(what + ": virtual dataset mapping " + std::to_string(i) + " has flags " + text +
                           " (tessera reads entries that store their names, or 0x04: the same file)");
      }
    }
    if (flags & kEntrySourceIsThisFile) {
      m.source_file = ".";
    } else {
      TESSERA_RETURN_IF_ERROR(take_string(&m.source_file));
    }
    TESSERA_RETURN_IF_ERROR(take_string(&m.source_dataset));
    const std::string entry_what = what + ": virtual dataset mapping " + std::to_string(i);
    TESSERA_ASSIGN_OR_RETURN(m.source, DecodeSelection(data, &pos, entry_what + " (source selection)"));
    TESSERA_ASSIGN_OR_RETURN(m.virtual_selection, DecodeSelection(data, &pos, entry_what + " (virtual selection)"));
    m.printf_names = (m.source_file != "." && HasBlockPattern(m.source_file)) || HasBlockPattern(m.source_dataset);
    if (m.printf_names) {
      // A source per block: the virtual selection repeats blocks along exactly one dimension without
      // limit, each block the whole (fixed) source selection.
      size_t unlimited_counts = 0;
      for (const SelectionDim& d : m.virtual_selection.dims) {
        if (d.block == kSelectionUnlimited) unlimited_counts = 2;
        if (d.count == kSelectionUnlimited) ++unlimited_counts;
      }
      if (unlimited_counts != 1 || m.source.unlimited())
        return Unsupported(entry_what + ": printf-style source names (\"" + m.source_file + "\", \"" + m.source_dataset +
                           "\") with virtual selection " + m.virtual_selection.ToString() + " and source selection " +
                           m.source.ToString() + " (tessera reads one unlimited count of blocks, a fixed source)");
    } else {
      if (m.source_file != ".") m.source_file = SubstituteBlock(m.source_file, 0);
      m.source_dataset = SubstituteBlock(m.source_dataset, 0);
    }
    out.push_back(std::move(m));
  }
  if (pos != data.size()) return corrupt(pos, std::to_string(data.size() - pos) + " bytes after the last entry");
  return out;
}

// ---------------------------------------------------------------------------------------------

struct VirtualStorage::Source {
  std::shared_ptr<Hdf5Dataset> dataset;  // null: the source is missing (its elements hold the fill value)
  SidePlan virtual_plan, source_plan;    // the per-dimension path
  bool by_element_order = false;         // the element-order path, with:
  std::shared_ptr<const OrderedSelection> virtual_order, source_order;
  DataType source_dtype = DataType::kUInt8;
  size_t source_item_bytes = 0;  // one source element (with any trailing dimensions)
  bool convert = false;          // source_dtype converts into the virtual dataset's
};

VirtualStorage::~VirtualStorage() = default;

namespace {

// Whether the source `m` names exists (its file opens and holds the dataset), as the HDF5 library
// probes printf-style sources. A name the policy refuses is an error, not a missing source.
Result<bool> SourceExists(const std::shared_ptr<RawFile>& file, const VirtualMapping& m, const LinkedFilePolicy& policy,
                          const std::string& what) {
  auto open = [&]() -> Result<std::shared_ptr<Hdf5File>> {
    if (m.source_file == ".") return Hdf5File::Open(file);
    if (file->store()) {
      TESSERA_ASSIGN_OR_RETURN(std::string key, ResolveLinkedKey(file->key(), m.source_file, what));
      TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<RawFile> raw, RawFile::Open(file->store(), key));
      return Hdf5File::Open(std::move(raw));
    }
    TESSERA_ASSIGN_OR_RETURN(std::string path, ResolveLinkedFile(file->path(), m.source_file, policy, what));
    return Hdf5File::Open(path);
  };
  Result<std::shared_ptr<Hdf5File>> opened = open();
  if (!opened.ok()) {
    if (opened.status().kind() == ErrorKind::kNotFound) return false;
    return Status(opened.status().kind(), what + ": " + opened.status().message());
  }
  LinkedFilePolicy inner = policy;
  inner.depth += 1;
  (*opened)->set_linked_file_policy(inner);
  Result<std::unique_ptr<Hdf5Dataset>> ds = (*opened)->OpenDataset(m.source_dataset);
  return ds.ok() || ds.status().kind() != ErrorKind::kNotFound;  // other failures surface on read
}

// A printf-style mapping as one mapping per existing source: block b of the unlimited dimension
// takes the source whose names have b for "%b", from block 0 up to the first that is missing.
Result<std::vector<VirtualMapping>> ExpandPrintfMapping(const std::shared_ptr<RawFile>& file, const VirtualMapping& m,
                                                        const LinkedFilePolicy& policy, const std::string& where) {
  size_t u = 0;
  while (m.virtual_selection.dims[u].count != kSelectionUnlimited) ++u;
  const SelectionDim& repeated = m.virtual_selection.dims[u];
  std::vector<VirtualMapping> out;
  for (uint64_t b = 0; b < kMaxPrintfBlocks; ++b) {
    VirtualMapping one = m;
    one.printf_names = false;
    if (m.source_file != ".") one.source_file = SubstituteBlock(m.source_file, b);
    one.source_dataset = SubstituteBlock(m.source_dataset, b);
    SelectionDim& d = one.virtual_selection.dims[u];
    d.start = repeated.start + b * repeated.stride;
    d.count = 1;
    const std::string what = where + ": virtual source block " + std::to_string(b) + " (\"" + one.source_file +
                             "\", dataset \"" + one.source_dataset + "\")";
    TESSERA_ASSIGN_OR_RETURN(bool exists, SourceExists(file, one, policy, what));
    if (!exists) break;
    out.push_back(std::move(one));
  }
  return out;
}

}  // namespace

Result<std::shared_ptr<VirtualStorage>> VirtualStorage::Open(std::shared_ptr<RawFile> file, GlobalHeapId id,
                                                             const std::vector<uint64_t>& dims,
                                                             const std::vector<uint64_t>& max_dims, DataType dtype,
                                                             size_t item_bytes, const LinkedFilePolicy& policy,
                                                             std::string what) {
  if (policy.depth >= kMaxLinkedFileDepth)
    return Unsupported(file->path() + ": " + what + ": virtual datasets nested more than " +
                       std::to_string(kMaxLinkedFileDepth) + " deep (a mapping cycle?)");
  std::shared_ptr<VirtualStorage> s(new VirtualStorage());
  const std::string where = file->path() + ": " + what;
  for (const std::string& open : policy.virtual_chain)
    if (open == where)
      return Unsupported(where + ": its virtual mappings lead back to itself (a cycle through " +
                         std::to_string(policy.virtual_chain.size()) + " virtual datasets)");
  TESSERA_ASSIGN_OR_RETURN(Bytes block, GlobalHeap::Of(file)->Read(id));
  TESSERA_ASSIGN_OR_RETURN(std::vector<VirtualMapping> decoded, DecodeVirtualMappings(block, where));
  bool printf_mappings = false;
  for (const VirtualMapping& m : decoded) {
    if (!m.printf_names) {
      s->mappings_.push_back(m);
      continue;
    }
    printf_mappings = true;
    TESSERA_ASSIGN_OR_RETURN(std::vector<VirtualMapping> blocks, ExpandPrintfMapping(file, m, policy, where));
    s->mappings_.insert(s->mappings_.end(), blocks.begin(), blocks.end());
  }
  for (size_t i = 0; i < s->mappings_.size(); ++i) {
    const VirtualMapping& m = s->mappings_[i];
    const std::string map_what = where + ": virtual source " + std::to_string(i);
    if (!m.virtual_selection.regular()) {
      TESSERA_ASSIGN_OR_RETURN(OrderedSelection order,
                               OrderedSelection::Make(m.virtual_selection, dims, map_what + " (virtual selection)"));
      s->virtual_orders_.push_back(std::make_shared<const OrderedSelection>(std::move(order)));
    } else {
      s->virtual_orders_.push_back(nullptr);
    }
    const std::vector<SelectionDim> v = m.virtual_selection.regular() ? m.virtual_selection.Resolve(dims)
                                                                        : std::vector<SelectionDim>(dims.size());
    if (v.size() != dims.size())
      return CorruptData(map_what + ": virtual selection of rank " + std::to_string(v.size()) + " in a rank-" +
                         std::to_string(dims.size()) + " dataset");
    const std::vector<bool> unlimited = UnlimitedDims(v);
    // (Past the stored extent of an unlimited dimension is fine: the extent follows the mappings,
    // up to the largest dataspace tessera reads.)
    for (size_t d = 0; d < v.size() && m.virtual_selection.regular(); ++d)
      if (!unlimited[d] && !SelectionFitsExtent(v[d], d < max_dims.size() && max_dims[d] == kUnlimited
                                                          ? kMaxVirtualReach : dims[d]))
        return CorruptData(map_what + ": virtual selection " + m.virtual_selection.ToString() + " leaves dimension " +
                           std::to_string(d) + " (extent " + std::to_string(dims[d]) + ")");
    if (m.source_file == ".") {
      s->resolved_.push_back("");
    } else if (file->store()) {
      TESSERA_ASSIGN_OR_RETURN(std::string key, ResolveLinkedKey(file->key(), m.source_file, map_what));
      s->resolved_.push_back(std::move(key));
    } else {
      TESSERA_ASSIGN_OR_RETURN(std::string path, ResolveLinkedFile(file->path(), m.source_file, policy, map_what));
      s->resolved_.push_back(std::move(path));
    }
  }
  s->file_ = std::move(file);
  s->what_ = std::move(what);
  s->dims_ = dims;
  s->dtype_ = dtype;
  s->item_bytes_ = item_bytes;
  s->policy_ = policy;
  s->policy_.depth += 1;
  s->policy_.virtual_chain.push_back(where);
  s->sources_.resize(s->mappings_.size());
  // With unlimited mappings the extent follows the sources (HDF5's "last available" view): each
  // unlimited dimension reaches as far as the mappings, clipped to their sources, do.
  std::vector<uint64_t> reach(dims.size(), 0);
  bool any_unlimited = printf_mappings;
  for (size_t i = 0; i < s->mappings_.size(); ++i) {
    if (!s->mappings_[i].virtual_selection.unlimited()) continue;
    any_unlimited = true;
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const Source> source, s->OpenSource(i));
    if (!source->dataset) continue;
    const std::vector<SelectionDim>& v = source->virtual_plan.dims;
    const std::vector<bool> unlimited = UnlimitedDims(s->mappings_[i].virtual_selection.Resolve(dims));
    for (size_t d = 0; d < v.size(); ++d)
      if (unlimited[d] && SelectedCount(v[d]) > 0)
        reach[d] = std::max(reach[d], SelectedIndexAt(v[d], SelectedCount(v[d]) - 1) + 1);
  }
  if (any_unlimited) {
    for (size_t i = 0; i < s->mappings_.size(); ++i) {
      if (s->mappings_[i].virtual_selection.unlimited()) continue;
      if (const auto& order = s->virtual_orders_[i]) {
        for (size_t d = 0; d < dims.size(); ++d) reach[d] = std::max(reach[d], order->bounds_hi()[d]);
        continue;
      }
      const std::vector<SelectionDim> v = s->mappings_[i].virtual_selection.Resolve(dims);
      // A mapping that selects nothing ("all" over a dimension of extent 0) reaches nowhere (and
      // has no last element to ask SelectedIndexAt for: its block is 0).
      if (std::any_of(v.begin(), v.end(), [](const SelectionDim& d) { return SelectedCount(d) == 0; })) continue;
      for (size_t d = 0; d < v.size(); ++d)
        reach[d] = std::max(reach[d], SelectedIndexAt(v[d], SelectedCount(v[d]) - 1) + 1);
    }
    for (size_t d = 0; d < dims.size(); ++d)
      if (max_dims.size() == dims.size() && max_dims[d] == kUnlimited) s->dims_[d] = reach[d];
  }
  return s;
}

Result<std::shared_ptr<const VirtualStorage::Source>> VirtualStorage::OpenSource(size_t i) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (sources_[i]) return sources_[i];
  }
  const VirtualMapping& m = mappings_[i];
  const std::string map_what = file_->path() + ": " + what_ + ": virtual source " + std::to_string(i) + " (\"" +
                               m.source_file + "\", dataset \"" + m.source_dataset + "\")";
  auto source = std::make_shared<Source>();
  auto open_file = [&]() -> Result<std::shared_ptr<Hdf5File>> {
    if (resolved_[i].empty()) return Hdf5File::Open(file_);
    if (!file_->store()) return Hdf5File::Open(resolved_[i]);
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<RawFile> raw, RawFile::Open(file_->store(), resolved_[i]));
    return Hdf5File::Open(std::move(raw));
  };
  const std::string dataset_key = resolved_[i] + "\n" + m.source_dataset;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = datasets_.find(dataset_key); it != datasets_.end()) {
      source->dataset = it->second;
      known = true;
    }
  }
  if (!known) {
    Result<std::shared_ptr<Hdf5File>> opened = open_file();
    // A missing source file or dataset reads as the fill value, as the HDF5 library reads it.
    if (!opened.ok() && opened.status().kind() != ErrorKind::kNotFound)
      return Status(opened.status().kind(), map_what + ": " + opened.status().message());
    if (opened.ok()) {
      (*opened)->set_linked_file_policy(policy_);
      Result<std::unique_ptr<Hdf5Dataset>> ds = (*opened)->OpenDataset(m.source_dataset);
      if (!ds.ok() && ds.status().kind() != ErrorKind::kNotFound)
        return Status(ds.status().kind(), map_what + ": " + ds.status().message());
      if (ds.ok()) source->dataset = std::move(*ds);
    }
    std::lock_guard<std::mutex> lock(mu_);
    source->dataset = datasets_.emplace(dataset_key, source->dataset).first->second;
  }
  if (!source->dataset) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!sources_[i]) sources_[i] = source;
    return sources_[i];
  }
  const Hdf5Dataset& ds = *source->dataset;
  const std::vector<uint64_t>& extent = ds.dataspace().dims;
  // The source's element: its datatype's size; a source of another integer or float type is
  // converted (both without trailing dimensions of their own).
  source->source_dtype = ds.dtype();
  source->source_item_bytes = ds.datatype().size;
  const bool plain_elements = !ds.element_type() && ds.shape().size() == extent.size() &&
                              ds.datatype().size == ItemSize(ds.dtype()) && item_bytes_ == ItemSize(dtype_);
  if (ds.dtype() != dtype_ || ds.datatype().size != item_bytes_) {
    if (!plain_elements || !CanConvertNumeric(ds.dtype(), dtype_))
      return Unsupported(map_what + ": the source's element type " + ds.datatype().description + " differs from the " +
                         "virtual dataset's " + std::string(DataTypeName(dtype_)) +
                         " (tessera converts between integer and float types, not float16 into integers wider than a byte)");
    source->convert = true;
  }
  const bool regular = m.virtual_selection.regular() && m.source.regular();
  const bool unlimited = m.virtual_selection.unlimited() || m.source.unlimited();
  if (regular) {
    const std::vector<SelectionDim> virtual_dims = m.virtual_selection.Resolve(dims_);
    const std::vector<bool> virtual_unlimited = UnlimitedDims(virtual_dims);
    source->virtual_plan = PlanSide(virtual_dims, virtual_unlimited);
    std::vector<SelectionDim> source_dims = m.source.Resolve(extent);
    const std::vector<bool> source_unlimited = UnlimitedDims(source_dims);
    for (size_t d = 0; d < source_dims.size() && d < extent.size(); ++d)
      if (source_unlimited[d]) source_dims[d] = ClipToExtent(source_dims[d], extent[d]);
    source->source_plan = PlanSide(source_dims, source_unlimited);
    const SidePlan& sp = source->source_plan;
    // Unlimited virtual dimensions select what their paired source dimensions do.
    const std::vector<uint64_t> source_counts = PairedCounts(sp);
    SidePlan& vp = source->virtual_plan;
    for (size_t d = 0; d < vp.dims.size(); ++d) {
      if (!virtual_unlimited[d]) continue;
      const size_t j = static_cast<size_t>(vp.pair[d]);
      vp.dims[d] = SizeToElements(vp.dims[d], j < source_counts.size() ? source_counts[j] : 0);
    }
    if (sp.dims.size() != extent.size())
      return CorruptData(map_what + ": source selection of rank " + std::to_string(sp.dims.size()) + " for a rank-" +
                         std::to_string(extent.size()) + " source");
    for (size_t d = 0; d < sp.dims.size(); ++d)
      if (!SelectionFitsExtent(sp.dims[d], extent[d]))
        return CorruptData(map_what + ": source selection " + m.source.ToString() + " leaves dimension " +
                           std::to_string(d) + " of the source (extent " + std::to_string(extent[d]) + ")");
    const std::vector<uint64_t> vn = PairedCounts(source->virtual_plan), sn = PairedCounts(sp);
    if (vn != sn && unlimited)
      return Unsupported(map_what + ": the unlimited source selection (" + CountsText(sn) +
                         " elements) and the virtual selection (" + CountsText(vn) +
                         ") differ in shape beyond unit dimensions; tessera reads unlimited mappings of one shape");
    source->by_element_order = vn != sn;
  } else {
    if (unlimited)
      return Unsupported(map_what + ": an unlimited selection paired with an irregular or point selection");
    source->by_element_order = true;
  }
  if (source->by_element_order) {
    // Point lists, block lists and reshaping mappings: paired element by element in HDF5's order.
    TESSERA_ASSIGN_OR_RETURN(OrderedSelection v, OrderedSelection::Make(m.virtual_selection, dims_, map_what + " (virtual selection)"));
    TESSERA_ASSIGN_OR_RETURN(OrderedSelection src, OrderedSelection::Make(m.source, extent, map_what + " (source selection)"));
    if (v.size() != src.size())
      return CorruptData(map_what + ": the source selection " + m.source.ToString() + " holds " + std::to_string(src.size()) +
                         " elements and the virtual selection " + m.virtual_selection.ToString() + " " +
                         std::to_string(v.size()) + " (they must hold as many)");
    source->virtual_order = std::make_shared<const OrderedSelection>(std::move(v));
    source->source_order = std::make_shared<const OrderedSelection>(std::move(src));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!sources_[i]) sources_[i] = source;
  return sources_[i];
}

Status VirtualStorage::ReadBox(std::span<const uint64_t> origin, std::span<const uint64_t> extent, uint8_t* out) const {
  for (size_t i = 0; i < mappings_.size(); ++i) {
    // Skip mappings that miss the box before opening their source.
    if (const auto& order = virtual_orders_[i]) {
      bool hits = true;
      for (size_t d = 0; d < order->rank() && hits; ++d)
        hits = order->bounds_lo()[d] < origin[d] + extent[d] && origin[d] < order->bounds_hi()[d];
      if (!hits) continue;
    } else if (!mappings_[i].virtual_selection.unlimited()) {
      const std::vector<SelectionDim> v = mappings_[i].virtual_selection.Resolve(dims_);
      bool hits = true;
      for (size_t d = 0; d < v.size() && hits; ++d)
        hits = FirstSelectedAtOrAfter(v[d], origin[d]) < FirstSelectedAtOrAfter(v[d], origin[d] + extent[d]);
      if (!hits) continue;
    }
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const Source> source, OpenSource(i));
    if (!source->dataset) continue;
    TESSERA_RETURN_IF_ERROR(ReadMapping(*source, i, origin, extent, out));
  }
  return Status::Ok();
}

Status VirtualStorage::ReadMapping(const Source& source, size_t mapping, std::span<const uint64_t> origin,
                                   std::span<const uint64_t> extent, uint8_t* out) const {
  (void)mapping;
  if (source.by_element_order) return ReadByElementOrder(source, origin, extent, out);
  const SidePlan& vp = source.virtual_plan;
  const SidePlan& sp = source.source_plan;
  const size_t rank = vp.dims.size();
  for (size_t d = 0; d < rank; ++d) {
    if (SelectedCount(vp.dims[d]) == 0) return Status::Ok();  // an unlimited mapping whose source is empty
    if (vp.pair[d] < 0 && (vp.dims[d].start < origin[d] || vp.dims[d].start >= origin[d] + extent[d])) return Status::Ok();
  }
  // Per paired dimension j: the virtual dimension, and the progressions inside the box.
  std::vector<size_t> virtual_dim_of_pair;
  std::vector<std::vector<Progression>> progressions;
  std::vector<size_t> source_dim_of_pair;
  for (size_t d = 0; d < sp.dims.size(); ++d)
    if (sp.pair[d] >= 0) source_dim_of_pair.push_back(d);
  for (size_t d = 0; d < rank; ++d) {
    if (vp.pair[d] < 0) continue;
    const SelectionDim& vd = vp.dims[d];
    const SelectionDim& sd = sp.dims[source_dim_of_pair[virtual_dim_of_pair.size()]];
    const uint64_t k0 = FirstSelectedAtOrAfter(vd, origin[d]), k1 = FirstSelectedAtOrAfter(vd, origin[d] + extent[d]);
    virtual_dim_of_pair.push_back(d);
    progressions.push_back(Progressions(vd, sd, k0, k1));
    if (progressions.back().empty()) return Status::Ok();
  }
  // C-order strides of the box, in elements.
  std::vector<uint64_t> box_stride(rank, 1);
  for (size_t d = rank; d-- > 1;) box_stride[d - 1] = box_stride[d] * extent[d];
  uint64_t unit_offset = 0;
  for (size_t d = 0; d < rank; ++d)
    if (vp.pair[d] < 0) unit_offset += (vp.dims[d].start - origin[d]) * box_stride[d];

  const size_t pairs = progressions.size();
  std::vector<size_t> pick(pairs, 0);  // which progression of each pair
  Bytes buffer, converted;
  while (true) {
    Hyperslab slab;
    uint64_t elements = 1;
    for (size_t d = 0; d < sp.dims.size(); ++d) {
      if (sp.pair[d] < 0) {
        slab.dims.push_back({static_cast<int64_t>(sp.dims[d].start), 1, 1});
      } else {
        const Progression& p = progressions[static_cast<size_t>(sp.pair[d])][pick[static_cast<size_t>(sp.pair[d])]];
        slab.dims.push_back({static_cast<int64_t>(p.s0), static_cast<int64_t>(p.s_step), static_cast<int64_t>(p.n)});
        elements *= p.n;
      }
      slab.dropped.push_back(false);
    }
    // A source whose elements carry dimensions of their own (array or byte-string element types):
    // whole, after the dataspace's.
    const std::vector<int64_t>& source_shape = source.dataset->shape();
    for (size_t d = sp.dims.size(); d < source_shape.size(); ++d) {
      slab.dims.push_back({0, 1, source_shape[d]});
      slab.dropped.push_back(false);
    }
    buffer.resize(elements * source.source_item_bytes);
    ReadOptions single_thread;
    single_thread.threads = 1;  // this read already runs on one of the outer read's threads
    TESSERA_RETURN_IF_ERROR(ReadHyperslab(*source.dataset, slab, buffer.data(), single_thread));
    if (source.convert) {
      converted.resize(elements * item_bytes_);
      ConvertNumeric(source.source_dtype, buffer.data(), dtype_, converted.data(), elements);
      buffer.swap(converted);
    }
    // Scatter: the buffer is C order over the pairs' counts. When the innermost pair runs along
    // the box's last dimension with step 1, its elements are one contiguous run in the box too.
    const bool innermost_runs = pairs > 0 && virtual_dim_of_pair[pairs - 1] == rank - 1 &&
                                progressions[pairs - 1][pick[pairs - 1]].v_step == 1;
    const uint64_t run = innermost_runs ? progressions[pairs - 1][pick[pairs - 1]].n : 1;
    const size_t stepped = innermost_runs ? pairs - 1 : pairs;  // pairs advanced one at a time
    std::vector<uint64_t> t(pairs, 0);
    for (uint64_t e = 0; e < elements; e += run) {
      uint64_t at = unit_offset;
      for (size_t j = 0; j < pairs; ++j) {
        const Progression& p = progressions[j][pick[j]];
        const size_t d = virtual_dim_of_pair[j];
        at += (p.v0 + t[j] * p.v_step - origin[d]) * box_stride[d];
      }
      std::memcpy(out + at * item_bytes_, buffer.data() + e * item_bytes_, run * item_bytes_);
      for (size_t j = stepped; j-- > 0;) {
        if (++t[j] < progressions[j][pick[j]].n) break;
        t[j] = 0;
      }
    }
    size_t j = pairs;
    while (j-- > 0) {
      if (++pick[j] < progressions[j].size()) break;
      pick[j] = 0;
    }
    if (j == static_cast<size_t>(-1)) break;
  }
  return Status::Ok();
}

namespace {

// Virtual runs (inside the box) gathered before their source chunks are read: bounds the memory of
// one batch while letting runs that share a chunk share its decoding.
constexpr size_t kRunsPerBatch = size_t{1} << 16;

// `n` source elements from position `k` on, to land at element `at` of the box.
struct Piece {
  uint64_t k = 0, n = 0, at = 0;
};

// A piece's part inside one source chunk: `n` elements from element `offset` of the decoded chunk.
struct Fragment {
  uint64_t chunk = 0;  // C-order index of the chunk in the source's chunk grid
  uint64_t offset = 0, n = 0, at = 0;
};

}  // namespace

Status VirtualStorage::ReadByElementOrder(const Source& source, std::span<const uint64_t> origin,
                                          std::span<const uint64_t> extent, uint8_t* out) const {
  const Hdf5Dataset& ds = *source.dataset;
  const size_t rank = dims_.size();
  const size_t source_rank = source.source_order->rank();
  const std::vector<int64_t>& shape = ds.shape();
  const std::vector<int64_t>& chunk_shape = ds.read_chunk_shape();
  // The source's chunk grid over its dataspace dimensions; trailing dimensions of its elements lie
  // whole inside each chunk, so one element is source_item_bytes of the decoded chunk.
  std::vector<uint64_t> grid(source_rank), chunk_stride(source_rank, 1);
  for (size_t d = 0; d < source_rank; ++d) {
    const uint64_t c = static_cast<uint64_t>(std::max<int64_t>(chunk_shape[d], 1));
    grid[d] = (static_cast<uint64_t>(shape[d]) + c - 1) / c;
  }
  for (size_t d = source_rank; d-- > 1;) chunk_stride[d - 1] = chunk_stride[d] * static_cast<uint64_t>(chunk_shape[d]);
  const uint64_t chunk_elements = source_rank == 0 ? 1 : chunk_stride[0] * static_cast<uint64_t>(chunk_shape[0]);
  std::vector<uint64_t> box_stride(rank, 1);
  for (size_t d = rank; d-- > 1;) box_stride[d - 1] = box_stride[d] * extent[d];
  std::vector<uint64_t> hi(rank);
  for (size_t d = 0; d < rank; ++d) hi[d] = origin[d] + extent[d];

  const size_t in_bytes = source.source_item_bytes;
  std::vector<Piece> pieces;
  Status status;
  Bytes chunk;
  std::vector<int64_t> chunk_coords(shape.size(), 0);
  auto flush = [&]() -> Status {
    // Each virtual run split where the source's runs and chunks end.
    std::vector<Fragment> fragments;
    std::vector<uint64_t> coords(source_rank);
    for (const Piece& p : pieces) {
      for (uint64_t done = 0; done < p.n;) {
        const uint64_t run = std::min(p.n - done, source.source_order->At(p.k + done, coords));
        for (uint64_t inner = 0; inner < run;) {
          Fragment f;
          uint64_t last_in_chunk = ~uint64_t{0};
          for (size_t d = 0; d < source_rank; ++d) {
            const uint64_t c = static_cast<uint64_t>(std::max<int64_t>(chunk_shape[d], 1));
            const uint64_t x = coords[d] + (d + 1 == source_rank ? inner : 0);
            f.chunk = f.chunk * grid[d] + x / c;
            f.offset += (x % c) * chunk_stride[d];
            if (d + 1 == source_rank) last_in_chunk = c - x % c;
          }
          f.n = std::min(run - inner, last_in_chunk);
          f.at = p.at + done + inner;
          fragments.push_back(f);
          inner += f.n;
        }
        done += run;
      }
    }
    pieces.clear();
    std::stable_sort(fragments.begin(), fragments.end(), [](const Fragment& a, const Fragment& b) { return a.chunk < b.chunk; });
    for (size_t i = 0; i < fragments.size();) {
      const uint64_t id = fragments[i].chunk;
      uint64_t linear = id;
      for (size_t d = source_rank; d-- > 0;) {
        chunk_coords[d] = static_cast<int64_t>(linear % grid[d]);
        linear /= grid[d];
      }
      TESSERA_ASSIGN_OR_RETURN(bool stored, ds.ReadChunk(chunk_coords, &chunk));
      if (!stored) {
        // Not stored (ReadChunk leaves `chunk` as it was: empty, or the previous chunk's bytes):
        // a whole chunk of the source's fill value.
        const FillValue& fill = ds.fill_value();
        chunk.resize(chunk_elements * in_bytes);
        if (fill.bytes.empty() || chunk.size() % fill.bytes.size() != 0)
          return Unsupported(file_->path() + ": " + what_ + ": a source's fill value of " + std::to_string(fill.bytes.size()) +
                             " bytes for " + std::to_string(in_bytes) + "-byte elements");
        FillElements(chunk.data(), chunk.size() / fill.bytes.size(), fill);
      }
      for (; i < fragments.size() && fragments[i].chunk == id; ++i) {
        const Fragment& f = fragments[i];
        const uint64_t first = f.offset * in_bytes;
        if (first + f.n * in_bytes > chunk.size())
          return CorruptData(file_->path() + ": " + what_ + ": source chunk of " + std::to_string(chunk.size()) +
                             " bytes is shorter than the elements read from it");
        if (source.convert) ConvertNumeric(source.source_dtype, chunk.data() + first, dtype_, out + f.at * item_bytes_, f.n);
        else std::memcpy(out + f.at * item_bytes_, chunk.data() + first, f.n * in_bytes);
      }
    }
    return Status::Ok();
  };
  source.virtual_order->ForEachRunInBox(origin, hi, [&](uint64_t k, std::span<const uint64_t> coords, uint64_t n) {
    if (!status.ok()) return;
    uint64_t at = 0;
    for (size_t d = 0; d < rank; ++d) at += (coords[d] - origin[d]) * box_stride[d];
    pieces.push_back({k, n, at});
    if (pieces.size() >= kRunsPerBatch) status = flush();
  });
  TESSERA_RETURN_IF_ERROR(status);
  return flush();
}

}  // namespace tessera::hdf5
