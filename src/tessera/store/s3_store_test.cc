// The S3 store beyond the conformance suite: its configuration lookup, XML parsing, retries, and
// (S3ServerTest, against the real server of the ctest fixture `s3`) pagination, request counts and
// the errors a server gives.
#include "tessera/store/s3_store.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "cpp_support/status_matchers.h"
#include "tessera/store/http_store.h"
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
                           "TESSERA_S3_ADDRESSING_STYLE"})
    env[name] = std::nullopt;
  env["HOME"] = home;
  return env;
}

// S3Config::FromEnvironment with HOME at `home`, only `set` of the AWS variables set.
Result<S3Config> ConfigWith(const std::string& home, const std::map<std::string, std::string>& set = {}) {
  auto vars = CleanAwsEnv(home);
  for (const auto& [name, value] : set) vars[name] = value;
  ScopedEnv env(vars);
  return S3Config::FromEnvironment();
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
}  // namespace tessera
