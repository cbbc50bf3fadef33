// Tests of lathe_model_constants (lathe_runtime.h, model_constants.cc): an
// image of 1 MiB or more is copied once, on the first call, into the space
// at its first 2 MiB boundary, advised for huge pages; later calls, and
// calls racing the first, get that copy; a smaller image, none to keep, or
// transparent huge pages set to never: the image is read where it is.
#include "compiler/runtime/model_constants.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compiler/runtime/huge_pages.h"
#include "compiler/runtime/lathe_runtime.h"
#include "gtest/gtest.h"

namespace lathe::runtime {
namespace {

constexpr uint64_t kImageBytes = 3 << 20;

// The space as a library has it: zero-initialized static storage.
alignas(64) char g_space[LATHE_MODEL_CONSTANTS_SPACE(kImageBytes)];
alignas(64) char g_race_space[LATHE_MODEL_CONSTANTS_SPACE(kImageBytes)];
alignas(64) char g_mode_space[LATHE_MODEL_CONSTANTS_SPACE(kImageBytes)];

std::vector<float> Image() {
  std::vector<float> image(kImageBytes / sizeof(float));
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<float>(i);
  return image;
}

bool TransparentHugePagesBuiltIn() {
  return std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good();
}

// The VmFlags of the mapping of /proc/self/smaps holding `p`.
std::string VmFlagsAt(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= address && address < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(ModelConstantsTest, ALargeImageIsCopiedOnceOntoAdvisedSpace) {
  std::vector<float> image = Image();
  const void* where = nullptr;
  const void* first =
      lathe_model_constants(image.data(), g_space, kImageBytes, &where);
  if (!TransparentHugePagesBuiltIn()) {
    EXPECT_EQ(first, image.data()) << "no transparent huge pages: no copy";
    return;
  }
  ASSERT_NE(first, image.data());
  EXPECT_EQ(where, first);
  const auto at = reinterpret_cast<uintptr_t>(first);
  const auto space = reinterpret_cast<uintptr_t>(g_space);
  EXPECT_EQ(at % kHugePageBytes, 0u);
  EXPECT_GE(at, space);
  EXPECT_LT(at, space + kHugePageBytes);
  EXPECT_EQ(std::memcmp(first, image.data(), kImageBytes), 0);
  // MADV_HUGEPAGE shows as "hg" among the mapping's flags.
  EXPECT_NE(VmFlagsAt(first).find(" hg"), std::string::npos)
      << VmFlagsAt(first);
  // A second call returns the copy without copying again.
  image[0] = -1.0f;
  EXPECT_EQ(lathe_model_constants(image.data(), g_space, kImageBytes, &where),
            first);
  EXPECT_EQ(static_cast<const float*>(first)[0], 0.0f);
}

TEST(ModelConstantsTest, RacingFirstCallsShareOneCopy) {
  const std::vector<float> image = Image();
  const void* where = nullptr;
  std::vector<const void*> got(8, nullptr);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      got[t] = lathe_model_constants(image.data(), g_race_space, kImageBytes,
                                     &where);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const void* p : got) EXPECT_EQ(p, got[0]);
  EXPECT_EQ(where, got[0]);
  EXPECT_EQ(std::memcmp(got[0], image.data(), kImageBytes), 0);
}

// A file with the given text, for the mode ModelConstants reads.
std::string ModeFile(const std::string& text) {
  const std::string path = ::testing::TempDir() + "thp_enabled";
  std::ofstream(path) << text;
  return path;
}

TEST(ModelConstantsTest, TransparentHugePagesSetToNeverLeaveTheImageInPlace) {
  const std::vector<float> image = Image();
  const void* where = nullptr;
  EXPECT_EQ(ModelConstants(image.data(), g_mode_space, kImageBytes, &where,
                           ModeFile("always madvise [never]\n").c_str()),
            image.data());
  EXPECT_EQ(where, image.data());
  if (!TransparentHugePagesBuiltIn()) return;
  // "madvise" (or "always"), or no file to read: the copy.
  for (const std::string& mode :
       {ModeFile("always [madvise] never\n"), std::string("/nonexistent")}) {
    SCOPED_TRACE(mode);
    where = nullptr;
    const void* copy = ModelConstants(image.data(), g_mode_space, kImageBytes,
                                      &where, mode.c_str());
    EXPECT_NE(copy, image.data());
    EXPECT_EQ(std::memcmp(copy, image.data(), kImageBytes), 0);
  }
}

TEST(ModelConstantsTest, SmallImagesAreReadWhereTheyAre) {
  const std::vector<float> image(1000, 2.0f);
  std::vector<char> space(LATHE_MODEL_CONSTANTS_SPACE(4000));
  const void* where = nullptr;
  EXPECT_EQ(lathe_model_constants(image.data(), space.data(), 4000, &where),
            image.data());
  EXPECT_EQ(where, image.data());
  // Nowhere to keep the answer: the image.
  EXPECT_EQ(lathe_model_constants(image.data(), space.data(), 4000, nullptr),
            image.data());
}

}  // namespace
}  // namespace lathe::runtime
