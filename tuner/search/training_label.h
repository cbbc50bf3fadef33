// The throughput the cost model learns from a measured record, and by which
// the tuner judges the model's accuracy on a batch.
//
// The fastest timed repeat, not the median: a measurement only ever runs
// slower than the program can when the machine takes its CPU away (another
// process on the pinned core, an interrupt), never faster, so the fastest
// repeat is the estimate of the program's own speed that contention moves
// least: a program measured while another process shared its core has a
// median far above its fastest repeat, and re-measurements of a program
// differ much more in median than in fastest repeat (bench/README.md, "Why
// the code is as it is"). (Measurements seconds apart can still differ in
// fastest repeat when one falls into a slow spell of the machine:
// measurement_rounds.h.) The database's best record still ranks by median.
// Tests: tests/tuner/search/training_label_test.cc.
#pragma once

#include <cstdint>

#include "proto/measure.pb.h"
#include "proto/record.pb.h"

namespace lathe::tuner {

// GFLOP/s of `record` for `flops` floating-point operations per run: by its
// fastest repeat (times_s), or by its median when it has no repeats; 0 when
// it did not measure OK (failures rank below every program that ran).
double TrainingThroughput(int64_t flops, const proto::Record& record);

// The same of a measurement not yet recorded (its rounds merged).
double TrainingThroughput(int64_t flops, const proto::MeasureResult& result);

}  // namespace lathe::tuner
