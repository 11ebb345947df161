#include "tessera/store/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

namespace tessera::http {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The body of an upload, read by curl piece by piece (and rewound when curl sends it again).
struct UploadCursor {
  std::span<const ByteView> parts;
  size_t part = 0, offset = 0;

  size_t Read(char* dst, size_t capacity) {
    size_t n = 0;
    while (n < capacity && part < parts.size()) {
      const ByteView p = parts[part];
      const size_t k = std::min(capacity - n, p.size() - offset);
      if (k) std::memcpy(dst + n, p.data() + offset, k);
      n += k;
      offset += k;
      if (offset == p.size()) ++part, offset = 0;
    }
    return n;
  }
  bool Seek(curl_off_t to) {
    part = 0, offset = 0;
    for (; part < parts.size(); ++part) {
      if (static_cast<curl_off_t>(parts[part].size()) > to) {
        offset = static_cast<size_t>(to);
        return true;
      }
      to -= static_cast<curl_off_t>(parts[part].size());
    }
    return to == 0;
  }
};

size_t ReadBody(char* dst, size_t size, size_t count, void* user) {
  return static_cast<UploadCursor*>(user)->Read(dst, size * count);
}
int SeekBody(void* user, curl_off_t offset, int origin) {
  if (origin != SEEK_SET) return CURL_SEEKFUNC_CANTSEEK;
  return static_cast<UploadCursor*>(user)->Seek(offset) ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_FAIL;
}
size_t WriteBody(char* src, size_t size, size_t count, void* user) {
  Bytes& out = *static_cast<Bytes*>(user);
  out.insert(out.end(), reinterpret_cast<uint8_t*>(src), reinterpret_cast<uint8_t*>(src) + size * count);
  return size * count;
}
// Where response headers go; a body announced by Content-Length is reserved at once (not for HEAD,
// whose length is the object's).
struct HeaderSink {
  Response* response;
  bool reserve_body;
};

size_t WriteHeader(char* src, size_t size, size_t count, void* user) {
  const HeaderSink& sink = *static_cast<HeaderSink*>(user);
  Response& response = *sink.response;
  std::string_view line(src, size * count);
  if (line.starts_with("HTTP/")) {  // a new response (after a 100 Continue or a redirect)
    response.headers.clear();
    return size * count;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * count;
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
    value.remove_suffix(1);
  if (name == "content-length" && sink.reserve_body) {
    const uint64_t n = std::strtoull(std::string(value).c_str(), nullptr, 10);
    if (n <= (uint64_t{1} << 32)) response.body.reserve(static_cast<size_t>(n));
  }
  response.headers.emplace_back(std::move(name), std::string(value));
  return size * count;
}

// curl failures worth another try: the connection, the transfer or the peer failed, not the request.
// A name that does not resolve is one too: curl cannot tell a name that does not exist from a
// resolver that cannot be reached (a link down), and the retry budget bounds the cost of a typo.
bool IsTransientCurlError(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_WEIRD_SERVER_REPLY:
      return true;
    default:
      return false;
  }
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

}  // namespace

struct Client::Handle {
  CURL* curl = nullptr;
  Handle() : curl(curl_easy_init()) {}
  ~Handle() {
    if (curl) curl_easy_cleanup(curl);
  }
};

std::string Response::Header(const std::string& name) const {
  for (const auto& [n, v] : headers)
    if (n == name) return v;
  return "";
}

Client::Client(ClientOptions options) : options_(std::move(options)) { GlobalInit(); }
Client::~Client() = default;

bool Client::IsRetryableStatus(long status) { return status == 429 || (status >= 500 && status != 501); }

std::unique_ptr<Client::Handle> Client::Acquire() const {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Handle> h = std::move(idle_.back());
      idle_.pop_back();
      return h;
    }
  }
  return std::make_unique<Handle>();
}

void Client::Release(std::unique_ptr<Handle> handle) const {
  std::lock_guard lock(mu_);
  idle_.push_back(std::move(handle));
}

Result<Response> Client::TryOnce(Handle& handle, const Request& request, double connect_timeout_s,
                                 bool* transient) const {
  CURL* c = handle.curl;
  if (!c) return OutOfResources("HTTP: curl_easy_init failed");
  curl_easy_reset(c);  // keeps the connection cache
  Response response;
  UploadCursor cursor{request.body};
  uint64_t body_size = 0;
  for (ByteView p : request.body) body_size += p.size();

  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, options_.low_speed_bytes);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, options_.low_speed_time_s);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, WriteBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, WriteHeader);
  HeaderSink header_sink{&response, request.method != "HEAD"};
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &header_sink);
  if (request.method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (request.method == "PUT" || request.method == "POST") {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, ReadBody);
    curl_easy_setopt(c, CURLOPT_READDATA, &cursor);
    curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, SeekBody);
    curl_easy_setopt(c, CURLOPT_SEEKDATA, &cursor);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body_size));
    if (request.method == "POST") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "POST");
  } else if (request.method != "GET") {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  struct curl_slist* headers = nullptr;
  for (const auto& [name, value] : request.headers)
    headers = curl_slist_append(headers, (name + ": " + value).c_str());
  // No 100-continue round trip before a body. A signed request keeps curl's default: an empty
  // "Expect:" would be signed as a header curl then does not send.
  if (request.aws_sigv4.empty()) headers = curl_slist_append(headers, "Expect:");
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  if (!request.aws_sigv4.empty()) {
    curl_easy_setopt(c, CURLOPT_AWS_SIGV4, request.aws_sigv4.c_str());
    curl_easy_setopt(c, CURLOPT_USERPWD, request.user_password.c_str());
  }
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);

  requests_.fetch_add(1, std::memory_order_relaxed);
  const CURLcode code = curl_easy_perform(c);
  curl_slist_free_all(headers);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  if (code != CURLE_OK) {
    *transient = IsTransientCurlError(code);
    return IoError(request.what + " (" + request.url + "): " + (error[0] ? error : curl_easy_strerror(code)));
  }
  sent_.fetch_add(static_cast<int64_t>(body_size), std::memory_order_relaxed);
  received_.fetch_add(static_cast<int64_t>(response.body.size()), std::memory_order_relaxed);
  // A body shorter than the length the server announced is a cut transfer (curl reports most as
  // CURLE_PARTIAL_FILE; this catches the rest).
  const std::string length = response.Header("content-length");
  if (request.method != "HEAD" && !length.empty() && response.status / 100 == 2 &&
      std::strtoull(length.c_str(), nullptr, 10) != response.body.size()) {
    *transient = true;
    return IoError(request.what + " (" + request.url + "): the response body has " +
                   std::to_string(response.body.size()) + " bytes, Content-Length says " + length);
  }
  return response;
}

Result<Response> Client::Perform(const Request& request) const {
  const RetryPolicy& policy = options_.retry;
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed_s = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  thread_local std::minstd_rand jitter(static_cast<unsigned>(std::hash<std::thread::id>{}(std::this_thread::get_id())));
  double backoff = policy.initial_backoff_s;
  for (int attempt = 1;; ++attempt) {
    std::unique_ptr<Handle> handle = Acquire();
    bool transient = false;
    // A try does not hang on connecting past the budget (a black-holed address), but is given at
    // least a second, so that a short budget still reaches a slow server.
    const double connect_s = std::min(options_.connect_timeout_s, std::max(1.0, policy.timeout_s - elapsed_s()));
    Result<Response> r = TryOnce(*handle, request, connect_s, &transient);
    // A connection that failed is closed rather than reused.
    if (r.ok()) Release(std::move(handle));
    if (r.ok()) r->tries = attempt;
    const bool retry_status = r.ok() && IsRetryableStatus(r->status);
    if ((r.ok() && !retry_status) || (!r.ok() && !transient)) return r;
    const double elapsed = elapsed_s();
    const double left = policy.timeout_s - elapsed;
    if (left <= 0 || (policy.max_attempts > 0 && attempt >= policy.max_attempts)) {
      // Says how to wait longer: the budget and where it is set.
      const std::string tries = std::to_string(attempt) + (attempt == 1 ? " try" : " tries") + " in " +
                                Seconds(elapsed) + "; the retry budget is " + Seconds(policy.timeout_s) +
                                ": storage option retry_timeout or TESSERA_RETRY_TIMEOUT_S";
      if (!r.ok()) return IoError(r.status().message() + " (gave up after " + tries + ")");
      r->gave_up_after = tries;
      return r;  // the last retryable status is the caller's to report
    }
    if (Status guard = RetryGuard::CheckBeforeRetry(); guard.kind() == ErrorKind::kFailedPrecondition)
      return Status(guard.kind(), guard.message() + " (" + request.what + " not retried)");
    // Full jitter: a uniform wait below the exponential bound, so many clients do not retry in
    // step; the last wait ends at the budget, so the last try is made when it runs out.
    const double wait =
        std::min(left, std::uniform_real_distribution<double>(0.0, std::min(backoff, policy.max_backoff_s))(jitter));
    retries_.fetch_add(1, std::memory_order_relaxed);
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    backoff = std::min(backoff * 2, policy.max_backoff_s);
  }
}

namespace {
thread_local RetryGuard* current_guard = nullptr;
}  // namespace

RetryGuard::RetryGuard(std::function<Status()> check) : check_(std::move(check)), outer_(current_guard) {
  current_guard = this;
}

RetryGuard::~RetryGuard() { current_guard = outer_; }

Status RetryGuard::CheckBeforeRetry() {
  RetryGuard* guard = current_guard;
  if (guard == nullptr) return Status::Ok();
  current_guard = nullptr;  // the check's own requests retry unguarded
  Status s = guard->check_();
  current_guard = guard;
  return s;
}

ClientStatistics Client::statistics() const {
  return {requests_.load(), retries_.load(), received_.load(), sent_.load()};
}

std::string ByteRange(uint64_t offset, uint64_t length) {
  return std::to_string(offset) + "-" + std::to_string(offset + length - 1);
}

std::string UriEncode(std::string_view text, bool keep_slash) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace tessera::http
