// A measurement as a database record: the one place that fills a
// lathe.proto.Record from a workload, a target, a trace and a runner's
// result, for the tuner and for the commands that record a single
// measurement (`lathe bench --db`, the default schedule of `lathe tune`).
// Tests: tests/tuner/search/tuner_test.cc (records of a run).
#pragma once

#include <string>

#include "compiler/schedule/trace.h"
#include "compiler/workload/workload.h"
#include "proto/measure.pb.h"
#include "proto/record.pb.h"

namespace lathe::tuner {

struct Provenance {
  std::string runner;
  std::string lathe_version;
  std::string job;
};

// `structural_hash` names the program when the result carries none (the
// build failed before there was a program). Median and spread come from the
// result's times (db::SummarizeTimes); an unset status is a run error.
proto::Record MeasurementRecord(const Workload& workload,
                                const proto::TargetInfo& target,
                                const Trace& trace,
                                const std::string& structural_hash,
                                const proto::MeasureResult& result,
                                const Provenance& provenance);

}  // namespace lathe::tuner
