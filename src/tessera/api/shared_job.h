// The job of a distributed write (api/shared_write.h): the marker that says which job may write at
// a location, and the stores its tasks write and read through.
//
// The client writes `<root>/.tessera-job` holding a random token before any task runs and removes
// it when the job is published or given up. A task stores each shard only while the marker still
// holds its job's token, so a cancelled job (marker gone or another job's) stops writing at its
// next shard. A task writing to a local path that does not see the marker at all was handed a
// path its host does not share with the client (a worker with its own /tmp): that is its error.
//
// Until the client publishes the metadata, the levels a later pyramid wave reads back have none in
// the store: such a level is opened through a store that serves the metadata the spec gives (held
// in memory) and everything else from the real store.
#pragma once

#include <memory>
#include <string>

#include "tessera/api/array.h"
#include "tessera/core/status.h"
#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"

namespace tessera::api_internal {

// The marker's key under the job's root location.
inline constexpr char kJobMarkerKey[] = ".tessera-job";

// Stores the marker holding `token` at `root` (its directory made).
Status WriteJobMarker(const Location& root, const std::string& token);
// Removes the marker (a missing one is fine).
Status RemoveJobMarker(const Location& root);
// Whether a marker is there (whichever job's).
Result<bool> HasJobMarker(const Location& root);

// Ok while the marker at `root` holds `token`. Else kFailedPrecondition: for a local path whose
// marker this process does not see at all when `first_look` (before the task's first shard), that
// the location is not shared with the client; otherwise that the job was cancelled.
Status CheckJobMarker(const Location& root, const std::string& token, bool first_look);

// `level` (the job's root or a location under it) as the writers of the job with `token` store
// it: every shard is stored (or erased) only after CheckJobMarker.
// Release it (ForgetGuardedLocation) once the writers have opened their stores.
Location GuardedLocation(const Location& root, const Location& level, const std::string& token);
void ForgetGuardedLocation(const Location& guarded);

// Opens level `level` of the unpublished array at `root` (`resolved` its spec, as `format`), as
// OpenArray would once it is published: the metadata of levels 0..level written by `format`'s
// CreateMetadata into memory, everything else read from the store. Writes nothing to the store.
Result<std::unique_ptr<Array>> OpenUnpublished(const Location& root, Format format, const ArraySpec& resolved,
                                               int level);

}  // namespace tessera::api_internal
