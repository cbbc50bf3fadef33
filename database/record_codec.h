// How a record is checked and keyed before it is stored.
//
// The fingerprint identifies a record by its whole content (everything but
// the row id): two records with equal fingerprints are exact duplicates, and
// merge and import keep one. It is a 128-bit FNV-1a over length-prefixed
// fields, stable across machines (the trace through its deterministic
// serialization: protobuf writes known fields in field-number order, and
// traces have no maps).
// Tests: tests/database/record_codec_test.cc.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "proto/record.pb.h"

namespace lathe::db {

// 32 lower-case hex digits.
std::string Fingerprint(const proto::Record& record);
// The same, given SerializeTrace(record.trace()) (a commit has it at hand).
std::string Fingerprint(const proto::Record& record,
                        const std::string& trace_bytes);

// The trace's deterministic serialization: what Fingerprint hashes and the
// database stores (for a trace, which has no maps, SerializeAsString's bytes).
std::string SerializeTrace(const proto::Trace& trace);

// InvalidArgument naming the field at fault when a record cannot be stored:
// empty workload key or form, empty target, empty structural hash, a trace
// outside the limits of proto/trace_limits.h, no status, a negative spread or
// time of measurement, or an OK record without times or with a median or spread
// that is not that of its times (SummarizeTimes).
absl::Status ValidateRecord(const proto::Record& record);

}  // namespace lathe::db

namespace lathe::db {

// Sets median_s and spread from times_s: the median (the mean of the two
// middle times for an even count) and (p90 - p10) / median, with pN the
// time at rank round(N% of (count - 1)). Check() holds stored records to it.
void SummarizeTimes(proto::Record& record);

}  // namespace lathe::db
