#include "tessera/driver/writer_support.h"

#include <algorithm>

#include "tessera/store/null_store.h"

namespace tessera::driver {

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
  return wo;
}

}  // namespace tessera::driver
