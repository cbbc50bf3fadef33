// Timing with cold caches: between samples, write over a buffer larger than
// the last-level cache, so every sample starts with the kernel's data out of
// the caches (as a kernel called once between other work finds it). Each
// sample is then one call, timed alone; the flush is not counted.
// Tests: tests/runner/cache_flush_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/measure/timing.h"

namespace lathe::runner {

// The size of this machine's largest data or unified cache (sysfs, cpu0),
// or 32 MiB when it cannot be read.
int64_t LargestCacheBytes();

class CacheFlusher {
 public:
  // A buffer of `bytes` (at least 1 MiB), written once here so its pages
  // exist before anything is timed.
  explicit CacheFlusher(int64_t bytes);
  // One the size of twice the largest cache: what evicts it in practice
  // (caches are not perfectly LRU).
  static CacheFlusher ForThisMachine() {
    return CacheFlusher(2 * LargestCacheBytes());
  }

  // Writes every cache line of the buffer.
  void Flush();
  int64_t bytes() const { return bytes_; }

 private:
  int64_t bytes_;
  std::unique_ptr<char[]> buffer_;
  unsigned char round_ = 0;
};

// As TimeRepeatedly (compiler/measure/timing.h), but each sample is one call
// after flusher.Flush(): warm-up calls first (at least one, for
// options.warmup_s), then samples until options.min_time_s has passed and
// there are options.min_samples, at most options.max_samples
// (options.min_sample_s is not used: a sample is always one call). Here
// min_time_s counts the flushes too: a microsecond kernel would otherwise
// need a million flushes of tens of MiB to add up to half a second.
// Errors: the first non-OK status fn returns; InvalidArgument for options
// out of range.
absl::StatusOr<TimingStats> TimeWithCacheFlush(
    const std::function<absl::Status()>& fn, const TimingOptions& options,
    CacheFlusher& flusher);

}  // namespace lathe::runner
