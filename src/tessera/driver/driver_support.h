// What the format drivers share: detecting a prefix format by its keys, reading members of a
// stored array's JSON, the store a stream writes to (behind a write-behind upload queue on an
// object store) and the FormatWriter that holds a format's writer and sink.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>

#include "tessera/driver/format_driver.h"
#include "tessera/store/store.h"
#include "tessera/store/write_behind_store.h"

namespace tessera::driver {

// kDetected when any of `keys` exists under `location` (a directory or an object-store prefix).
Result<Detection> DetectByKeys(const Location& location, std::initializer_list<const char*> keys);

// The member `key` of the JSON object `j`; null when `j` is no object or has no such member.
const nlohmann::json* Member(const nlohmann::json& j, const char* key);

// The write-behind upload queue of a stream to an object store: one shard row's raw bytes,
// 16..256 MiB.
int64_t UploadQueueBytes(const stream::StreamLayout& layout);

// Where a stream stores its array: nothing (discard), or the location's store (its directory
// made). On an object store (where a PUT waits on the network) writes go through a write-behind
// queue of UploadQueueBytes(plan()) so that uploads run off the compression threads;
// *queue_bytes is that queue's size (0: none).
Result<std::shared_ptr<Store>> OpenStreamStore(const Location& location, const WriterSettings& settings,
                                               const std::function<Result<stream::StreamLayout>()>& plan,
                                               int64_t* queue_bytes);

stream::StreamWriterOptions StreamWriterOptionsOf(const WriterSettings& settings);

// A FormatWriter that owns `stream` (a struct with `writer` and `sink`, storing into `store`);
// `finish` completes the sink, then every queued upload must have succeeded. An aborted stream
// uploads nothing more of what it queued and removes only what no reader sees (the sink's
// DiscardUnpublished): what it published stays, as a crash at that moment would leave it.
template <typename S, typename Finish>
FormatWriter HoldStream(S stream, std::shared_ptr<Store> store, int64_t queue_bytes, Finish finish) {
  auto held = std::make_shared<S>(std::move(stream));
  FormatWriter out;
  out.writer = held->writer.get();
  out.finish = [held, store, finish] {
    TESSERA_RETURN_IF_ERROR(finish(*held));
    return store->Flush();
  };
  auto queue = std::dynamic_pointer_cast<WriteBehindStore>(store);
  out.abandon = [held, queue] {
    if (queue) queue->Cancel();
    (void)held->sink->DiscardUnpublished();
  };
  out.sync = [store] { return store->Flush(); };
  out.upload_queue_bytes = queue_bytes;
  out.keep_alive = held;
  return out;
}

// HoldStream for a region's writer: nothing to finish beyond the uploads, and a failure leaves what
// the region stored (whole shards, rewritten by a retry): the array is not the region's to remove.
template <typename S>
FormatWriter HoldRegionStream(S stream, std::shared_ptr<Store> store, int64_t queue_bytes) {
  FormatWriter w = HoldStream(std::move(stream), store, queue_bytes, [](S&) { return Status::Ok(); });
  auto queue = std::dynamic_pointer_cast<WriteBehindStore>(store);
  w.abandon = [queue] {
    if (queue) queue->Cancel();
  };
  return w;
}

}  // namespace tessera::driver
