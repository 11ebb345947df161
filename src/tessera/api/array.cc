#include "tessera/api/array.h"

#include "tessera/api/driver_registry.h"
#include "tessera/api/transaction.h"

namespace tessera {

Array::Array(Format format, Location location, OpenOptions options, driver::OpenedArray opened,
             std::unique_ptr<RegionTarget> target)
    : format_(format),
      location_(std::move(location)),
      options_(std::move(options)),
      shape_(opened.source->shape()),
      chunk_shape_(opened.source->read_chunk_shape()),
      shard_shape_(std::move(opened.shard_shape)),
      dtype_(opened.source->dtype()),
      element_type_(opened.source->element_type()),
      fill_value_(opened.source->fill_value()),
      metadata_(std::move(opened.metadata)),
      description_(std::move(opened.description)),
      level_(opened.level),
      level_count_(opened.level_count),
      target_(std::move(target)),
      source_(std::move(opened.source)),
      objects_(std::move(opened.objects)) {
  if (element_type_) {
    // The element's bytes are the source's last dimension: not one of the array's.
    shape_.pop_back();
    chunk_shape_.pop_back();
    fill_value_.bytes = element_type_->fill;
  }
}

Array::~Array() = default;

Result<Hyperslab> Array::Select(std::string_view expression) const {
  return ParseSliceExpression(expression, shape());
}

std::shared_ptr<const ChunkSource> Array::source() const {
  std::lock_guard<std::mutex> lock(source_mu_);
  return source_;
}

Result<driver::OpenedArray> Array::OpenSourceAgain() const {
  // Cleared before opening: a write that finishes while the array is opened again marks it
  // stale once more, so the next read opens it again rather than missing that write.
  source_stale_.store(false);
  Result<driver::OpenedArray> opened = DriverOf(format_).Open(location_, options_);
  if (!opened.ok()) {
    source_stale_.store(true);
    return opened.status();
  }
  source_ = std::move(opened->source);  // the rest of `opened` is the caller's
  return opened;
}

Status Array::Read(const Hyperslab& selection, void* out, const ReadOptions& options) const {
  std::shared_lock<std::shared_mutex> resizing(resize_mu_);
  AccessGate::Scope reading(gate_, AccessGate::kRead);
  std::shared_ptr<const ChunkSource> source;
  {
    std::lock_guard<std::mutex> lock(source_mu_);
    if (source_stale_.load()) TESSERA_RETURN_IF_ERROR(OpenSourceAgain().status());
    source = source_;
  }
  if (objects_) {
    return Unsupported(location_.ToString() + ": its elements are variable-length (" + objects_->object_type().name +
                       ") and have no fixed-size layout: ReadObjects reads them");
  }
  if (element_type_) {
    // Each element whole: the source's trailing dimension of its bytes, selected entirely.
    TESSERA_RETURN_IF_ERROR(CheckSelection(selection, shape_));
    Hyperslab with_bytes = selection;
    with_bytes.dims.push_back({0, 1, static_cast<int64_t>(element_type_->item_bytes)});
    with_bytes.dropped.push_back(false);
    return ReadHyperslab(*source, with_bytes, static_cast<uint8_t*>(out), options);
  }
  return ReadHyperslab(*source, selection, static_cast<uint8_t*>(out), options);
}

Status Array::ReadObjects(const Hyperslab& selection, std::vector<std::string>* out, const ReadOptions& options) const {
  if (!objects_) {
    return FailedPrecondition(location_.ToString() + ": its elements are " + std::string(DataTypeName(dtype_)) +
                              " (fixed-size): Read reads them, ReadObjects only variable-length elements");
  }
  // Errors name the chunk (its key or the file and dataset) themselves.
  return ReadObjectHyperslab(*objects_, selection, out, options);
}

Status Array::RequireWritable(std::string_view writing) const {
  if (target_) return Status::Ok();
  return FailedPrecondition(location_.ToString() + ": " + std::string(writing) + ": the array is opened read-only (mode " +
                            std::string(ModeName(options_.mode)) + "); open it with mode r+ to write");
}

Status Array::WriteAll(std::span<const PendingWrite> writes, const WriteOptions& options) {
  std::shared_lock<std::shared_mutex> resizing(resize_mu_);
  AccessGate::Scope writing(gate_, AccessGate::kWrite);
  Status st = WriteSelections(*target_, writes, options);
  // Even a failed write may have rewritten some objects: reads must open the array again.
  source_stale_.store(true);
  if (!st.ok()) return st.WithContext(location_.ToString());
  return st;
}

Status Array::Write(const Hyperslab& selection, const SourceView& values, const WriteOptions& options) {
  TESSERA_RETURN_IF_ERROR(RequireWritable("write"));
  PendingWrite write{selection, values};
  return WriteAll({&write, 1}, options);
}

Status Array::Write(const Hyperslab& selection, const void* c_order_values, const WriteOptions& options) {
  return Write(selection, SourceView::Contiguous(c_order_values, selection, ItemSize(dtype_)), options);
}

Status Array::Resize(std::vector<int64_t> shape) {
  TESSERA_RETURN_IF_ERROR(RequireWritable("resize"));
  if (shape.size() != shape_.size()) {
    return InvalidArgument(location_.ToString() + ": resize to a rank-" + std::to_string(shape.size()) +
                           " shape: the array has rank " + std::to_string(shape_.size()) + " (the rank stays)");
  }
  for (int64_t extent : shape) {
    if (extent < 0) return InvalidArgument(location_.ToString() + ": resize: negative extent " + std::to_string(extent));
  }
  std::unique_lock<std::shared_mutex> resizing(resize_mu_);
  Status st = target_->Resize(shape);
  std::lock_guard<std::mutex> lock(source_mu_);
  // Opened again even after a failure: the resize may have cleared elements before it failed.
  Result<driver::OpenedArray> opened = OpenSourceAgain();
  if (opened.ok()) {
    shape_ = source_->shape();
    if (element_type_) shape_.pop_back();
    shard_shape_ = std::move(opened->shard_shape);
    metadata_ = std::move(opened->metadata);
    description_ = std::move(opened->description);
  }
  if (!st.ok()) return st.WithContext(location_.ToString());
  return opened.status();
}

Result<Transaction> Array::BeginTransaction() {
  TESSERA_RETURN_IF_ERROR(RequireWritable("transaction"));
  return Transaction(this);
}

Result<std::unique_ptr<Array>> OpenArray(const std::string& text, const OpenOptions& options) {
  if (options.mode != Mode::kRead && options.mode != Mode::kReadWrite) {
    return InvalidArgument(text + ": mode " + std::string(ModeName(options.mode)) +
                           " creates an array (CreateStream, tessera.create); an existing array opens with mode r "
                           "(read) or r+ (read and write)");
  }
  TESSERA_ASSIGN_OR_RETURN(Location location, ParseLocation(text, options.storage));
  Format format;
  if (options.format) {
    format = *options.format;
  } else {
    TESSERA_ASSIGN_OR_RETURN(format, DetectFormat(location));
  }
  const driver::FormatDriver& driver = DriverOf(format);
  TESSERA_ASSIGN_OR_RETURN(driver::OpenedArray opened, driver.Open(location, options));
  std::unique_ptr<RegionTarget> target;
  if (options.mode == Mode::kReadWrite) {
    Result<std::unique_ptr<RegionTarget>> opened_target = driver.OpenRegionTarget(location, options);
    if (!opened_target.ok()) return opened_target.status().WithContext("mode r+");
    target = std::move(opened_target).value();
  }
  return std::make_unique<Array>(format, std::move(location), options, std::move(opened), std::move(target));
}

}  // namespace tessera
