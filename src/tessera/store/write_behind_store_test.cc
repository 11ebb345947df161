// WriteBehindStore's own promises (the conformance suite covers it as a store): writes of one key
// land in call order, a publish lands after every earlier write and never after a failed one (and a
// backlog of publishes is one request), the queue stays within its byte budget, and a failure reaches
// the writer.
#include "tessera/store/write_behind_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cpp_support/status_matchers.h"
#include "tessera/store/memory_store.h"

namespace tessera {
namespace {

// A MemoryStore whose writes can be held at a gate, fail for chosen keys, and are logged in the
// order they complete.
class ScriptedStore final : public Store {
 public:
  Result<std::optional<Bytes>> Get(const std::string& key) const override { return memory_.Get(key); }
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset, uint64_t length) const override {
    return memory_.GetRange(key, offset, length);
  }
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override {
    return memory_.GetSuffix(key, length);
  }
  Result<std::optional<uint64_t>> Size(const std::string& key) const override { return memory_.Size(key); }
  std::string Describe(const std::string& key) const override { return "scripted://" + key; }
  Result<std::vector<std::string>> List(const std::string& prefix) const override { return memory_.List(prefix); }
  Status Erase(const std::string& key) override { return memory_.Erase(key); }

  Status Set(const std::string& key, ByteView value) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++started_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
    if (key == failing_key_) return IoError(Describe(key) + ": injected failure");
    TESSERA_RETURN_IF_ERROR(memory_.Set(key, value));
    std::lock_guard<std::mutex> lock(mu_);
    log_.push_back(key + "=" + std::string(value.begin(), value.end()));
    return Status::Ok();
  }

  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = false;
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void WaitStarted(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return started_ >= n; });
  }
  std::vector<std::string> log() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }
  std::string failing_key_;
  int delay_us_ = 0;

 private:
  MemoryStore memory_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int started_ = 0;
  std::vector<std::string> log_;
};

WriteBehindOptions Options(int uploads, int64_t bytes) {
  WriteBehindOptions o;
  o.uploads = uploads;
  o.max_queued_bytes = bytes;
  return o;
}

std::string Value(const Result<std::optional<Bytes>>& r) {
  if (!r.ok() || !*r) return "<none>";
  return std::string((*r)->begin(), (*r)->end());
}

TEST(WriteBehindStoreTest, WritesOfOneKeyLandInCallOrder) {
  auto inner = std::make_shared<ScriptedStore>();
  inner->delay_us_ = 200;
  WriteBehindStore store(inner, Options(8, 1 << 20));
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(store.Set("k" + std::to_string(i % 3), AsView(std::to_string(i))).ok());
  // A read waits for the key's queued writes.
  EXPECT_EQ(Value(store.Get("k2")), "197");
  ASSERT_TRUE(store.Flush().ok());
  EXPECT_EQ(Value(inner->Get("k0")), "198");
  EXPECT_EQ(Value(inner->Get("k1")), "199");
  int last[3] = {-1, -1, -1};
  for (const std::string& entry : inner->log()) {
    const int key = entry[1] - '0';
    const int v = std::stoi(entry.substr(3));
    EXPECT_GT(v, last[key]) << entry;
    last[key] = v;
  }
}

TEST(WriteBehindStoreTest, PublishLandsAfterEveryEarlierWrite) {
  auto inner = std::make_shared<ScriptedStore>();
  inner->delay_us_ = 300;
  WriteBehindStore store(inner, Options(8, 1 << 20));
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 20; ++i)
      ASSERT_TRUE(store.Set("c/" + std::to_string(round) + "." + std::to_string(i), AsView("x")).ok());
    ASSERT_TRUE(store.Publish("zarr.json", AsView(std::to_string(round))).ok());
  }
  ASSERT_TRUE(store.Flush().ok());
  // Each publish of round r follows all 20 chunks of rounds <= r.
  int chunks = 0;
  for (const std::string& entry : inner->log()) {
    if (entry.rfind("zarr.json=", 0) == 0) {
      EXPECT_GE(chunks, 20 * (std::stoi(entry.substr(10)) + 1)) << entry;
    } else {
      ++chunks;
    }
  }
  EXPECT_EQ(chunks, 100);
  EXPECT_EQ(Value(inner->Get("zarr.json")), "4");
}

TEST(WriteBehindStoreTest, NothingIsPublishedAfterAFailedWriteAndTheWriterLearnsIt) {
  auto inner = std::make_shared<ScriptedStore>();
  inner->failing_key_ = "c/bad";
  ASSERT_TRUE(inner->Set("zarr.json", AsView("old")).ok());
  WriteBehindStore store(inner, Options(4, 1 << 20));
  ASSERT_TRUE(store.Set("c/good", AsView("1")).ok());
  ASSERT_TRUE(store.Set("c/bad", AsView("2")).ok());  // queued: it fails later
  const Status published = store.Publish("zarr.json", AsView("new"));
  const Status flushed = store.Flush();
  EXPECT_ERROR(flushed, ErrorKind::kIo, "scripted://c/bad", "injected failure");
  // Publish may return before the failure is known; if it knows, it reports that failure.
  if (!published.ok()) EXPECT_ERROR(published, ErrorKind::kIo, "scripted://c/bad", "injected failure");
  EXPECT_EQ(Value(inner->Get("zarr.json")), "old");
  // Later writes fail with the same error; cleanup still works.
  EXPECT_ERROR(store.Set("c/later", AsView("3")), ErrorKind::kIo, "scripted://c/bad", "injected failure");
  EXPECT_TRUE(store.Erase("zarr.json").ok());
  EXPECT_EQ(Value(inner->Get("zarr.json")), "<none>");
  EXPECT_EQ(Value(inner->Get("c/later")), "<none>");
}

TEST(WriteBehindStoreTest, QueueStaysWithinItsByteBudget) {
  auto inner = std::make_shared<ScriptedStore>();
  inner->Close();
  WriteBehindStore store(inner, Options(2, 1000));
  const std::string v(400, 'v');
  ASSERT_TRUE(store.Set("a", AsView(v)).ok());
  ASSERT_TRUE(store.Set("b", AsView(v)).ok());  // 800 bytes queued: both fit
  inner->WaitStarted(2);                         // both uploading, held at the gate
  std::atomic<bool> returned{false};
  std::thread writer([&] {
    EXPECT_TRUE(store.Set("c", AsView(v)).ok());  // 1200 > 1000: waits for room
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(returned.load());
  inner->Open();
  writer.join();
  EXPECT_TRUE(returned.load());
  // A value larger than the whole budget goes through alone.
  ASSERT_TRUE(store.Set("big", AsView(std::string(5000, 'b'))).ok());
  ASSERT_TRUE(store.Flush().ok());
  EXPECT_EQ(inner->log().size(), 4u);
  EXPECT_EQ(Value(store.Get("c")), v);
}

TEST(WriteBehindStoreTest, CancelDropsQueuedWritesAndWaitsForUploadingOnes) {
  auto inner = std::make_shared<ScriptedStore>();
  inner->Close();
  WriteBehindStore store(inner, Options(1, 1 << 20));
  ASSERT_TRUE(store.Set("uploading", AsView("1")).ok());
  inner->WaitStarted(1);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store.Set("queued" + std::to_string(i), AsView("2")).ok());
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    inner->Open();
  });
  store.Cancel();  // returns once "uploading" has landed
  opener.join();
  EXPECT_EQ(inner->log(), std::vector<std::string>{"uploading=1"});
  EXPECT_ERROR(store.Set("late", AsView("3")), ErrorKind::kFailedPrecondition, "scripted://", "writes cancelled");
  EXPECT_ERROR(store.Flush(), ErrorKind::kFailedPrecondition, "scripted://", "writes cancelled");
  EXPECT_TRUE(store.Erase("uploading").ok());
}

TEST(WriteBehindStoreTest, DestructorWaitsForQueuedWrites) {
  auto inner = std::make_shared<ScriptedStore>();
  inner->delay_us_ = 1000;
  {
    WriteBehindStore store(inner, Options(2, 1 << 20));
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(store.Set("k" + std::to_string(i), AsView("v")).ok());
  }
  EXPECT_EQ(inner->log().size(), 10u);
}

// A backlog of publishes that could all start (a slow store behind a fast stream) is one request: a
// publish that may start when a later one of its key may too gives way to the latest of them.
TEST(WriteBehindStoreTest, ABacklogOfPublishesIsOneRequest) {
  auto inner = std::make_shared<ScriptedStore>();
  inner->Close();
  WriteBehindStore store(inner, Options(1, 1 << 20));
  ASSERT_TRUE(store.Set("c/0", AsView("x")).ok());
  inner->WaitStarted(1);  // c/0 is uploading, held at the gate
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(store.Publish("zarr.json", AsView(std::to_string(i))).ok());
  inner->Open();
  ASSERT_TRUE(store.Flush().ok());
  EXPECT_EQ(inner->log(), (std::vector<std::string>{"c/0=x", "zarr.json=9"}));
}

// A publish followed by unfinished writes is still applied (the stream's progress keeps being
// published), each after the writes before it.
TEST(WriteBehindStoreTest, APublishBeforeUnfinishedWritesIsStillApplied) {
  auto inner = std::make_shared<ScriptedStore>();
  inner->Close();
  WriteBehindStore store(inner, Options(1, 1 << 20));
  ASSERT_TRUE(store.Set("c/0", AsView("x")).ok());
  inner->WaitStarted(1);
  ASSERT_TRUE(store.Publish("zarr.json", AsView("0")).ok());
  ASSERT_TRUE(store.Set("c/1", AsView("y")).ok());
  ASSERT_TRUE(store.Publish("zarr.json", AsView("1")).ok());
  ASSERT_TRUE(store.Set("c/2", AsView("z")).ok());
  ASSERT_TRUE(store.Publish("zarr.json", AsView("2")).ok());
  ASSERT_TRUE(store.Publish("zarr.json", AsView("3")).ok());
  inner->Open();
  ASSERT_TRUE(store.Flush().ok());
  // 2 gives way to 3, which nothing separates from it.
  EXPECT_EQ(inner->log(), (std::vector<std::string>{"c/0=x", "zarr.json=0", "c/1=y", "zarr.json=1", "c/2=z",
                                                    "zarr.json=3"}));
  EXPECT_EQ(Value(inner->Get("zarr.json")), "3");
}

// A writable file's Commit is synchronous and lands after the key's queued writes.
TEST(WriteBehindStoreTest, AWritableFileCommitsAfterTheKeysQueuedWrites) {
  auto inner = std::make_shared<ScriptedStore>();
  inner->Close();
  WriteBehindStore store(inner, Options(1, 1 << 20));
  ASSERT_TRUE(store.Set("f.h5", AsView("old")).ok());
  inner->WaitStarted(1);  // uploading, held at the gate
  auto file = store.OpenWritableFile("f.h5");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->Describe(), "scripted://f.h5");
  ASSERT_TRUE((*file)->WriteAt(0, AsView("new")).ok());
  std::atomic<bool> committed{false};
  std::thread committer([&] {
    EXPECT_TRUE((*file)->Commit().ok());
    committed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(committed.load());
  inner->Open();
  committer.join();
  EXPECT_EQ(inner->log(), (std::vector<std::string>{"f.h5=old", "f.h5=new"}));
  ASSERT_TRUE(store.Flush().ok());
  EXPECT_EQ(Value(inner->Get("f.h5")), "new");
}

// After a failed write a writable file stores nothing: opening one fails, and one opened before the
// failure fails at Commit, with that failure.
TEST(WriteBehindStoreTest, AWritableFileStoresNothingAfterAFailedWrite) {
  auto inner = std::make_shared<ScriptedStore>();
  inner->failing_key_ = "c/bad";
  WriteBehindStore store(inner, Options(2, 1 << 20));
  auto before = store.OpenWritableFile("f.h5");
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_TRUE((*before)->WriteAt(0, AsView("data")).ok());
  ASSERT_TRUE(store.Set("c/bad", AsView("x")).ok());
  EXPECT_ERROR(store.Flush(), ErrorKind::kIo, "scripted://c/bad", "injected failure");
  EXPECT_ERROR((*before)->Commit(), ErrorKind::kIo, "scripted://c/bad", "injected failure");
  EXPECT_ERROR(store.OpenWritableFile("g.h5"), ErrorKind::kIo, "scripted://c/bad", "injected failure");
  EXPECT_EQ(Value(inner->Get("f.h5")), "<none>");
  EXPECT_TRUE(inner->log().empty());
}

}  // namespace
}  // namespace tessera
