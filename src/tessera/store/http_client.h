// HTTP requests on libcurl for the object stores: a pool of reusable connections, bodies sent
// from pieces without assembling them, and retries with capped exponential backoff and full
// jitter on what may succeed when tried again (5xx, 429, connection failures, resets and
// timeouts) for a time budget rather than a number of tries: a server restarting or a link down
// for a minute is waited out, and only an outage longer than the budget is an error, which names
// the time spent and the tries ("gave up after 31 tries in 120.4 s").
//
// Only idempotent requests are given to the client (GET, HEAD, PUT of a whole value, DELETE, and
// the multipart calls, which S3 makes idempotent by upload id and part number), so a retry never
// changes what a request means. The one exception is a conditional write (If-Match /
// If-None-Match): a retry of one whose first try was applied finds its own value and fails the
// condition, so its caller reads Response::tries to tell that apart from a real conflict.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"

namespace tessera::http {

struct Request {
  std::string method = "GET";  // GET, HEAD, PUT, POST or DELETE
  std::string url;             // scheme://host[:port]/path[?query], path and query already encoded
  std::vector<std::pair<std::string, std::string>> headers;
  std::span<const ByteView> body;  // sent in order (PUT, POST); the caller keeps it alive
  // AWS Signature V4 (curl's): "aws:amz:REGION:s3" and "KEY:SECRET"; empty: not signed.
  std::string aws_sigv4;
  std::string user_password;
  // A description of the request for error messages ("GET s3://bucket/key bytes=0-99").
  std::string what;
};

struct Response {
  long status = 0;
  Bytes body;
  std::vector<std::pair<std::string, std::string>> headers;  // names lowercased
  // For a retryable status returned after the last try: "31 tries in 120.4 s; the retry budget
  // is 120.0 s: ..." (where to set it); else empty.
  std::string gave_up_after;
  // How many tries this response took (1: no retry).
  int tries = 1;
  // The value of header `name` (lowercase), or "" when absent.
  std::string Header(const std::string& name) const;
  // The body as text (S3's XML).
  std::string_view Text() const { return {reinterpret_cast<const char*>(body.data()), body.size()}; }
};

struct RetryPolicy {
  // The budget: transient failures are tried again until this long has passed since the first
  // try (the last wait is cut to end at it, and that try is the last). store/store_options.h
  // fills it from the storage option retry_timeout or TESSERA_RETRY_TIMEOUT_S.
  double timeout_s = 120.0;
  double initial_backoff_s = 0.05;
  double max_backoff_s = 4.0;     // one wait is at most this (full jitter below it)
  int max_attempts = 0;           // tries in all, the first included; 0: only the time budget limits
};

struct ClientOptions {
  // One try's connection attempt; never longer than what is left of the retry budget (but 1 s).
  double connect_timeout_s = 10.0;
  // A transfer slower than low_speed_bytes per second for low_speed_time_s is a timeout (and
  // retried): no total timeout, so large values over slow links still complete.
  long low_speed_bytes = 1024;
  long low_speed_time_s = 30;
  RetryPolicy retry;
};

// What a client has done, for benchmarks and tests that count requests.
struct ClientStatistics {
  int64_t requests = 0;  // tries sent, retries included
  int64_t retries = 0;
  int64_t bytes_received = 0;
  int64_t bytes_sent = 0;
};

// Thread-safe: Perform may be called from any number of threads at once; each call takes a
// connection from the pool (or opens one) and returns it after.
class Client {
 public:
  explicit Client(ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends `request`, trying again while the failure is transient and the policy's time budget
  // lasts. Any HTTP status that is final (2xx, 3xx, 4xx but 429, or a 5xx after the last try) is
  // a Response for the caller to judge; a transport failure after the last try is kIo naming
  // `request.what`, the URL, curl's reason, the tries and the time they took.
  Result<Response> Perform(const Request& request) const;

  ClientStatistics statistics() const;
  const ClientOptions& options() const { return options_; }

  // True for the statuses worth trying again: 5xx (but 501) and 429.
  static bool IsRetryableStatus(long status);

 private:
  struct Handle;
  std::unique_ptr<Handle> Acquire() const;
  void Release(std::unique_ptr<Handle> handle) const;
  // One try: a Response, or the transport error (curl's code and message) in `error`.
  // `connect_timeout_s`: this try's limit on connecting.
  Result<Response> TryOnce(Handle& handle, const Request& request, double connect_timeout_s, bool* transient) const;

  ClientOptions options_;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<Handle>> idle_;
  mutable std::atomic<int64_t> requests_{0}, retries_{0}, received_{0}, sent_{0};
};

// While one is in scope, every retry of a request this thread performs first runs `check`
// (without the guard: the check may itself perform requests); an error of kind
// kFailedPrecondition from it ends the retries with that error, any other is ignored (the retry
// goes on). A distributed job's writer uses it so that a shard PUT cut off by an outage is not
// retried into a job its client has given up (the job marker is checked first). Not inherited
// by other threads (multipart parts: only their completion, on the calling thread, publishes).
class RetryGuard {
 public:
  explicit RetryGuard(std::function<Status()> check);
  ~RetryGuard();
  RetryGuard(const RetryGuard&) = delete;
  RetryGuard& operator=(const RetryGuard&) = delete;

  // Runs the innermost guard's check of this thread, if any (Ok when there is none).
  static Status CheckBeforeRetry();

 private:
  std::function<Status()> check_;
  RetryGuard* outer_;
};

// "first-last" (inclusive) of the `length` bytes at `offset`, as a Range header and S3 write them.
std::string ByteRange(uint64_t offset, uint64_t length);

// Percent-encodes `text` as S3 and SigV4 expect: every byte but A-Z a-z 0-9 - . _ ~ (and '/'
// when `keep_slash`) becomes %XX.
std::string UriEncode(std::string_view text, bool keep_slash);

}  // namespace tessera::http
