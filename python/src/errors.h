// Errors: tessera::Status -> the tessera.Error hierarchy (defined in python/tessera/_errors.py).
//
// Binding code never sets a Python error while the GIL is released: it captures the Status,
// leaves the released scope and throws StatusError, which the translator registered by
// RegisterErrorTranslator turns into the tessera.Error subclass of the status's kind, with the
// library's message unchanged.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "tessera/core/status.h"

namespace tessera::python {

class StatusError : public std::runtime_error {
 public:
  StatusError(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  explicit StatusError(const Status& status) : StatusError(status.kind(), status.message()) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// Throws StatusError for a failed status; no-op on OK.
inline void ThrowIfError(const Status& status) {
  if (!status.ok()) throw StatusError(status);
}

// Like ThrowIfError, for errors about an ArraySpec: a status about a spec field (Status::field())
// whose message starts with it ("chunk_shape: ...") is rewritten to start with the Python argument
// of that field ("chunks: ...").
void ThrowIfSpecError(const Status& status);

// The Python argument name of a spec field ("chunk_shape" -> "chunks"; of a JSON path, by its last
// member: "pyramid.method" -> "downsample"); the field itself when the names agree.
std::string PythonArgumentOfSpecField(std::string_view field);

// Imports tessera._errors and registers the translator of StatusError. Call once, at module init.
void RegisterErrorTranslator();

}  // namespace tessera::python
