// The S3 store beyond the conformance suite: its configuration lookup, XML parsing, retries, and
// (S3ServerTest, against the real server of the ctest fixture `s3`) pagination, request counts and
// the errors a server gives.
#include "tessera/store/s3_store.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cpp_support/status_matchers.h"
#include "tessera/store/http_store.h"
#include "tessera/store/location.h"
#include "cpp_support/store_helpers.h"

namespace tessera {
namespace {

using store_test::Pattern;
using store_test::ScopedTempDir;

// Sets (or, with nullopt, unsets) environment variables for its lifetime, then restores them.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::optional<std::string>>& vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Every variable S3Config reads, unset: each test names what it sets.
std::map<std::string, std::optional<std::string>> CleanAwsEnv(const std::string& home) {
  std::map<std::string, std::optional<std::string>> env;
  for (const char* name : {"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
                           "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
                           "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                           "TESSERA_S3_ADDRESSING_STYLE", "TESSERA_RETRY_TIMEOUT_S"})
    env[name] = std::nullopt;
  env["HOME"] = home;
  return env;
}

// S3Config::FromEnvironment with HOME at `home`, only `set` of the AWS variables set, and the
// caller's `overrides`.
Result<S3Config> ConfigWith(const std::string& home, const std::map<std::string, std::string>& set = {},
                            const StoreOptions& overrides = {}) {
  auto vars = CleanAwsEnv(home);
  for (const auto& [name, value] : set) vars[name] = value;
  ScopedEnv env(vars);
  return S3Config::FromEnvironment(overrides);
}

TEST(S3ConfigTest, NothingConfiguredIsAnonymousOnAwsInUsEast1) {
  ScopedTempDir home;
  auto c = ConfigWith(home.path());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->region, "us-east-1");
  EXPECT_EQ(c->endpoint, "");
  EXPECT_EQ(c->access_key, "");
  EXPECT_EQ(c->addressing, S3Config::Addressing::kAuto);
}

TEST(S3ConfigTest, ProfilesComeFromTheCredentialsAndConfigFiles) {
  ScopedTempDir home;
  std::filesystem::create_directories(home.path() + "/.aws");
  WriteFile(home.path() + "/.aws/credentials",
            "[default]\naws_access_key_id = DEFKEY\naws_secret_access_key = defsecret\n\n"
            "[lab]\naws_access_key_id=LABKEY\naws_secret_access_key=labsecret\naws_session_token = tok\n");
  WriteFile(home.path() + "/.aws/config",
            "[default]\nregion = eu-west-1\n\n# a comment\n[profile lab]\nregion = ap-south-1\n"
            "s3 =\n  addressing_style = path\n  endpoint_url = http://lab.example:9000/\n");
  auto c = ConfigWith(home.path());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key, "DEFKEY");
  EXPECT_EQ(c->secret_key, "defsecret");
  EXPECT_EQ(c->region, "eu-west-1");

  c = ConfigWith(home.path(), {{"AWS_PROFILE", "lab"}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key, "LABKEY");
  EXPECT_EQ(c->session_token, "tok");
  EXPECT_EQ(c->region, "ap-south-1");
  EXPECT_EQ(c->endpoint, "http://lab.example:9000");
  EXPECT_EQ(c->addressing, S3Config::Addressing::kPath);

  // The environment wins over the files.
  c = ConfigWith(home.path(), {{"AWS_PROFILE", "lab"},
                               {"AWS_ACCESS_KEY_ID", "ENVKEY"},
                               {"AWS_SECRET_ACCESS_KEY", "envsecret"},
                               {"AWS_REGION", "us-west-2"},
                               {"AWS_ENDPOINT_URL", "http://127.0.0.1:9"}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key, "ENVKEY");
  EXPECT_EQ(c->session_token, "");
  EXPECT_EQ(c->region, "us-west-2");
  EXPECT_EQ(c->endpoint, "http://127.0.0.1:9");

  c = ConfigWith(home.path(), {{"AWS_PROFILE", "nosuch"}});
  EXPECT_ERROR(c, ErrorKind::kInvalidArgument, "AWS_PROFILE", "profile \"nosuch\"", home.path());

  EXPECT_ERROR(ConfigWith(home.path(), {{"AWS_ACCESS_KEY_ID", "ONLYKEY"}}), ErrorKind::kInvalidArgument,
               "access key id without a secret access key", "profile \"default\"");
}

// storage_options replace the environment's settings they name; the environment fills the rest.
TEST(S3ConfigTest, StoreOptionsTakeThePlaceOfTheEnvironment) {
  ScopedTempDir home;
  std::filesystem::create_directories(home.path() + "/.aws");
  WriteFile(home.path() + "/.aws/credentials",
            "[default]\naws_access_key_id = DEFKEY\naws_secret_access_key = defsecret\n\n"
            "[lab]\naws_access_key_id=LABKEY\naws_secret_access_key=labsecret\n");
  WriteFile(home.path() + "/.aws/config", "[profile lab]\nregion = ap-south-1\n");
  const std::map<std::string, std::string> env = {{"AWS_ENDPOINT_URL", "http://env.example:1"},
                                                  {"AWS_REGION", "us-west-2"},
                                                  {"TESSERA_RETRY_TIMEOUT_S", "7.5"}};
  auto c = ConfigWith(home.path(), env);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->endpoint, "http://env.example:1");
  EXPECT_EQ(c->client.retry.timeout_s, 7.5);

  StoreOptions o;
  o.endpoint_url = "http://given.example:2/";
  o.region = "eu-north-1";
  o.addressing_style = "virtual";
  o.retry_timeout_s = 3;
  c = ConfigWith(home.path(), env, o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->endpoint, "http://given.example:2");
  EXPECT_EQ(c->region, "eu-north-1");
  EXPECT_EQ(c->addressing, S3Config::Addressing::kVirtualHosted);
  EXPECT_EQ(c->client.retry.timeout_s, 3);
  EXPECT_EQ(c->access_key, "DEFKEY");  // credentials stay the files'

  StoreOptions lab;
  lab.profile = "lab";
  c = ConfigWith(home.path(), {}, lab);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key, "LABKEY");
  EXPECT_EQ(c->region, "ap-south-1");
  EXPECT_EQ(c->client.retry.timeout_s, kDefaultRetryTimeoutS);

  StoreOptions anonymous;
  anonymous.anonymous = true;
  c = ConfigWith(home.path(), {{"AWS_ACCESS_KEY_ID", "ENVKEY"}, {"AWS_SECRET_ACCESS_KEY", "s"}}, anonymous);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key, "");

  StoreOptions keys;
  keys.access_key_id = "GIVENKEY";
  keys.secret_access_key = "givensecret";
  c = ConfigWith(home.path(), {{"AWS_ACCESS_KEY_ID", "ENVKEY"}, {"AWS_SECRET_ACCESS_KEY", "s"}}, keys);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key, "GIVENKEY");
  EXPECT_EQ(c->secret_key, "givensecret");

  StoreOptions nosuch;
  nosuch.profile = "nosuch";
  EXPECT_ERROR(ConfigWith(home.path(), {}, nosuch), ErrorKind::kInvalidArgument, "storage_options: \"profile\"",
               "profile \"nosuch\"");
  EXPECT_ERROR(ConfigWith(home.path(), {{"TESSERA_RETRY_TIMEOUT_S", "soon"}}), ErrorKind::kInvalidArgument,
               "TESSERA_RETRY_TIMEOUT_S", "\"soon\"");
  EXPECT_ERROR(ConfigWith(home.path(), {{"TESSERA_RETRY_TIMEOUT_S", "-1"}}), ErrorKind::kInvalidArgument,
               "TESSERA_RETRY_TIMEOUT_S", "positive");
}

TEST(StoreOptionsTest, JsonRoundTripsAndUnknownKeysAreNamed) {
  const nlohmann::json j = {{"endpoint_url", "http://h:1"}, {"region", "r"}, {"profile", "p"},
                            {"addressing_style", "path"}, {"anonymous", false}, {"retry_timeout", 2.5},
                            {"access_key_id", "k"}, {"secret_access_key", "s"}, {"session_token", "t"}};
  Result<StoreOptions> o = StoreOptions::FromJson(j);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->retry_timeout_s, 2.5);
  EXPECT_EQ(o->ToJson(), j);
  EXPECT_TRUE(StoreOptions::FromJson(nullptr)->empty());
  EXPECT_TRUE(StoreOptions::FromJson(nlohmann::json::object())->empty());
  EXPECT_ERROR(StoreOptions::FromJson({{"endpoint", "x"}, {"regoin", "y"}, {"region", "z"}}),
               ErrorKind::kInvalidArgument, "storage_options: unknown key \"endpoint\", \"regoin\"", "endpoint_url");
  EXPECT_ERROR(StoreOptions::FromJson({{"retry_timeout", "60"}}), ErrorKind::kInvalidArgument, "\"retry_timeout\"",
               "a number of seconds");
  EXPECT_ERROR(StoreOptions::FromJson({{"retry_timeout", 0}}), ErrorKind::kInvalidArgument, "\"retry_timeout\"",
               "positive");
  EXPECT_ERROR(StoreOptions::FromJson({{"anonymous", "yes"}}), ErrorKind::kInvalidArgument, "\"anonymous\"");
  EXPECT_ERROR(StoreOptions::FromJson({{"addressing_style", "host"}}), ErrorKind::kInvalidArgument,
               "expected auto, path or virtual");
  EXPECT_ERROR(StoreOptions::FromJson({{"access_key_id", "k"}}), ErrorKind::kInvalidArgument, "go together");
  EXPECT_ERROR(StoreOptions::FromJson(nlohmann::json::array()), ErrorKind::kInvalidArgument, "storage_options");
}

TEST(S3ConfigTest, LocationsAreDescribedAndBadBucketsRefused) {
  S3Store store("my-bucket", "/a/b/", S3Config{});
  EXPECT_EQ(store.prefix(), "a/b");
  EXPECT_EQ(store.Describe("zarr.json"), "s3://my-bucket/a/b/zarr.json");
  for (const std::string bad : {"ab", "Upper", "under_score", ""}) {
    EXPECT_ERROR(S3Store::Open(bad + "/x"), ErrorKind::kInvalidArgument, "s3://" + bad + "/x",
                 "\"" + bad + "\" is not a valid bucket name");
  }
  EXPECT_ERROR(S3Store::Open("bucket/a//b"), ErrorKind::kInvalidArgument, "s3://bucket/a//b", "empty path segment");
}

TEST(XmlTest, ElementsInOrderWithEntitiesDecoded) {
  const std::string xml =
      "<ListBucketResult><Contents><Key>a&amp;b</Key></Contents><Contents><Key>&lt;c&gt; &#x263A;&#65;</Key>"
      "</Contents><IsTruncated>false</IsTruncated></ListBucketResult>";
  EXPECT_EQ(XmlElements(xml, "Key"), (std::vector<std::string>{"a&b", "<c> \xE2\x98\xBA" "A"}));
  EXPECT_EQ(FirstXmlElement(xml, "IsTruncated"), "false");
  EXPECT_EQ(FirstXmlElement(xml, "Missing"), "");
}

TEST(HttpClientTest, RefusedConnectionsAreRetriedThenReportedWithTheUrl) {
  http::ClientOptions options;
  options.retry.max_attempts = 3;
  options.retry.initial_backoff_s = 0.001;
  HttpStore store("http://127.0.0.1:1/volume", options);  // nothing listens on port 1
  EXPECT_ERROR(store.Get("info"), ErrorKind::kIo, "http://127.0.0.1:1/volume/info", "gave up after 3 tries");
  EXPECT_EQ(store.statistics().requests, 3);
  EXPECT_ERROR(store.Set("info", ByteView()), ErrorKind::kUnsupported, "http://127.0.0.1:1/volume", "reads only");
}

// A read-only store keeps the seam's defaults: no generations, no conditional writes, no request sent.
TEST(HttpClientTest, AReadOnlyStoreHasNoConditionalWrites) {
  HttpStore store("http://127.0.0.1:1/volume", http::ClientOptions{});
  EXPECT_ERROR(store.GetVersioned("info"), ErrorKind::kUnsupported, "http://127.0.0.1:1/volume/info",
               "does not keep generations");
  const ByteView parts[] = {ByteView()};
  EXPECT_ERROR(store.SetPartsIf("info", parts, WriteCondition{}), ErrorKind::kUnsupported,
               "http://127.0.0.1:1/volume/info", "no conditional writes");
  EXPECT_ERROR(store.EraseIf("info", WriteCondition{}), ErrorKind::kUnsupported, "no conditional writes");
  EXPECT_EQ(store.statistics().requests, 0);
}

class S3ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = store_test::FindTestS3Server();
    if (!server_) GTEST_SKIP() << "no S3 server: TESSERA_TEST_S3 is not set (the ctest fixture s3 starts one)";
    prefix_ = std::string("s3-server-test/") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
              std::to_string(::getpid());
  }
  std::optional<store_test::TestS3Server> server_;
  std::string prefix_;
};

TEST_F(S3ServerTest, ListReadsEveryPage) {
  S3Config config = server_->config;
  config.list_page_size = 2;
  S3Store store(server_->bucket, prefix_, config);
  std::vector<std::string> keys;
  for (int i = 0; i < 7; ++i) {
    keys.push_back("c/" + std::to_string(i));
    ASSERT_TRUE(store.Set(keys.back(), Pattern(3, i)).ok());
  }
  const int64_t before = store.statistics().requests;
  auto listed = store.List("c/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(*listed, keys);
  EXPECT_EQ(store.statistics().requests - before, 4);  // pages of 2, 2, 2, 1
  for (const std::string& k : keys) ASSERT_TRUE(store.Erase(k).ok());
}

TEST_F(S3ServerTest, OneRangeIsOneRequest) {
  S3Store store(server_->bucket, prefix_, server_->config);
  const Bytes value = Pattern(1000, 1);
  ASSERT_TRUE(store.Set("shard", value).ok());
  const int64_t before = store.statistics().requests;
  auto r = store.GetRange("shard", 100, 50);
  ASSERT_TRUE(r.ok() && *r);
  EXPECT_EQ(**r, Bytes(value.begin() + 100, value.begin() + 150));
  auto s = store.GetSuffix("shard", 16);
  ASSERT_TRUE(s.ok() && *s);
  EXPECT_EQ(store.statistics().requests - before, 2);
  ASSERT_TRUE(store.Erase("shard").ok());
}

TEST_F(S3ServerTest, RefusalsNameTheRequestTheUrlAndS3sCode) {
  S3Config wrong = server_->config;
  wrong.secret_key = "not-the-secret";
  S3Store store(server_->bucket, prefix_, wrong);
  Status st = store.Set("zarr.json", Pattern(10, 1));
  EXPECT_ERROR(st, ErrorKind::kIo, "PUT s3://" + server_->bucket + "/" + prefix_ + "/zarr.json",
               "HTTP 403 SignatureDoesNotMatch");

  // A missing bucket is an error, not a missing key (the server may create buckets on a write,
  // so this one is only read).
  S3Store missing("never-written-bucket", prefix_, server_->config);
  for (auto got : {missing.Get("zarr.json"), missing.GetRange("zarr.json", 0, 4)}) {
    EXPECT_ERROR(got, ErrorKind::kIo, "s3://never-written-bucket/" + prefix_ + "/zarr.json", "NoSuchBucket");
  }
}

TEST_F(S3ServerTest, ARefusedMultipartUploadLeavesNothing) {
  S3Config config = server_->config;
  config.multipart_threshold = config.part_size = 5u << 20;
  config.secret_key = "not-the-secret";
  S3Store store(server_->bucket, prefix_, config);
  Status st = store.Set("big", Pattern((11u << 20) + 7, 3));
  EXPECT_ERROR(st, ErrorKind::kIo, "CreateMultipartUpload s3://" + server_->bucket + "/" + prefix_ + "/big",
               "HTTP 403");
  S3Store reader(server_->bucket, prefix_, server_->config);
  auto size = reader.Size("big");
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(*size, std::nullopt);
  auto uploads = reader.ListIncompleteUploads();
  ASSERT_TRUE(uploads.ok()) << uploads.status().ToString();
  EXPECT_TRUE(uploads->empty());
}

// An HTTP server on 127.0.0.1 that answers every request with what `answer` says, one connection
// at a time (each closed after its response): a stand-in for S3 servers that behave unlike the
// test's SeaweedFS.
class FakeHttpServer {
 public:
  struct Received {
    std::string method, target;                  // target: the path and query
    std::map<std::string, std::string> headers;  // names lowercased
  };
  struct Reply {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
  };

  // `refuse_for_s`: connections are refused (the socket bound, not listening) for that long first.
  explicit FakeHttpServer(std::function<Reply(const Received&)> answer, double refuse_for_s = 0)
      : answer_(std::move(answer)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1: " << std::strerror(errno);
      return;
    }
    port_ = ntohs(address.sin_port);
    if (refuse_for_s <= 0 && ::listen(listen_fd_, 16) != 0) ADD_FAILURE() << "listen: " << std::strerror(errno);
    thread_ = std::thread([this, refuse_for_s] {
      if (refuse_for_s > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(refuse_for_s));
        if (::listen(listen_fd_, 16) != 0) return;
      }
      Serve();
    });
  }
  ~FakeHttpServer() {
    ::shutdown(listen_fd_, SHUT_RDWR);  // ends the accept loop
    if (thread_.joinable()) thread_.join();
    ::close(listen_fd_);
  }
  FakeHttpServer(const FakeHttpServer&) = delete;
  FakeHttpServer& operator=(const FakeHttpServer&) = delete;

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // "METHOD target [if-match: x] [if-none-match: y]" of every request so far.
  std::vector<std::string> log() const {
    std::lock_guard lock(mu_);
    return log_;
  }

 private:
  void Serve() {
    for (;;) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      Handle(fd);
      ::close(fd);
    }
  }

  void Handle(int fd) {
    std::string data;
    char buffer[65536];
    size_t header_end;
    while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
      const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
      if (got <= 0) return;
      data.append(buffer, static_cast<size_t>(got));
    }
    Received request;
    std::istringstream head(data.substr(0, header_end));
    std::string line;
    std::getline(head, line);
    std::istringstream(line) >> request.method >> request.target;
    while (std::getline(head, line)) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon), value = line.substr(colon + 1);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      while (!value.empty() && (value.front() == ' ')) value.erase(value.begin());
      while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.pop_back();
      request.headers[name] = value;
    }
    const size_t body_bytes = request.headers.count("content-length") ? std::stoul(request.headers["content-length"]) : 0;
    while (data.size() < header_end + 4 + body_bytes) {
      const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
      if (got <= 0) return;
      data.append(buffer, static_cast<size_t>(got));
    }
    {
      std::lock_guard lock(mu_);
      std::string entry = request.method + " " + request.target;
      for (const char* h : {"if-match", "if-none-match"})
        if (request.headers.count(h)) entry += std::string(" ") + h + ": " + request.headers[h];
      log_.push_back(entry);
    }
    const Reply reply = answer_(request);
    std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " Reply\r\nConnection: close\r\nContent-Length: " +
                      std::to_string(reply.body.size()) + "\r\n";
    for (const auto& [name, value] : reply.headers) out += name + ": " + value + "\r\n";
    out += "\r\n";
    if (request.method != "HEAD") out += reply.body;
    for (size_t sent = 0; sent < out.size();) {
      const ssize_t put = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
      if (put <= 0) return;
      sent += static_cast<size_t>(put);
    }
  }

  std::function<Reply(const Received&)> answer_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<std::string> log_;  // guarded by mu_
};

// Tests against a FakeHttpServer: Serve starts it with the test's answers; the stores are over it.
class FakeServerTest : public ::testing::Test {
 protected:
  using Answer = std::function<FakeHttpServer::Reply(const FakeHttpServer::Received&)>;
  // `refuse_for_s`: connections are refused for that long first (FakeHttpServer).
  void Serve(Answer answer, double refuse_for_s = 0) {
    server_ = std::make_unique<FakeHttpServer>(std::move(answer), refuse_for_s);
  }
  // An anonymous S3 store, s3://bucket/pre/, over the server, retrying quickly.
  S3Store S3StoreOnServer() const {
    S3Config config;
    config.endpoint = server_->endpoint();
    config.client.retry.initial_backoff_s = 0.001;
    return S3Store("bucket", "pre", config);
  }
  // The server's "/volume" as an HTTP store retrying for `retry_timeout_s`.
  std::unique_ptr<HttpStore> HttpStoreOnServer(double retry_timeout_s) const {
    http::ClientOptions options;
    options.retry.timeout_s = retry_timeout_s;
    return std::make_unique<HttpStore>(server_->endpoint() + "/volume", options);
  }
  std::unique_ptr<FakeHttpServer> server_;
};

class S3ConditionalWritesTest : public FakeServerTest {};
class HttpClientRetryTest : public FakeServerTest {};

FakeHttpServer::Reply S3Error(int status, const std::string& code) {
  return {status, {{"Content-Type", "application/xml"}}, "<Error><Code>" + code + "</Code></Error>"};
}

// A server that writes whatever it is sent, conditions or not (as S3 servers without conditional
// writes do): tessera refuses conditional writes there instead of losing updates silently.
TEST_F(S3ConditionalWritesTest, AServerThatIgnoresConditionsIsUnsupported) {
  Serve([](const FakeHttpServer::Received& r) -> FakeHttpServer::Reply {
    if (r.method == "PUT") return {200, {{"ETag", "\"e1\""}}, ""};
    if (r.method == "DELETE") return {204, {}, ""};
    return {200, {{"ETag", "\"e1\""}}, "x"};
  });
  S3Store store = S3StoreOnServer();
  const Bytes value = Pattern(10, 1);
  const ByteView parts[] = {value};
  EXPECT_ERROR(store.SetPartsIf("k", parts, WriteCondition{std::nullopt}), ErrorKind::kUnsupported,
               "s3://bucket/pre/: this S3 server does not honour conditional writes (If-None-Match)",
               "over an existing object answered HTTP 200 instead of 412");
  const std::vector<std::string> probe = server_->log();
  ASSERT_EQ(probe.size(), 5u);  // create, three conditional requests, remove
  EXPECT_EQ(probe[0].rfind("PUT /bucket/pre/.tessera-conditional-write-probe-", 0), 0u) << probe[0];
  EXPECT_NE(probe[1].find("if-none-match: *"), std::string::npos) << probe[1];
  EXPECT_NE(probe[2].find("if-match: "), std::string::npos) << probe[2];
  EXPECT_EQ(probe[3].rfind("DELETE", 0), 0u) << probe[3];
  EXPECT_EQ(probe[4].find("if-match"), std::string::npos) << probe[4];
  // Found once per store: later calls send nothing.
  EXPECT_ERROR(store.SetPartsIf("k", parts, WriteCondition{"\"e1\""}), ErrorKind::kUnsupported, "(If-None-Match)");
  EXPECT_ERROR(store.EraseIf("k", WriteCondition{"\"e1\""}), ErrorKind::kUnsupported,
               "does not honour conditional writes (If-Match): DELETE");
  EXPECT_EQ(server_->log().size(), 5u);
}

// A server that honours conditions on PUT but not on DELETE: SetPartsIf works, EraseIf is refused.
TEST_F(S3ConditionalWritesTest, ConditionsHonouredOnPutButNotOnDelete) {
  Serve([](const FakeHttpServer::Received& r) -> FakeHttpServer::Reply {
    const bool conditional = r.headers.count("if-match") || r.headers.count("if-none-match");
    if (r.method == "PUT") return conditional ? S3Error(412, "PreconditionFailed") : FakeHttpServer::Reply{200, {}, ""};
    if (r.method == "DELETE") return {204, {}, ""};
    return S3Error(404, "NoSuchKey");
  });
  S3Store store = S3StoreOnServer();
  const Bytes value = Pattern(10, 1);
  const ByteView parts[] = {value};
  Result<bool> stored = store.SetPartsIf("k", parts, WriteCondition{std::nullopt});
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_FALSE(*stored);  // this server refuses every conditional PUT
  EXPECT_ERROR(store.EraseIf("k", WriteCondition{"\"e1\""}), ErrorKind::kUnsupported,
               "does not honour conditional writes (If-Match): DELETE", "with a stale ETag answered HTTP 204");
  // Expected missing, and missing: no conditional request needed.
  Result<bool> erased = store.EraseIf("k", WriteCondition{std::nullopt});
  ASSERT_TRUE(erased.ok()) << erased.status().ToString();
  EXPECT_TRUE(*erased);
}

// A conditional PUT whose first try got a 503 and whose retry got 412 may have been stored by the
// first try: an error, not a conflict the caller would answer by applying its change again.
TEST_F(S3ConditionalWritesTest, AConflictSeenOnlyByARetryIsAnError) {
  // Shared with the server's thread, which the fixture stops after this body ends.
  auto puts_of_k = std::make_shared<std::atomic<int>>(0);
  Serve([puts_of_k](const FakeHttpServer::Received& r) -> FakeHttpServer::Reply {
    const bool conditional = r.headers.count("if-match") || r.headers.count("if-none-match");
    if (r.target == "/bucket/pre/k" && r.method == "PUT")
      return (*puts_of_k)++ == 0 ? S3Error(503, "SlowDown") : S3Error(412, "PreconditionFailed");
    if (conditional) return S3Error(412, "PreconditionFailed");  // the probe's conditional requests
    if (r.method == "PUT") return {200, {}, ""};
    if (r.method == "DELETE") return {204, {}, ""};
    return S3Error(404, "NoSuchKey");
  });
  S3Store store = S3StoreOnServer();
  const Bytes value = Pattern(10, 1);
  const ByteView parts[] = {value};
  EXPECT_ERROR(store.SetPartsIf("k", parts, WriteCondition{"\"e0\""}), ErrorKind::kIo,
               "PUT s3://bucket/pre/k (10 bytes) if If-Match: \"e0\"", "HTTP 412 PreconditionFailed) on try 2",
               "may have been stored");
  EXPECT_EQ(puts_of_k->load(), 2);
}

// The test server (SeaweedFS) honours every condition tessera sends; the probe leaves nothing.
TEST_F(S3ServerTest, TheTestServerHonoursConditionalWrites) {
  S3Store store(server_->bucket, prefix_, server_->config);
  Result<S3Store::ConditionalSupport> support = store.ProbeConditionalWrites();
  ASSERT_TRUE(support.ok()) << support.status().ToString();
  EXPECT_TRUE(support->put.ok()) << support->put.ToString();
  EXPECT_TRUE(support->erase.ok()) << support->erase.ToString();
  auto keys = store.List("");
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ(*keys, std::vector<std::string>{});
}

TEST_F(S3ServerTest, CopiesAreUploadedInPartsReadAsTheyAreSent) {
  S3Config config = server_->config;
  config.multipart_threshold = config.part_size = 5u << 20;
  S3Store store(server_->bucket, prefix_, config);
  store_test::CountingStore source;
  for (const size_t size : {size_t{1000}, (size_t{11} << 20) + 13}) {
    const Bytes value = Pattern(size, 5);
    ASSERT_TRUE(source.Set("staged.h5", value).ok());
    source.requests = 0;
    const int64_t before = store.statistics().requests;
    ASSERT_TRUE(store.CopyFrom("file.h5", source, "staged.h5").ok());
    // Small: one PUT of the value read whole. Large: create + 3 parts + complete, each part one
    // range read of the source.
    const bool large = size > (5u << 20);
    EXPECT_EQ(store.statistics().requests - before, large ? 5 : 1) << size;
    EXPECT_EQ(source.requests.load(), large ? 1 + 3 : 1 + 1) << size;
    auto got = store.Get("file.h5");
    ASSERT_TRUE(got.ok() && *got) << size;
    EXPECT_TRUE(**got == value) << size;
  }
  Status missing = store.CopyFrom("other.h5", source, "absent.h5");
  EXPECT_ERROR(missing, ErrorKind::kNotFound, "counted://absent.h5", "no such value to copy");
  ASSERT_TRUE(store.Erase("file.h5").ok());
  auto uploads = store.ListIncompleteUploads();
  ASSERT_TRUE(uploads.ok());
  EXPECT_TRUE(uploads->empty());
}

}  // namespace
// A server that refuses connections for a while (its socket bound but not listening: connects
// fail at once with ECONNREFUSED, as while a server restarts) is retried through.
TEST_F(HttpClientRetryTest, ConnectionsRefusedForAWhileAreRetriedThrough) {
  Serve([](const FakeHttpServer::Received&) -> FakeHttpServer::Reply { return {200, {}, "up"}; }, /*refuse_for_s=*/2.0);
  std::unique_ptr<HttpStore> store = HttpStoreOnServer(30);
  const auto start = std::chrono::steady_clock::now();
  Result<std::optional<Bytes>> got = store->Get("info");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(std::string((*got)->begin(), (*got)->end()), "up");
  EXPECT_GE(seconds, 1.5);
  EXPECT_LT(seconds, 10);
  EXPECT_GT(store->statistics().retries, 3);  // the old count (8 tries from 0.05 s) gave up at ~1-2 s
}

// A budget of 1 s gives up after about 1 s, naming the time and the tries.
TEST(HttpClientTest, ARetryBudgetGivesUpAfterItsTimeNamingIt) {
  http::ClientOptions options;
  options.retry.timeout_s = 1;
  HttpStore store("http://127.0.0.1:1/volume", options);  // nothing listens on port 1
  const auto start = std::chrono::steady_clock::now();
  Result<std::optional<Bytes>> got = store.Get("info");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_ERROR(got, ErrorKind::kIo, "http://127.0.0.1:1/volume/info", "gave up after", "tries in 1.",
               "retry budget is 1.0 s");
  EXPECT_GE(seconds, 0.95);
  EXPECT_LT(seconds, 2.5);
  EXPECT_GT(store.statistics().requests, 3);
}

// A RetryGuard in scope is asked before each retry: once it says the write is no longer wanted
// (a distributed job given up), the retries end with its error; its other errors are ignored.
TEST_F(HttpClientRetryTest, ARetryGuardEndsRetriesWhenItsCheckFails) {
  Serve([](const FakeHttpServer::Received&) -> FakeHttpServer::Reply { return {503, {}, ""}; });
  std::unique_ptr<HttpStore> store = HttpStoreOnServer(30);
  int checks = 0;
  {
    http::RetryGuard guard([&] {
      ++checks;
      if (checks < 3) return IoError("marker unreadable for now");  // not a verdict: retries go on
      return FailedPrecondition("job cancelled");
    });
    const auto start = std::chrono::steady_clock::now();
    EXPECT_ERROR(store->Get("info"), ErrorKind::kFailedPrecondition, "job cancelled", "not retried");
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10);
  }
  EXPECT_EQ(checks, 3);
  EXPECT_EQ(store->statistics().requests, 3);
  // Out of scope: no guard, so the budget decides again.
  EXPECT_EQ(http::RetryGuard::CheckBeforeRetry().kind(), ErrorKind::kOk);
}

// A server that keeps answering 503 is retried for the budget; the error names the status, the
// tries, the time and the budget.
TEST_F(HttpClientRetryTest, AStatusThatStaysRetryableIsReportedWithTheBudget) {
  Serve([](const FakeHttpServer::Received&) -> FakeHttpServer::Reply { return {503, {}, ""}; });
  std::unique_ptr<HttpStore> store = HttpStoreOnServer(0.5);
  EXPECT_ERROR(store->Get("info"), ErrorKind::kIo, "HTTP 503", "gave up after", "retry budget is 0.5 s");
  EXPECT_GT(store->statistics().requests, 2);
}

// What is not transient fails at once, whatever the budget.
TEST_F(HttpClientRetryTest, AFinalStatusIsNotRetried) {
  Serve([](const FakeHttpServer::Received&) -> FakeHttpServer::Reply { return {403, {}, "no"}; });
  std::unique_ptr<HttpStore> store = HttpStoreOnServer(60);
  EXPECT_ERROR(store->Get("info"), ErrorKind::kIo, "403");
  EXPECT_EQ(store->statistics().requests, 1);
}

// A location's storage_options reach the store it opens.
TEST(HttpClientTest, ALocationsStoreOptionsReachItsStore) {
  StoreOptions o;
  o.retry_timeout_s = 0.5;
  Result<Location> where = ParseLocation("http://127.0.0.1:1/volume", o);
  ASSERT_TRUE(where.ok()) << where.status().ToString();
  Result<std::shared_ptr<Store>> store = OpenLocationStore(*where, /*create=*/false);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_ERROR((*store)->Get("info"), ErrorKind::kIo, "retry budget is 0.5 s");
}

}  // namespace tessera
