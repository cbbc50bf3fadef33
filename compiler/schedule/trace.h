// Traces: the replayable record of a schedule.
//
// A trace is the list of schedule instructions (kind, inputs, attributes,
// outputs) plus the decision of each sampling instruction. Random variables
// (blocks, loops, sampled integers) are numbered from 0 in order of creation;
// an instruction's inputs name earlier outputs by that number. Replaying a
// trace on the workload it was recorded on rebuilds the same program
// (replay.h); replaying it with other decisions gives another program of the
// same design space.
//
// Serialized as the protobuf message lathe.proto.Trace (proto/trace.proto),
// whose JSON form is the file format of `--trace FILE`. Format version 1.
// Tests: tests/compiler/schedule/trace_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"

namespace lathe {

namespace proto {
class Trace;
}

inline constexpr int kTraceFormatVersion = 1;

struct TraceInput {
  enum class Kind { kRV, kInt, kNone };
  Kind kind = Kind::kNone;
  int64_t value = 0;  // the RV number or the constant

  static TraceInput RV(int64_t id) { return {Kind::kRV, id}; }
  static TraceInput Int(int64_t v) { return {Kind::kInt, v}; }
  static TraceInput None() { return {Kind::kNone, 0}; }
  friend bool operator==(const TraceInput& a, const TraceInput& b) {
    return a.kind == b.kind && a.value == b.value;
  }
};

using AttrValue = std::variant<int64_t, double, std::string,
                               std::vector<int64_t>, std::vector<double>>;

struct Instruction {
  std::string kind;  // "split", "sample_perfect_tile", ...
  std::vector<TraceInput> inputs;
  std::vector<std::pair<std::string, AttrValue>> attrs;
  std::vector<int64_t> outputs;  // RV numbers created by the instruction

  // The attribute named `name`, or an error naming the instruction.
  absl::StatusOr<AttrValue> Attr(const std::string& name) const;
  absl::StatusOr<int64_t> IntAttr(const std::string& name) const;
  absl::StatusOr<std::string> StringAttr(const std::string& name) const;
  absl::StatusOr<std::vector<int64_t>> IntsAttr(const std::string& name) const;
  absl::StatusOr<std::vector<double>> FloatsAttr(const std::string& name) const;
};

struct Trace {
  std::vector<Instruction> instructions;
  // Decisions of sampling instructions, by instruction index.
  std::map<int64_t, std::vector<int64_t>> decisions;
  // The workload the trace was recorded on (informational).
  std::string workload;

  // One instruction per line, Python-like: `r3, r4 = split(r1, r2, None)`,
  // with sampling decisions as trailing comments. ParseTraceText
  // (trace_text.h) reads it back.
  std::string ToText() const;

  void ToProto(proto::Trace* out) const;
  // Errors: an unknown format version, an input naming an RV that is not yet
  // defined, a decision for an instruction that does not exist.
  static absl::StatusOr<Trace> FromProto(const proto::Trace& message);
  std::string ToJson() const;
  static absl::StatusOr<Trace> FromJson(const std::string& json);
  // Reads or writes the JSON form; errors name the file.
  static absl::StatusOr<Trace> Load(const std::string& path);
  absl::Status Save(const std::string& path) const;

  friend bool operator==(const Trace& a, const Trace& b);
};

// The limits of proto/trace_limits.h, on a trace built in code or parsed
// from text: what ReplayTrace checks before it replays.
absl::Status CheckTraceLimits(const Trace& trace);

}  // namespace lathe
