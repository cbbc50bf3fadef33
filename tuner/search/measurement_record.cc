#include "tuner/search/measurement_record.h"

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "database/record_codec.h"

namespace lathe::tuner {

proto::Record MeasurementRecord(const Workload& workload,
                                const proto::TargetInfo& target,
                                const Trace& trace,
                                const std::string& structural_hash,
                                const proto::MeasureResult& result,
                                const Provenance& provenance) {
  proto::Record record;
  record.set_workload_key(workload.Key());
  record.set_workload(workload.CanonicalForm());
  *record.mutable_target() = target;
  if (!result.device().empty())
    record.mutable_target()->set_device(result.device());
  trace.ToProto(record.mutable_trace());
  record.set_structural_hash(result.structural_hash().empty()
                                 ? structural_hash
                                 : result.structural_hash());
  *record.mutable_times_s() = result.times_s();
  db::SummarizeTimes(record);
  record.set_status(result.status() == proto::MEASURE_STATUS_UNSPECIFIED
                        ? proto::MEASURE_RUN_ERROR
                        : result.status());
  record.set_error(result.error());
  record.set_runner(provenance.runner);
  record.set_lathe_version(provenance.lathe_version);
  record.set_measured_at_unix_ms(absl::ToUnixMillis(absl::Now()));
  record.set_job(provenance.job);
  return record;
}

}  // namespace lathe::tuner
