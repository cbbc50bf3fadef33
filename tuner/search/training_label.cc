#include "tuner/search/training_label.h"

#include <algorithm>

namespace lathe::tuner {

double TrainingThroughput(int64_t flops, const proto::Record& record) {
  if (record.status() != proto::MEASURE_OK) return 0;
  double seconds = record.median_s();
  for (double t : record.times_s()) {
    // A repeat of 0 s (or a negative one) is no measurement of speed.
    if (t > 0) seconds = seconds > 0 ? std::min(seconds, t) : t;
  }
  return seconds > 0 ? static_cast<double>(flops) / seconds * 1e-9 : 0;
}

double TrainingThroughput(int64_t flops, const proto::MeasureResult& result) {
  proto::Record record;
  record.set_status(result.status());
  *record.mutable_times_s() = result.times_s();
  return TrainingThroughput(flops, record);
}

}  // namespace lathe::tuner
