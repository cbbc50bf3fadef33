// check_footprint: a point of a design space refused before the primitives
// that build it, when the tiles its sampled values size (the shared-memory
// tiles of a GPU block: a sum over inputs of products of halo'd spans,
// footprint.h) hold more elements than the bound. Like check_product it
// changes nothing in the program; a replay whose values pass the bound
// fails here instead of after every split, cache and the code generator.
// The footprint counts the tiles' elements, never more than the buffers
// the code generator allocates for them, so the check refuses no point
// that fits.
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/schedule/footprint.h"
#include "compiler/schedule/instruction_kind.h"

namespace lathe {

const InstructionKind& CheckFootprintInstruction() {
  // Inputs: the factors (sampled values or constants). Attributes: the
  // layout (footprint.h), the bound and what it bounds, for the message.
  static const auto* const kind = new InstructionKind{
      "check_footprint",
      {"layout", "at_most", "what"},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        std::vector<Factor> factors;
        for (size_t i = 0; i < c.inst.inputs.size(); ++i) {
          LATHE_ASSIGN_OR_RETURN(Factor f, c.FactorAt(i));
          factors.push_back(f);
        }
        LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> layout, c.IntsAttr(0));
        LATHE_ASSIGN_OR_RETURN(int64_t at_most, c.IntAttr(1));
        LATHE_ASSIGN_OR_RETURN(std::string what, c.StringAttr(2));
        return c.sch->CheckFootprint(factors, layout, at_most, what);
      }};
  return *kind;
}

absl::Status ConcreteSchedule::CheckFootprint(
    const std::vector<Factor>& factors, const std::vector<int64_t>& layout,
    int64_t at_most, const std::string& what) {
  if (at_most < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "check_footprint: a bound of ", at_most, " (", what, "): 1 at least"));
  }
  std::vector<int64_t> values;
  for (const Factor& f : factors) {
    if (std::holds_alternative<std::monostate>(f)) {
      return absl::InvalidArgumentError(
          "check_footprint: a factor is None; each is a value or a constant");
    }
    LATHE_ASSIGN_OR_RETURN(int64_t v, FactorValue(f));
    values.push_back(v);
  }
  absl::StatusOr<int64_t> elements = EvaluateFootprint(layout, values, at_most);
  if (!elements.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "check_footprint (", what, "): ", elements.status().message()));
  }
  if (*elements > at_most) {
    return absl::FailedPreconditionError(absl::StrCat(
        "check_footprint: tiles of more than ", at_most, " elements (", what,
        ") with factors ", absl::StrJoin(values, ", ")));
  }
  std::vector<TraceInput> inputs;
  for (const Factor& f : factors) inputs.push_back(InputOf(f));
  Record(CheckFootprintInstruction(), std::move(inputs),
         {AttrValue(layout), AttrValue(at_most), AttrValue(what)}, {});
  return absl::OkStatus();
}

}  // namespace lathe
