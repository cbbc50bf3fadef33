// What the daemon accepts from a runner as a measurement: every field of a
// reported MeasureResult checked before anything reaches a job (and so the
// database). A runner is trusted to measure, not to be well-formed: a
// result that fails a check is refused whole (InvalidArgument naming the
// field and the limit), and its candidate is queued again.
//
// The checks:
//   status          one of the known outcomes (not unset, not unknown);
//   times_s         each finite, within [kMinReportedTimeS,
//                   kMaxReportedTimeS]; at most kMaxReportedSamples; at
//                   least one when the status is MEASURE_OK;
//   structural_hash empty (the tuner then uses the hash of the program it
//                   asked for) or exactly kStructuralHashHexDigits
//                   lower-case hex digits;
//   build_ms, run_ms, check_ms  finite, in [0, kMaxReportedTimeS * 1000];
//   error           not checked: a compiler's message may be long; the
//                   daemon escapes and cuts it to kMaxReportedErrorBytes
//                   (base/untrusted_text.h) before it is logged or kept;
//   runner, device  ignored (the daemon sets them from the registration).
// Tests: tests/tuner/service/result_validation_test.cc.
#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "proto/measure.pb.h"

namespace lathe::service {

// A sample below a nanosecond is no measurement of a kernel.
inline constexpr double kMinReportedTimeS = 1e-9;
// Longer than any timeout a runner measures under.
inline constexpr double kMaxReportedTimeS = 3600;
// A request's max_repeats never asks for more (proto/measure.proto).
inline constexpr int kMaxReportedSamples = 100000;
inline constexpr int kStructuralHashHexDigits = 16;
inline constexpr size_t kMaxReportedErrorBytes = 4096;

absl::Status ValidateReportedResult(const proto::MeasureResult& result);

}  // namespace lathe::service
