// WriteBehindStore's publishes on a slow store: a publish that may start when later publishes of
// its key may too gives way to the latest of them (a backlog of stale metadata is not uploaded one
// request at a time before Flush returns), and a publish followed by unfinished writes is still
// applied (the stream's progress keeps being published).
#include <gtest/gtest.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/core/status_test_util.h"
#include "tessera/store/memory_store.h"
#include "tessera/store/write_behind_store.h"

namespace tessera {
namespace {

// A MemoryStore whose writes wait at a gate and are logged in the order they complete.
class GatedStore final : public Store {
 public:
  Result<std::optional<Bytes>> Get(const std::string& key) const override { return memory_.Get(key); }
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset, uint64_t length) const override {
    return memory_.GetRange(key, offset, length);
  }
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override {
    return memory_.GetSuffix(key, length);
  }
  Result<std::optional<uint64_t>> Size(const std::string& key) const override { return memory_.Size(key); }
  std::string Describe(const std::string& key) const override { return "gated://" + key; }
  Result<std::vector<std::string>> List(const std::string& prefix) const override { return memory_.List(prefix); }
  Status Erase(const std::string& key) override { return memory_.Erase(key); }

  Status Set(const std::string& key, ByteView value) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++started_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
    }
    TESSERA_RETURN_IF_ERROR(memory_.Set(key, value));
    std::lock_guard<std::mutex> lock(mu_);
    log_.push_back(key + "=" + std::string(value.begin(), value.end()));
    return Status::Ok();
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

 private:
  MemoryStore memory_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int started_ = 0;
  std::vector<std::string> log_;
};

WriteBehindOptions OneUpload() {
  WriteBehindOptions o;
  o.uploads = 1;
  o.max_queued_bytes = 1 << 20;
  return o;
}

TEST(WriteBehindPublishTest, ABacklogOfPublishesIsOneRequest) {
  auto inner = std::make_shared<GatedStore>();
  WriteBehindStore store(inner, OneUpload());
  ASSERT_TRUE(store.Set("c/0", AsView("x")).ok());
  inner->WaitStarted(1);  // c/0 is uploading, held at the gate
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(store.Publish("zarr.json", AsView(std::to_string(i))).ok());
  inner->Open();
  ASSERT_TRUE(store.Flush().ok());
  // The ten publishes could all start once c/0 had landed: only the last is uploaded.
  EXPECT_EQ(inner->log(), (std::vector<std::string>{"c/0=x", "zarr.json=9"}));
}

TEST(WriteBehindPublishTest, APublishBeforeUnfinishedWritesIsStillApplied) {
  auto inner = std::make_shared<GatedStore>();
  WriteBehindStore store(inner, OneUpload());
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
  // Each publish lands after the writes before it; 2 gives way to 3, which nothing separates from it.
  EXPECT_EQ(inner->log(), (std::vector<std::string>{"c/0=x", "zarr.json=0", "c/1=y", "zarr.json=1", "c/2=z",
                                                    "zarr.json=3"}));
  Result<std::optional<Bytes>> published = inner->Get("zarr.json");
  ASSERT_TRUE(published.ok() && *published);
  EXPECT_EQ(std::string((*published)->begin(), (*published)->end()), "3");
}

}  // namespace
}  // namespace tessera
