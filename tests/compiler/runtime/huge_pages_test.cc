// Tests of compiler/runtime/huge_pages.h: blocks of 1 MiB or more start on a
// 2 MiB boundary and are advised, smaller ones get ordinary pages, every
// block is zeroed and writable, and a size that cannot be mapped gives a
// null block.
#include "compiler/runtime/huge_pages.h"

#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"

namespace lathe::runtime {
namespace {

TEST(HugePagesTest, LargeBlocksStartOnA2MiBBoundary) {
  for (size_t bytes : {kMinHugeBytes, kHugePageBytes + 1, 5 * kHugePageBytes}) {
    HugePageBlock block = MapHugePageBlock(bytes);
    ASSERT_NE(block.data, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block.data) % kHugePageBytes, 0u);
    EXPECT_GE(block.mapped, bytes);
    EXPECT_EQ(block.mapped % kHugePageBytes, 0u);
    EXPECT_EQ(block.data[0], 0);
    EXPECT_EQ(block.data[bytes - 1], 0);
    std::memset(block.data, 0x5a, bytes);
    UnmapHugePageBlock(block);
  }
}

TEST(HugePagesTest, SmallBlocksGetOrdinaryPages) {
  HugePageBlock block = MapHugePageBlock(5000);
  ASSERT_NE(block.data, nullptr);
  EXPECT_FALSE(block.advised);
  EXPECT_EQ(block.mapped, 8192u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block.data) % 4096, 0u);
  std::memset(block.data, 1, 5000);
  UnmapHugePageBlock(block);
}

TEST(HugePagesTest, NothingToMapGivesANullBlock) {
  EXPECT_EQ(MapHugePageBlock(0).data, nullptr);
  EXPECT_EQ(MapHugePageBlock(SIZE_MAX).data, nullptr);
  EXPECT_EQ(MapHugePageBlock(SIZE_MAX - kHugePageBytes).data, nullptr);
  UnmapHugePageBlock(HugePageBlock{});  // ignored
}

}  // namespace
}  // namespace lathe::runtime
