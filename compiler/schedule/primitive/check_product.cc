// check_product: a point of a design space refused before the primitives
// that build it, when sampled values that together size one resource (a
// GPU thread's register tile: its registers along each tiled loop) pass
// that resource's bound. The check changes nothing in the program; a replay
// whose values pass the bound fails here, at the cost of the samples
// before it, instead of after every split and cache of the point and its
// code generation.
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/schedule/instruction_kind.h"

namespace lathe {

const InstructionKind& CheckProductInstruction() {
  // Inputs: the factors (sampled values or constants). Attributes: the bound
  // and what it bounds, for the message.
  static const auto* const kind = new InstructionKind{
      "check_product",
      {"at_most", "what"},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        std::vector<Factor> factors;
        for (size_t i = 0; i < c.inst.inputs.size(); ++i) {
          LATHE_ASSIGN_OR_RETURN(Factor f, c.FactorAt(i));
          factors.push_back(f);
        }
        LATHE_ASSIGN_OR_RETURN(int64_t at_most, c.IntAttr(0));
        LATHE_ASSIGN_OR_RETURN(std::string what, c.StringAttr(1));
        return c.sch->CheckProduct(factors, at_most, what);
      }};
  return *kind;
}

absl::Status ConcreteSchedule::CheckProduct(const std::vector<Factor>& factors,
                                            int64_t at_most,
                                            const std::string& what) {
  if (factors.empty() || at_most < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "check_product: ", factors.size(), " factors and a bound of ", at_most,
        " (", what, "): one factor and a bound of 1 at least"));
  }
  std::vector<int64_t> values;
  int64_t product = 1;
  bool over = false;
  for (const Factor& f : factors) {
    if (std::holds_alternative<std::monostate>(f)) {
      return absl::InvalidArgumentError(
          "check_product: a factor is None; each is a value or a constant");
    }
    LATHE_ASSIGN_OR_RETURN(int64_t v, FactorValue(f));
    if (v < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("check_product: factor ", v, " is below 1"));
    }
    values.push_back(v);
    // Saturating: the product of many factors is only compared.
    over = over || v > at_most / product;
    product = over ? at_most + 1 : product * v;
  }
  if (over) {
    return absl::FailedPreconditionError(
        absl::StrCat("check_product: ", absl::StrJoin(values, " x "),
                     " is more than ", at_most, " (", what, ")"));
  }
  std::vector<TraceInput> inputs;
  for (const Factor& f : factors) inputs.push_back(InputOf(f));
  Record(CheckProductInstruction(), std::move(inputs),
         {AttrValue(at_most), AttrValue(what)}, {});
  return absl::OkStatus();
}

}  // namespace lathe
