#include "tessera/driver/driver_support.h"

#include <algorithm>
#include <filesystem>

#include "tessera/store/null_store.h"

namespace tessera::driver {

Result<Detection> DetectByKeys(const Location& location, std::initializer_list<const char*> keys) {
  if (location.is_file()) {
    std::error_code ec;
    for (const char* key : keys)
      if (std::filesystem::is_regular_file(std::filesystem::path(location.path) / key, ec)) return Detection::kDetected;
    return Detection::kAbsent;
  }
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
  for (const char* key : keys) {
    TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> size, store->Size(key));
    if (size) return Detection::kDetected;
  }
  return Detection::kAbsent;
}

const nlohmann::json* Member(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

int64_t UploadQueueBytes(const stream::StreamLayout& layout) {
  return std::clamp<int64_t>(layout.epochs_per_shard * layout.epoch_buffer_bytes, int64_t{16} << 20,
                             int64_t{256} << 20);
}

Result<std::shared_ptr<Store>> OpenStreamStore(const Location& location, const WriterSettings& settings,
                                               const std::function<Result<stream::StreamLayout>()>& plan,
                                               int64_t* queue_bytes) {
  *queue_bytes = 0;
  if (settings.discard) return std::shared_ptr<Store>(std::make_shared<NullStore>());
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/true));
  if (store->io_concurrency() == 0) return store;
  TESSERA_ASSIGN_OR_RETURN(stream::StreamLayout layout, plan());
  *queue_bytes = UploadQueueBytes(layout);
  WriteBehindOptions wb;
  wb.max_queued_bytes = *queue_bytes;
  return std::shared_ptr<Store>(std::make_shared<WriteBehindStore>(std::move(store), wb));
}

stream::StreamWriterOptions StreamWriterOptionsOf(const WriterSettings& settings) {
  stream::StreamWriterOptions wo;
  wo.threads = settings.threads;
  wo.backend = settings.backend;
  wo.pool = settings.pool;
  wo.input_buffers = settings.input_buffers;
  return wo;
}

}  // namespace tessera::driver
