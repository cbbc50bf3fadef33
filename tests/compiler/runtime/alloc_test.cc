// Tests of lathe_alloc / lathe_free (compiler/runtime/runtime_api.cc) and
// the scratch they keep between kernel calls (scratch_cache.h).
#include <cstdint>
#include <cstring>
#include <vector>

#include "compiler/runtime/lathe_runtime.h"
#include "compiler/runtime/scratch_cache.h"
#include "gtest/gtest.h"

namespace lathe::runtime {
namespace {

TEST(AllocTest, ReturnsAlignedWritableMemory) {
  for (uint64_t alignment : {16, 64, 4096}) {
    for (uint64_t bytes : {1, 7, 63, 64, 65, 1000, 4096, 1 << 20}) {
      void* p = lathe_alloc(bytes, alignment);
      ASSERT_NE(p, nullptr) << bytes << " bytes at " << alignment;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u)
          << bytes << " bytes at " << alignment;
      std::memset(p, 0xab, bytes);
      lathe_free(p);
    }
  }
}

TEST(AllocTest, ZeroBytesGivesAUniqueFreeablePointer) {
  void* a = lathe_alloc(0, 64);
  void* b = lathe_alloc(0, 64);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  lathe_free(a);
  lathe_free(b);
}

TEST(AllocTest, SmallAlignmentsAreRaisedToPointerSize) {
  for (uint64_t alignment : {1, 2, 4}) {
    void* p = lathe_alloc(10, alignment);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % sizeof(void*), 0u);
    lathe_free(p);
  }
}

TEST(AllocTest, RejectsAlignmentsThatAreNotPowersOfTwo) {
  for (uint64_t alignment : {0, 3, 24, 48, 65}) {
    EXPECT_EQ(lathe_alloc(64, alignment), nullptr) << alignment;
  }
}

TEST(AllocTest, SizesThatOverflowWhenRoundedUpReturnNull) {
  // (A merely huge size reaches aligned_alloc, which returns NULL; not tested
  // here because AddressSanitizer aborts on it by default.)
  EXPECT_EQ(lathe_alloc(UINT64_MAX, 64), nullptr);
  EXPECT_EQ(lathe_alloc(UINT64_MAX - 10, 4096), nullptr);
}

TEST(AllocTest, FreeOfNullIsANoOp) { lathe_free(nullptr); }

#if defined(__SANITIZE_ADDRESS__)
#define SKIP_UNDER_ASAN() \
  GTEST_SKIP() << "nothing is kept under AddressSanitizer"
#else
#define SKIP_UNDER_ASAN() (void)0
#endif

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(ScratchTest, AFreedBlockServesTheNextAllocationOfItsSize) {
  SKIP_UNDER_ASAN();
  lathe_release_scratch();
  void* first = lathe_alloc(kMiB, 64);
  ASSERT_NE(first, nullptr);
  std::memset(first, 1, kMiB);
  lathe_free(first);
  EXPECT_EQ(KeptScratchBlocks(), 1);
  void* again = lathe_alloc(kMiB, 64);
  EXPECT_EQ(again, first);
  EXPECT_EQ(KeptScratchBlocks(), 0);
  // Slightly smaller still fits; the block is the same memory.
  lathe_free(again);
  void* smaller = lathe_alloc(kMiB - 4096, 64);
  EXPECT_EQ(smaller, first);
  lathe_free(smaller);
  lathe_release_scratch();
  EXPECT_EQ(KeptScratchBlocks(), 0);
  EXPECT_EQ(KeptScratchBytes(), 0u);
}

TEST(ScratchTest, SmallBlocksAreNotKeptNorLargeOnesHandedToSmallRequests) {
  SKIP_UNDER_ASAN();
  lathe_release_scratch();
  lathe_free(lathe_alloc(1000, 64));
  EXPECT_EQ(KeptScratchBlocks(), 0);
  void* large = lathe_alloc(4 * kMiB, 64);
  lathe_free(large);
  ASSERT_EQ(KeptScratchBlocks(), 1);
  void* small = lathe_alloc(kMiB, 64);  // a quarter: not worth the 4 MiB
  EXPECT_NE(small, large);
  EXPECT_EQ(KeptScratchBlocks(), 1);
  lathe_free(small);
  lathe_release_scratch();
}

TEST(ScratchTest, AKeptBlockIsHandedOutOnlyAtTheAlignmentAsked) {
  SKIP_UNDER_ASAN();
  lathe_release_scratch();
  constexpr uint64_t kPage = 4096,
                     kCoarse = uint64_t{128} << 10;  // 1 MiB is a multiple
  void* block = lathe_alloc(kMiB, kPage);
  lathe_free(block);
  void* p = lathe_alloc(kMiB, kCoarse);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kCoarse, 0u);
  if (reinterpret_cast<uintptr_t>(block) % kCoarse != 0) {
    EXPECT_NE(p, block);
  }
  lathe_free(p);
  lathe_release_scratch();
}

TEST(ScratchTest, KeepsAtMostEightBlocksAndSixtyFourMiB) {
  SKIP_UNDER_ASAN();
  lathe_release_scratch();
  std::vector<void*> blocks;
  for (int i = 0; i < 12; ++i) blocks.push_back(lathe_alloc(kMiB, 64));
  for (void* p : blocks) lathe_free(p);
  EXPECT_EQ(KeptScratchBlocks(), kScratchSlots);
  // The newest are kept: the last freed comes back first.
  void* newest = lathe_alloc(kMiB, 64);
  EXPECT_EQ(newest, blocks.back());
  lathe_free(newest);
  blocks.clear();
  for (int i = 0; i < 3; ++i) blocks.push_back(lathe_alloc(30 * kMiB, 64));
  for (void* p : blocks) lathe_free(p);
  EXPECT_LE(KeptScratchBytes(), kScratchMaxBytes);
  EXPECT_GE(KeptScratchBytes(), 60 * kMiB);  // two of the three
  lathe_free(lathe_alloc(128 * kMiB, 64));   // over the bound: not kept
  EXPECT_LE(KeptScratchBytes(), kScratchMaxBytes);
  lathe_release_scratch();
  EXPECT_EQ(KeptScratchBlocks(), 0);
}

TEST(VersionTest, IsTheProjectVersion) {
  ASSERT_NE(lathe_runtime_version(), nullptr);
  EXPECT_STRNE(lathe_runtime_version(), "unknown");
  EXPECT_NE(std::strchr(lathe_runtime_version(), '.'), nullptr);
}

}  // namespace
}  // namespace lathe::runtime
