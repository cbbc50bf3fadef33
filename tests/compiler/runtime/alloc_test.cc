// Tests of lathe_alloc / lathe_free (compiler/runtime/runtime_api.cc).
#include <cstdint>
#include <cstring>

#include "compiler/runtime/lathe_runtime.h"
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

TEST(VersionTest, IsTheProjectVersion) {
  ASSERT_NE(lathe_runtime_version(), nullptr);
  EXPECT_STRNE(lathe_runtime_version(), "unknown");
  EXPECT_NE(std::strchr(lathe_runtime_version(), '.'), nullptr);
}

}  // namespace
}  // namespace lathe::runtime
