// The lifecycle every stream of the façade shares, over a format driver's writer
// (driver::FormatWriter). Internal to the façade.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "tessera/api/driver_registry.h"
#include "tessera/driver/format_driver.h"
#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"
#include "tessera/api/stream.h"

namespace tessera::api_internal {

// What every façade stream shares: its format and resolved spec, and the lifecycle. A stream is
// open until Close succeeds; any error aborts it, and aborting stops its writers and keeps what
// they published (what a crash at that moment would leave).
class LifecycleStream : public Stream {
 public:
  LifecycleStream(Format format, ArraySpec spec) : format_(format), spec_(std::move(spec)) {}

  void Abort() final {
    if (state_ != StreamState::kOpen) return;
    state_ = StreamState::kAborted;
    Abandon();
  }
  StreamState state() const final { return state_; }
  Status SetAttributes(nlohmann::json attributes) final {
    TESSERA_RETURN_IF_ERROR(CheckOpen("SetAttributes"));
    if (!attributes.is_object())
      return InvalidArgument("attributes: must be a JSON object, not " + std::string(attributes.type_name())).WithField("attributes");
    if (!TakesAttributes())
      return Unsupported("attributes: this " + std::string(FormatName(format_)) +
                         " stream cannot change its array's attributes while it streams").WithField("attributes");
    pending_attributes_ = std::move(attributes);
    return Status::Ok();
  }
  Format format() const final { return format_; }
  const ArraySpec& spec() const final { return spec_; }

 protected:
  // Stops every writer (no worker stores or publishes anything afterwards) and removes only what
  // no reader sees (staged parts, pending uploads). Called once, by Abort.
  virtual void Abandon() = 0;
  // Ok while open; else the error a call named `call` gets on a closed or aborted stream.
  Status CheckOpen(const char* call) const {
    const StreamState state = state_;
    if (state == StreamState::kOpen) return Status::Ok();
    return FailedPrecondition(std::string(call) + (state == StreamState::kClosed
                                                       ? ": the stream is closed"
                                                       : ": the stream was aborted (after an error or Abort)"));
  }
  // Any error ends the stream.
  Status FailOnError(Status st) {
    if (!st.ok()) Abort();
    return st;
  }
  void MarkClosed() { state_ = StreamState::kClosed; }
  // Whether SetAttributes works, and how the attributes are published (Flush and Close call
  // PublishPendingAttributes).
  virtual bool TakesAttributes() const { return false; }
  virtual Status ApplyAttributes(const nlohmann::json&) { return Status::Ok(); }
  // Publishes the attributes SetAttributes gave since the last publication, if any.
  Status PublishPendingAttributes() {
    if (!pending_attributes_) return Status::Ok();
    const nlohmann::json attributes = std::move(*pending_attributes_);
    pending_attributes_.reset();
    return FailOnError(ApplyAttributes(attributes));
  }

 private:
  const Format format_;
  const ArraySpec spec_;
  std::atomic<StreamState> state_{StreamState::kOpen};
  std::optional<nlohmann::json> pending_attributes_;  // SetAttributes' latest, not yet published
};

// What CreateStream makes of its arguments: the location, the format (named, or from the
// location's name), the resolved spec and the thread count; the backend and discard checked.
struct Resolved {
  Location location;
  Format format;
  ArraySpec spec;
  int threads;
};
Result<Resolved> Resolve(const std::string& location, const ArraySpec& spec, const StreamOptions& options);

// Refuses (w-) or removes (w) what is at the resolved location before a stream creates its array
// there (create_mode.h); mode a with nothing there creates.
Status PrepareForStream(const Resolved& r, Mode mode);

// How a stream's writer runs, from the caller's options and the resolved thread count.
driver::WriterSettings SettingsOf(const StreamOptions& options, int threads);

// Creates the array of one level (`spec` resolved, no pyramid) at `location` and its writer,
// through the format's driver; a directory this call creates is removed again if it fails.
Result<driver::FormatWriter> OpenLevelWriter(Format format, const ArraySpec& spec, const Location& location,
                                             const StreamOptions& options, int threads);

// The Stream of a FormatWriter (the one implementation every façade stream of one level uses).
// `first_row`: the array's row the writer's row 0 is, and `stored_rows` the rows it had published
// (a continued array, mode a): its statistics count the array's rows published.
std::unique_ptr<Stream> MakeFormatStream(Format format, const ArraySpec& spec, int threads, driver::FormatWriter writer,
                                         int64_t first_row = 0, int64_t stored_rows = 0);

}  // namespace tessera::api_internal
