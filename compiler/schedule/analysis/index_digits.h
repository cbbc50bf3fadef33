// Digits of a variable in an index expression: the form the data-parallel
// analysis (data_parallel.h) looks for in each index.
//
// An index is decomposed, for one variable v, as c * D(x) + r: x mentions v
// (x is v, or a sum such as the f_0 * 8 + f_1 of a fused loop split again),
// D(x) is a digit of x (x, x // a, x % b or (x // a) % b) and r does not
// mention v. When two accesses have the same c and digit of the same x and
// their rests differ by less than |c|, equal indices force equal digits, and
// digits that chain from the lowest (a = 1) up to x's range, or up to the
// range of x - x' once the parts of x both instances share cancel (the step
// o of (o * 14 + f // 16) % 16, the same for every f: f // 16 spans 14
// values), force equal x.
// Tests: tests/compiler/schedule/analysis/index_digits_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/arith/int_bounds.h"
#include "compiler/ir/expr.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {

// (v // a) % b; b == 0 means no modulus.
struct Digit {
  int64_t a = 1;
  int64_t b = 0;
  bool operator==(const Digit& o) const { return a == o.a && b == o.b; }
};

// A digit of some expression `base` that mentions the variable: base itself
// (a variable), base // a, base % b, (base // a) % b or (base % m) // a with a
// dividing m. `base` is the variable, or a sum of several (a fused loop split
// again: (f_0 * 8 + f_1) // 10). A base y % m whose modulus the digit does
// not reach is read as y: ((y % 32) // 4) % 4 is the digit (4, 4) of y.
bool MatchDigit(const Expr& atom, Expr* base, Digit* digit);

enum class DigitForm { kAbsent, kDigit, kUnknown };

struct Decomposed {
  DigitForm form = DigitForm::kUnknown;
  int64_t coef = 0;
  Expr base;  // the expression the digit is taken of; mentions var
  Digit digit;
  Expr rest;  // the index without the digit term; free of var
};

// Writes e as coef * digit(base) + rest, where var occurs only in base:
// kAbsent when var does not occur in e (or its terms cancel), kUnknown when
// e is not of that form (var in two terms, in an atom that is no digit) or
// its expansion overflows int64.
Decomposed Decompose(const Expr& e, const Expr& var);

// Whether knowing (x // a) % b == (x' // a) % b for every fact determines x,
// for x and x' in an interval of `span` values.
bool DigitsDetermine(const std::vector<Digit>& facts, int64_t span);

// `digit` of `from` as a digit of `to`, when the two are one value for
// every value of the variables in `ranges`: to // q simplifies to from, or
// to a sum that differs from it by a multiple of a * b (b > 0), for q = 1
// or a divisor in one of from's atoms; the digit is then (q * a, b) of to.
// nullopt when neither holds (or a product overflows).
std::optional<Digit> DigitOfOtherBase(const Expr& from, const Digit& digit,
                                      const Expr& to, const VarRanges& ranges);

// The digits proven equal between two instances, equation by equation, until
// they determine a base (which is then equal in both instances).
class DigitFacts {
 public:
  // One equation coef * D(base) + rest == coef * D(base') + rest', where `da`
  // is a's side decomposed, base_b is b's base (of the same digit and
  // coefficient), and rest' - rest lies in `diff`: when |diff| < |coef| the
  // digits are equal. Returns (base, base') the first time the digits of a
  // base (ExprEqual) determine it: over its range under `ranges`, or,
  // only when that does not settle it, over the range of base' - base,
  // base' being base_b with `rename` applied (b's instance, its varying
  // variables renamed; a base_b renamed already is left as it is), so that
  // the parts of a base both instances share cancel ((o * 14 + f // 16) %
  // 16, o the same in both: f // 16 differs by less than 14).
  std::optional<std::pair<Expr, Expr>> Add(const Decomposed& da,
                                           const Expr& base_b,
                                           const VarMap& rename,
                                           const Interval& diff,
                                           const VarRanges& ranges);

 private:
  struct Entry {
    Expr base_a, base_b;
    std::vector<Digit> facts;
    bool settled = false;
  };
  bool Settles(Entry& entry, const VarMap& rename, const VarRanges& ranges);
  std::vector<Entry> entries_;
};

}  // namespace lathe
