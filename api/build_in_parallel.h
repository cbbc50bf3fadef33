// How a model's load builds its distinct kernels (model.h: LLVM; gpu_model.h:
// NVRTC): items 0..count-1 taken in turn by up to kMaxBuildThreads threads
// (the calling one among them), each item once. `build` must be safe to
// call from several threads at once for different items.
// Tests: tests/api/model_test.cc, tests/api/gpu_model_test.cc (every
// distinct kernel of a model built).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace lathe::api {

// Upper bound on threads building kernels at load.
inline constexpr unsigned kMaxBuildThreads = 8;

inline void BuildInParallel(size_t count,
                            const std::function<void(size_t)>& build) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < count; i = next++) build(i);
  };
  unsigned threads = std::min<unsigned>(
      std::max(1u, std::thread::hardware_concurrency()), kMaxBuildThreads);
  threads = static_cast<unsigned>(std::min<size_t>(threads, count));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace lathe::api
