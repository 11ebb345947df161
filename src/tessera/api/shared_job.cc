#include "tessera/api/shared_job.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>

#include "tessera/api/driver_registry.h"
#include "tessera/store/http_client.h"
#include "tessera/store/memory_store.h"

namespace tessera::api_internal {
namespace {

// The scheme of the locations a job's writers store through and its unpublished levels are read
// through: "tessera-job://<id><path below the root>", <id> naming a registered job location.
constexpr char kScheme[] = "tessera-job";

std::string MarkerOf(const Location& root) { return root.ToString() + "/" + kJobMarkerKey; }

// The job's verdict from the marker `held` (nullopt: none) at `root`.
Status MarkerVerdict(const Location& root, const std::optional<Bytes>& held, const std::string& token,
                     bool first_look) {
  if (held && std::string(held->begin(), held->end()) == token) return Status::Ok();
  if (!held && first_look && root.is_file())
    return FailedPrecondition(root.ToString() + " is not shared with the client: this process does not see the job marker " +
                              MarkerOf(root) + " the client wrote before the job started (a local path on a worker with " +
                              "its own file system? write to a shared file system or to s3://)");
  return FailedPrecondition("job cancelled: the job marker " + MarkerOf(root) +
                            (held ? " belongs to another job" : " is gone") +
                            " (the client gave the job up after a failure, or another job replaced it)");
}

// A store that passes every read to `base` and stores a shard (any write) only while the job's
// marker in `root_store` (the store of `root`, opened once: one small GET per shard) holds its token:
// checked before each write and before each retry of its requests (a PUT cut off by an outage
// is not retried into a job the client gave up meanwhile).
class GuardedStore final : public Store {
 public:
  GuardedStore(std::shared_ptr<Store> base, std::shared_ptr<Store> root_store, Location root, std::string token)
      : base_(std::move(base)), root_store_(std::move(root_store)), root_(std::move(root)), token_(std::move(token)) {}

  Result<std::optional<Bytes>> Get(const std::string& key) const override { return base_->Get(key); }
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset, uint64_t length) const override {
    return base_->GetRange(key, offset, length);
  }
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override {
    return base_->GetSuffix(key, length);
  }
  Result<std::optional<SuffixRead>> GetSuffixAndSize(const std::string& key, uint64_t length) const override {
    return base_->GetSuffixAndSize(key, length);
  }
  Result<std::optional<uint64_t>> Size(const std::string& key) const override { return base_->Size(key); }
  Result<std::optional<VersionedValue>> GetVersioned(const std::string& key) const override {
    return base_->GetVersioned(key);
  }
  int io_concurrency() const override { return base_->io_concurrency(); }
  std::string Describe(const std::string& key) const override { return base_->Describe(key); }

  Status Set(const std::string& key, ByteView value) override {
    return Guarded([&] { return base_->Set(key, value); });
  }
  Status SetParts(const std::string& key, std::span<const ByteView> parts) override {
    return Guarded([&] { return base_->SetParts(key, parts); });
  }
  Status CopyFrom(const std::string& key, const ReadableStore& source, const std::string& source_key) override {
    return Guarded([&] { return base_->CopyFrom(key, source, source_key); });
  }
  Status Publish(const std::string& key, ByteView value) override {
    return Guarded([&] { return base_->Publish(key, value); });
  }
  Result<std::unique_ptr<WritableFile>> OpenWritableFile(const std::string& key) override {
    return Guarded([&] { return base_->OpenWritableFile(key); });
  }
  // Not writes_in_place(), whatever the base store: a file written piece by piece is renamed into
  // place long after it was opened, past the marker check; each whole write is checked instead.
  Status Erase(const std::string& key) override {
    return Guarded([&] { return base_->Erase(key); });
  }
  Result<bool> SetPartsIf(const std::string& key, std::span<const ByteView> parts,
                          const WriteCondition& condition) override {
    return Guarded([&] { return base_->SetPartsIf(key, parts, condition); });
  }
  Result<bool> EraseIf(const std::string& key, const WriteCondition& condition) override {
    return Guarded([&] { return base_->EraseIf(key, condition); });
  }
  Status Flush() override { return base_->Flush(); }
  Result<std::vector<std::string>> List(const std::string& prefix) const override { return base_->List(prefix); }

 private:
  Status Check() const {
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> held, root_store_->Get(kJobMarkerKey));
    return MarkerVerdict(root_, held, token_, /*first_look=*/false);
  }

  // Runs `write` (one call of `base_`) only while the job holds its marker: checked once before
  // the call and again before each retry of its requests (the guard is scoped to this thread's call).
  template <typename Write>
  auto Guarded(Write&& write) -> decltype(write()) {
    TESSERA_RETURN_IF_ERROR(Check());
    http::RetryGuard guard([this] { return Check(); });
    return write();
  }

  std::shared_ptr<Store> base_;
  std::shared_ptr<Store> root_store_;
  const Location root_;
  const std::string token_;
};

// A store whose values written through it stay in memory (the metadata of an unpublished level)
// and are read from there first; every other read goes to `base`.
class OverlayStore final : public Store {
 public:
  OverlayStore(std::shared_ptr<Store> base, std::shared_ptr<MemoryStore> top)
      : base_(std::move(base)), top_(std::move(top)) {}

  Result<std::optional<Bytes>> Get(const std::string& key) const override {
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> v, top_->Get(key));
    return v ? std::move(v) : base_->Get(key);
  }
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset, uint64_t length) const override {
    return OnTop(key) ? top_->GetRange(key, offset, length) : base_->GetRange(key, offset, length);
  }
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override {
    return OnTop(key) ? top_->GetSuffix(key, length) : base_->GetSuffix(key, length);
  }
  Result<std::optional<SuffixRead>> GetSuffixAndSize(const std::string& key, uint64_t length) const override {
    return OnTop(key) ? top_->GetSuffixAndSize(key, length) : base_->GetSuffixAndSize(key, length);
  }
  Result<std::optional<uint64_t>> Size(const std::string& key) const override {
    return OnTop(key) ? top_->Size(key) : base_->Size(key);
  }
  Result<std::optional<VersionedValue>> GetVersioned(const std::string& key) const override {
    return OnTop(key) ? top_->GetVersioned(key) : base_->GetVersioned(key);
  }
  int io_concurrency() const override { return base_->io_concurrency(); }
  std::string Describe(const std::string& key) const override { return base_->Describe(key); }

  Status Set(const std::string& key, ByteView value) override { return top_->Set(key, value); }
  Status Erase(const std::string& key) override { return top_->Erase(key); }
  Result<std::vector<std::string>> List(const std::string& prefix) const override {
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> keys, base_->List(prefix));
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> mine, top_->List(prefix));
    keys.insert(keys.end(), mine.begin(), mine.end());
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
  }

 private:
  bool OnTop(const std::string& key) const {
    Result<std::optional<uint64_t>> size = top_->Size(key);
    return size.ok() && size->has_value();
  }

  std::shared_ptr<Store> base_;
  std::shared_ptr<MemoryStore> top_;
};

// A registered job location: the real root, and either the token its writers check (a guarded
// location) or the in-memory metadata of its unpublished levels, per path below the root.
struct JobLocation {
  Location root;
  std::string token;
  std::map<std::string, std::shared_ptr<MemoryStore>> metadata;
};

struct Registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<JobLocation>> by_id;
  uint64_t next = 0;
};

Registry& Jobs() {
  static Registry* r = new Registry();  // never destroyed: stores opened late in exit may still look here
  return *r;
}

Result<std::shared_ptr<Store>> OpenJobStore(const std::string& path, bool create) {
  const size_t slash = path.find('/');
  const std::string id = path.substr(0, slash);
  const std::string below = slash == std::string::npos ? "" : path.substr(slash);
  std::shared_ptr<JobLocation> job;
  std::shared_ptr<MemoryStore> metadata;
  {
    Registry& r = Jobs();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.by_id.find(id);
    if (it == r.by_id.end())
      return NotFound(std::string(kScheme) + "://" + path + ": no such job location in this process");
    job = it->second;
    if (job->token.empty()) {
      std::shared_ptr<MemoryStore>& m = job->metadata[below];
      if (!m) m = std::make_shared<MemoryStore>();
      metadata = m;
    }
  }
  Location real = job->root;
  real.path += below;
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> base, OpenLocationStore(real, create));
  if (!metadata) {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> root_store, OpenLocationStore(job->root, /*create=*/false));
    return std::shared_ptr<Store>(std::make_shared<GuardedStore>(std::move(base), std::move(root_store), job->root, job->token));
  }
  return std::shared_ptr<Store>(std::make_shared<OverlayStore>(std::move(base), std::move(metadata)));
}

// Registers `job` and returns its location (the root's; levels are below it, as below the root).
Location Register(std::shared_ptr<JobLocation> job) {
  static std::once_flag once;
  std::call_once(once, [] { (void)RegisterStoreScheme(kScheme, OpenJobStore); });
  Registry& r = Jobs();
  std::lock_guard<std::mutex> lock(r.mu);
  const std::string id = "j" + std::to_string(r.next++);
  r.by_id[id] = std::move(job);
  Location out;
  out.scheme = kScheme;
  out.path = id;
  return out;
}

void Unregister(const Location& job) {
  Registry& r = Jobs();
  std::lock_guard<std::mutex> lock(r.mu);
  r.by_id.erase(job.path.substr(0, job.path.find('/')));
}

// `level` (the root or a location under it) as a location under the registered `job`.
Location Below(const Location& job, const Location& root, const Location& level) {
  Location out = job;
  out.path += level.path.substr(std::min(root.path.size(), level.path.size()));
  return out;
}

}  // namespace

Status WriteJobMarker(const Location& root, const std::string& token) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(root, /*create=*/true));
  TESSERA_RETURN_IF_ERROR(store->Set(kJobMarkerKey, ByteView(reinterpret_cast<const uint8_t*>(token.data()), token.size())));
  return store->Flush();
}

Status RemoveJobMarker(const Location& root) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(root, /*create=*/false));
  return store->Erase(kJobMarkerKey);
}

Result<bool> HasJobMarker(const Location& root) {
  if (root.is_file()) {
    std::error_code ec;
    return std::filesystem::exists(std::filesystem::path(root.path) / kJobMarkerKey, ec);
  }
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(root, /*create=*/false));
  TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> size, store->Size(kJobMarkerKey));
  return size.has_value();
}

Status CheckJobMarker(const Location& root, const std::string& token, bool first_look) {
  std::optional<Bytes> held;
  std::error_code ec;
  // A local root this process does not have at all has no marker (opening its store would make it).
  if (!root.is_file() || std::filesystem::exists(std::filesystem::path(root.path), ec)) {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(root, /*create=*/false));
    TESSERA_ASSIGN_OR_RETURN(held, store->Get(kJobMarkerKey));
  }
  return MarkerVerdict(root, held, token, first_look);
}

Location GuardedLocation(const Location& root, const Location& level, const std::string& token) {
  auto job = std::make_shared<JobLocation>();
  job->root = root;
  job->token = token;
  return Below(Register(std::move(job)), root, level);
}

void ForgetGuardedLocation(const Location& guarded) { Unregister(guarded); }

Result<std::unique_ptr<Array>> OpenUnpublished(const Location& root, Format format, const ArraySpec& resolved,
                                               int level) {
  auto job = std::make_shared<JobLocation>();
  job->root = root;
  const Location at = Register(std::move(job));
  const driver::FormatDriver& d = DriverOf(format);
  auto level_location = [&](int j) { return resolved.multiscale() ? d.LevelLocation(root, j) : root; };
  Result<std::unique_ptr<Array>> out = Status::Ok();
  Status st;
  for (int j = 0; j <= level && st.ok(); ++j)
    st = d.CreateMetadata(LevelSpec(resolved, format, j), Below(at, root, level_location(j)));
  if (st.ok()) {
    OpenOptions open;
    open.format = format;
    open.level = d.OpenLevelOf(level);
    out = OpenArray(Below(at, root, level_location(level)).ToString(), open);
  } else {
    out = st;
  }
  // The array keeps the stores it opened; the registration was only for opening them.
  Unregister(at);
  return out;
}

}  // namespace tessera::api_internal
