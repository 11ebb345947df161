// Small helpers shared by the CLI subcommands.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/status.h"
#include "tessera/store/store.h"

namespace tessera::cli {

// The name of the field `status` is about (Status::field(): "chunk_shape"; of a JSON path, its
// last member: "precomputed.resolution_xyz[1]" -> "resolution_xyz"), or empty.
std::string_view FieldName(const Status& status);

// `status` with the library's field that starts its message ("chunk_shape: ...") replaced by the
// command-line flag for it ("--chunk: ...").
Status WithFlagNames(const Status& status);

// A kAlreadyExists error (creating where something exists; "... mode w replaces it") with the
// flag that asks for mode w.
Status WithOverwriteHint(const Status& status);

// Prints "tessera: error: <kind>: <message>" to stderr and returns the exit code 1.
int ReportError(const Status& status);

// JSON text for printing; strings read from files that are not valid UTF-8 get U+FFFD instead of
// making the dump throw.
std::string JsonText(const nlohmann::json& j, int indent = -1);

// "512,512,512" -> {512, 512, 512}. Errors name the option.
Result<std::vector<int64_t>> ParseIntList(const std::string& text, const std::string& option);

// Opens a filesystem store rooted at `path` (must exist unless `create`).
Result<std::shared_ptr<Store>> OpenFileStore(const std::string& path, bool create);

// A progress line on stderr, redrawn in place ("\r") at most every 0.5 s; the final one always,
// ending the line. `text(seconds)` (seconds since the line was made) is called only when printing.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  void Update(bool final, const std::function<std::string(double seconds)>& text);

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

// A FILE* for "-" (stdin/stdout) or a path; closes on destruction unless it is a std stream.
class CFile {
 public:
  static Result<CFile> Open(const std::string& path, bool write);
  CFile(CFile&& o) noexcept : f_(o.f_), owned_(o.owned_), path_(std::move(o.path_)) { o.f_ = nullptr; }
  CFile(const CFile&) = delete;
  ~CFile();
  FILE* get() const { return f_; }
  const std::string& path() const { return path_; }
  // Reads up to n bytes, looping over short reads; returns the count read (< n only at EOF).
  Result<size_t> ReadFully(uint8_t* dst, size_t n);
  Status WriteAll(const uint8_t* src, size_t n);
  Status Close();

 private:
  CFile(FILE* f, bool owned, std::string path) : f_(f), owned_(owned), path_(std::move(path)) {}
  FILE* f_;
  bool owned_;
  std::string path_;
};

}  // namespace tessera::cli
