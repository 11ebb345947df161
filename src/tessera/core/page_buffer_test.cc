#include "tessera/core/page_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(PageBufferTest, AllocatesZeroedWritableMemoryAndMoves) {
  Result<PageBuffer> b = PageBuffer::Allocate(5 << 20 | 123);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(b->size(), size_t{5 << 20 | 123});
  EXPECT_EQ(b->data()[0], 0);
  EXPECT_EQ(b->data()[b->size() - 1], 0);
  b->data()[b->size() - 1] = 7;
  PageBuffer moved = std::move(b).value();
  EXPECT_EQ(moved.data()[moved.size() - 1], 7);
  PageBuffer other;
  other = std::move(moved);
  EXPECT_EQ(other.size(), size_t{5 << 20 | 123});
  EXPECT_EQ(moved.data(), nullptr);
}

TEST(PageBufferTest, EmptyBufferHasNoMemory) {
  Result<PageBuffer> b = PageBuffer::Allocate(0);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->data(), nullptr);
  EXPECT_EQ(b->size(), 0u);
}

// Pages of [p, p + n) that are resident, by mincore.
size_t ResidentPages(const uint8_t* p, size_t n) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> v((n + page - 1) / page);
  if (::mincore(const_cast<uint8_t*>(p), n, v.data()) != 0) return 0;
  size_t r = 0;
  for (unsigned char c : v) r += c & 1;
  return r;
}

TEST(PageBufferTest, PrefaultBacksTheRangeAndKeepsItsContents) {
  const size_t size = size_t{8} << 20;
  Result<PageBuffer> b = PageBuffer::Allocate(size);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  b->data()[4096 * 3 + 5] = 42;      // written before: kept
  b->Prefault(4096 * 3 + 1, 4 << 20);  // an unaligned start and a range past the end are fine
  b->Prefault(size - 10, 100);
  b->Prefault(size + 4096, 10);
  EXPECT_EQ(b->data()[4096 * 3 + 5], 42);
  EXPECT_EQ(b->data()[4096 * 3 + 6], 0);
  EXPECT_EQ(b->data()[size - 1], 0);
#ifdef MADV_POPULATE_WRITE
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  if (ResidentPages(b->data() + 4096 * 3, 4 << 20) == 0) GTEST_SKIP() << "kernel without MADV_POPULATE_WRITE";
  EXPECT_EQ(ResidentPages(b->data() + 4096 * 3, 4 << 20), (size_t{4} << 20) / page);
#endif
}

}  // namespace
}  // namespace tessera
