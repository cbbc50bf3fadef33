#include "database/record_codec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "database/fnv128.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "proto/trace_limits.h"

namespace lathe::db {

std::string SerializeTrace(const proto::Trace& trace) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  trace.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

std::string Fingerprint(const proto::Record& record) {
  return Fingerprint(record, SerializeTrace(record.trace()));
}

std::string Fingerprint(const proto::Record& record,
                        const std::string& trace_bytes) {
  Fnv128 hash;
  hash.String(record.workload_key());
  hash.String(record.workload());
  hash.String(record.target().canonical());
  hash.String(trace_bytes);
  hash.String(record.structural_hash());
  hash.Int(record.times_s_size());
  for (double t : record.times_s()) hash.Double(t);
  hash.Double(record.median_s());
  hash.Double(record.spread());
  hash.Int(record.status());
  hash.String(record.error());
  hash.String(record.runner());
  hash.String(record.lathe_version());
  hash.Int(record.measured_at_unix_ms());
  hash.String(record.job());
  return hash.Hex();
}

absl::Status ValidateRecord(const proto::Record& record) {
  auto invalid = [](const std::string& what) {
    return absl::InvalidArgumentError(what);
  };
  if (record.workload_key().empty()) return invalid("workload_key is empty");
  if (record.workload().empty())
    return invalid("workload (the canonical form) is empty");
  if (record.target().canonical().empty())
    return invalid("target.canonical is empty");
  if (record.target().kind().empty()) return invalid("target.kind is empty");
  if (record.structural_hash().empty())
    return invalid("structural_hash is empty");
  if (absl::Status st = CheckTraceLimits(record.trace()); !st.ok()) return st;
  if (record.status() == proto::MEASURE_STATUS_UNSPECIFIED ||
      !proto::MeasureStatus_IsValid(record.status())) {
    return invalid(absl::StrCat("status ", record.status(),
                                " is not a measurement status"));
  }
  if (!std::isfinite(record.spread()) || record.spread() < 0) {
    return invalid(
        absl::StrCat("spread = ", record.spread(), " is not a spread (>= 0)"));
  }
  if (record.measured_at_unix_ms() < 0) {
    return invalid(
        absl::StrCat("measured_at_unix_ms = ", record.measured_at_unix_ms(),
                     " is before 1970"));
  }
  for (int i = 0; i < record.times_s_size(); ++i) {
    const double t = record.times_s(i);
    if (!std::isfinite(t) || t <= 0) {
      return invalid(
          absl::StrCat("times_s[", i, "] = ", t, " is not a positive time"));
    }
  }
  if (record.status() == proto::MEASURE_OK) {
    if (record.times_s_size() == 0)
      return invalid("an OK record has no times_s");
    if (!std::isfinite(record.median_s()) || record.median_s() <= 0) {
      return invalid(absl::StrCat("median_s = ", record.median_s(),
                                  " is not a positive time"));
    }
    // Check() holds stored records to this; a commit must not store what
    // Check() then reports as damage.
    proto::Record summary;
    *summary.mutable_times_s() = record.times_s();
    SummarizeTimes(summary);
    if (std::abs(summary.median_s() - record.median_s()) >
        1e-9 * summary.median_s()) {
      return invalid(absl::StrCat("median_s = ", record.median_s(),
                                  " is not the median of times_s (",
                                  summary.median_s(), ")"));
    }
    if (std::abs(summary.spread() - record.spread()) >
        1e-9 * (1 + summary.spread())) {
      return invalid(absl::StrCat("spread = ", record.spread(),
                                  " is not the spread of times_s (",
                                  summary.spread(), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace lathe::db

namespace lathe::db {

void SummarizeTimes(proto::Record& record) {
  if (record.times_s().empty()) {
    record.set_median_s(0);
    record.set_spread(0);
    return;
  }
  // Copied element by element: GCC 12 warns falsely about the range
  // constructor from a RepeatedField (-Wfree-nonheap-object).
  std::vector<double> times;
  times.reserve(static_cast<size_t>(record.times_s_size()));
  for (double t : record.times_s()) times.push_back(t);
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  const double median =
      n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  auto at = [&](double fraction) {
    return times[static_cast<size_t>(
        std::lround(fraction * static_cast<double>(n - 1)))];
  };
  record.set_median_s(median);
  record.set_spread(median > 0 ? (at(0.9) - at(0.1)) / median : 0);
}

}  // namespace lathe::db
