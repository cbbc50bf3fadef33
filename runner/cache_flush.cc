#include "runner/cache_flush.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace lathe::runner {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kFallbackCacheBytes = int64_t{32} << 20;
constexpr int64_t kMinFlushBytes = int64_t{1} << 20;
constexpr int64_t kCacheLine = 64;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "32768K" -> 33554432; 0 when unreadable.
int64_t ParseCacheSize(std::string text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  int64_t scale = 1;
  if (absl::ConsumeSuffix(&s, "K"))
    scale = int64_t{1} << 10;
  else if (absl::ConsumeSuffix(&s, "M"))
    scale = int64_t{1} << 20;
  int64_t value = 0;
  if (!absl::SimpleAtoi(s, &value) || value <= 0) return 0;
  return value * scale;
}

}  // namespace

int64_t LargestCacheBytes() {
  int64_t largest = 0;
  for (int index = 0; index < 16; ++index) {
    std::string dir =
        absl::StrCat("/sys/devices/system/cpu/cpu0/cache/index", index, "/");
    std::ifstream type_file(dir + "type");
    std::ifstream size_file(dir + "size");
    if (!type_file || !size_file) continue;
    std::string type, size;
    std::getline(type_file, type);
    std::getline(size_file, size);
    if (type == "Instruction") continue;
    largest = std::max(largest, ParseCacheSize(size));
  }
  return largest > 0 ? largest : kFallbackCacheBytes;
}

CacheFlusher::CacheFlusher(int64_t bytes)
    : bytes_(std::max(bytes, kMinFlushBytes)),
      buffer_(new char[static_cast<size_t>(bytes_)]) {
  std::memset(buffer_.get(), 0, static_cast<size_t>(bytes_));
}

void CacheFlusher::Flush() {
  // A different value each time, through a volatile pointer: the stores must
  // happen (and dirty the lines) however clever the optimizer is.
  ++round_;
  volatile char* p = buffer_.get();
  for (int64_t i = 0; i < bytes_; i += kCacheLine)
    p[i] = static_cast<char>(round_);
}

absl::StatusOr<TimingStats> TimeWithCacheFlush(
    const std::function<absl::Status()>& fn, const TimingOptions& options,
    CacheFlusher& flusher) {
  if (options.min_time_s < 0 || options.warmup_s < 0 ||
      options.min_samples < 1 || options.max_samples < options.min_samples) {
    return absl::InvalidArgumentError("timing: options out of range");
  }
  // 1. Warm-up, uncounted: the thread pool's start, page faults of the
  //    outputs, the CPU's clock.
  Clock::time_point start = Clock::now();
  do {
    if (absl::Status st = fn(); !st.ok()) return st;
  } while (SecondsSince(start) < options.warmup_s);
  // 2. One call per sample, each after a flush.
  std::vector<double> samples;
  Clock::time_point sampling_start = Clock::now();
  while (static_cast<int>(samples.size()) < options.max_samples &&
         (SecondsSince(sampling_start) < options.min_time_s ||
          static_cast<int>(samples.size()) < options.min_samples)) {
    flusher.Flush();
    Clock::time_point t0 = Clock::now();
    if (absl::Status st = fn(); !st.ok()) return st;
    samples.push_back(SecondsSince(t0));
  }
  TimingStats stats = SummarizeSamples(std::move(samples));
  stats.calls_per_sample = 1;
  return stats;
}

}  // namespace lathe::runner
