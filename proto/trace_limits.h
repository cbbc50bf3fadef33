// The limits of what a trace may hold, checked before it is replayed.
//
// A trace comes from files, databases imported from anywhere and clients
// of the daemon. Replay does work in proportion to what the trace asks:
// a split into 100,000 factors built an index expression nested 100,000
// deep (a stack overflow in every visitor), 10,000 factors or 20,000
// chained splits took minutes. So every trace is held, before replay and
// before a database stores it, to the limits below, and each refusal names
// the limit and the value. The limits are far above what the search and
// the default schedules make (a few hundred instructions, splits into at
// most five factors, nests of a few dozen loops).
//
// CheckTraceLimits is what Trace::FromProto, ParseTraceText, ReplayTrace
// (compiler/schedule) and ValidateRecord (database/) call. The nest depth is
// a property of the program a replay builds, not of the trace alone: the
// split primitive refuses a split that would make a nest deeper than
// kMaxLoopNestDepth.
// Tests: tests/compiler/schedule/trace_limits_test.cc.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/untrusted_text.h"
#include "proto/trace.pb.h"

namespace lathe {

// Bytes of a trace file (JSON or text) or of a JSON trace given as text.
inline constexpr size_t kMaxTraceBytes = size_t{8} << 20;
inline constexpr int kMaxTraceInstructions = 4096;
// Loops above a statement, through every enclosing block.
inline constexpr int kMaxLoopNestDepth = 128;
// Inputs or outputs of one instruction (a reorder or fuse of a whole nest,
// get_loops of a block).
inline constexpr int kMaxInstructionOperands = kMaxLoopNestDepth + 1;
inline constexpr int kMaxInstructionAttrs = 16;
// Values of one list attribute (sample_categorical's candidates).
inline constexpr int kMaxAttrListLength = 256;
// Bytes of an instruction kind, an attribute name or a string attribute.
inline constexpr size_t kMaxTraceNameBytes = 256;
// Bytes of the workload a trace names (a custom workload's canonical form).
inline constexpr size_t kMaxTraceWorkloadBytes = size_t{64} << 10;
// Factors of one split, `n` of sample_perfect_tile and the values of its
// decision.
inline constexpr int kMaxSplitFactors = 16;
// A constant split factor, a perfect-tile decision value and their
// products: twice the largest loop extent a workload may have (2^31), the
// most a split may pad to.
inline constexpr int64_t kMaxSplitProduct = int64_t{1} << 32;

namespace trace_limits_internal {

inline absl::Status Over(const std::string& what, int64_t value,
                         const char* limit_name, int64_t limit) {
  return absl::InvalidArgumentError(absl::StrCat("trace: ", what, " is ", value,
                                                 ", more than ", limit_name,
                                                 " (", limit, ")"));
}

// Factors of at most kMaxSplitProduct whose product is at most
// kMaxSplitProduct. A factor below 1 is left to the primitive, which
// refuses it with its own message (it bounds no work).
template <typename Values>
absl::Status CheckFactors(const Values& values, const std::string& what) {
  int64_t product = 1;
  for (int64_t v : values) {
    if (v < 1) continue;
    if (v > kMaxSplitProduct) {
      return absl::InvalidArgumentError(absl::StrCat(
          "trace: ", what, " has factor ", v, ", more than kMaxSplitProduct (",
          kMaxSplitProduct, ")"));
    }
    product *= v;  // both at most 2^32 here: no overflow
    if (product > kMaxSplitProduct) {
      return absl::InvalidArgumentError(
          absl::StrCat("trace: ", what, " has factors whose product exceeds ",
                       "kMaxSplitProduct (", kMaxSplitProduct, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace trace_limits_internal

// InvalidArgument naming the limit, the value and the instruction when the
// trace exceeds one of the limits above.
inline absl::Status CheckTraceLimits(const proto::Trace& trace) {
  using trace_limits_internal::Over;
  if (trace.instructions_size() > kMaxTraceInstructions) {
    return Over("the number of instructions", trace.instructions_size(),
                "kMaxTraceInstructions", kMaxTraceInstructions);
  }
  if (trace.decisions_size() > trace.instructions_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("trace: ", trace.decisions_size(), " decisions for ",
                     trace.instructions_size(), " instructions"));
  }
  if (trace.workload().size() > kMaxTraceWorkloadBytes) {
    return Over("the workload's length", trace.workload().size(),
                "kMaxTraceWorkloadBytes", kMaxTraceWorkloadBytes);
  }
  for (int i = 0; i < trace.instructions_size(); ++i) {
    const proto::TraceInstruction& inst = trace.instructions(i);
    const std::string where = absl::StrCat("instruction ", i);
    if (inst.kind().size() > kMaxTraceNameBytes) {
      return Over(absl::StrCat(where, "'s kind length"), inst.kind().size(),
                  "kMaxTraceNameBytes", kMaxTraceNameBytes);
    }
    const std::string named =
        absl::StrCat(where, " (", EscapedPrefix(inst.kind()), ")");
    if (inst.kind() == "split") {
      if (inst.inputs_size() - 1 > kMaxSplitFactors) {
        return Over(absl::StrCat(named, "'s number of factors"),
                    inst.inputs_size() - 1, "kMaxSplitFactors",
                    kMaxSplitFactors);
      }
      std::vector<int64_t> constants;
      for (int k = 1; k < inst.inputs_size(); ++k) {
        if (inst.inputs(k).value_case() == proto::TraceInput::kIntValue) {
          constants.push_back(inst.inputs(k).int_value());
        }
      }
      if (absl::Status st =
              trace_limits_internal::CheckFactors(constants, named);
          !st.ok()) {
        return st;
      }
    }
    if (inst.inputs_size() > kMaxInstructionOperands) {
      return Over(absl::StrCat(named, "'s number of inputs"),
                  inst.inputs_size(), "kMaxInstructionOperands",
                  kMaxInstructionOperands);
    }
    if (inst.outputs_size() > kMaxInstructionOperands) {
      return Over(absl::StrCat(named, "'s number of outputs"),
                  inst.outputs_size(), "kMaxInstructionOperands",
                  kMaxInstructionOperands);
    }
    if (inst.attrs_size() > kMaxInstructionAttrs) {
      return Over(absl::StrCat(named, "'s number of attributes"),
                  inst.attrs_size(), "kMaxInstructionAttrs",
                  kMaxInstructionAttrs);
    }
    for (const proto::TraceAttr& attr : inst.attrs()) {
      if (attr.name().size() > kMaxTraceNameBytes ||
          attr.string_value().size() > kMaxTraceNameBytes) {
        return Over(absl::StrCat(named, "'s attribute length"),
                    std::max(attr.name().size(), attr.string_value().size()),
                    "kMaxTraceNameBytes", kMaxTraceNameBytes);
      }
      const int length =
          std::max(attr.ints().values_size(), attr.floats().values_size());
      if (length > kMaxAttrListLength) {
        return Over(absl::StrCat(named, "'s attribute ",
                                 EscapedPrefix(attr.name()), " length"),
                    length, "kMaxAttrListLength", kMaxAttrListLength);
      }
      if (inst.kind() == "sample_perfect_tile" && attr.name() == "n" &&
          (attr.int_value() < 1 || attr.int_value() > kMaxSplitFactors)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "trace: ", named, " has n = ", attr.int_value(),
            ", outside [1, kMaxSplitFactors (", kMaxSplitFactors, ")]"));
      }
    }
  }
  for (const proto::TraceDecision& d : trace.decisions()) {
    if (d.values_size() > kMaxSplitFactors) {
      return Over(absl::StrCat("the decision for instruction ", d.instruction(),
                               "'s number of values"),
                  d.values_size(), "kMaxSplitFactors", kMaxSplitFactors);
    }
    if (d.instruction() >= 0 && d.instruction() < trace.instructions_size() &&
        trace.instructions(d.instruction()).kind() == "sample_perfect_tile") {
      if (absl::Status st = trace_limits_internal::CheckFactors(
              d.values(),
              absl::StrCat("the decision for instruction ", d.instruction(),
                           " (sample_perfect_tile)"));
          !st.ok()) {
        return st;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace lathe
