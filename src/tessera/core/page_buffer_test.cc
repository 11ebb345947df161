#include "tessera/core/page_buffer.h"

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

}  // namespace
}  // namespace tessera
