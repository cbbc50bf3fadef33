#include "compiler/schedule/trace_text.h"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/untrusted_text.h"
#include "proto/trace.pb.h"
#include "proto/trace_limits.h"

namespace lathe {
namespace {

bool IsNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool IsNumberChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ||
         c == '+';
}

// One number as written: an integer, or a double when it has a point or an
// exponent (or is inf or nan).
using Number = std::variant<int64_t, double>;

// A cursor over one line of the text, with errors that say where.
class LineParser {
 public:
  LineParser(absl::string_view line, int line_number)
      : line_(line), line_number_(line_number) {}

  absl::Status Error(const std::string& what) const {
    return ErrorAt(pos_, what);
  }
  absl::Status ErrorAt(size_t pos, const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("line ", line_number_, ", column ", pos + 1, ": ", what));
  }
  // "expected X, found Y" at the cursor.
  absl::Status Expected(const std::string& what) const {
    return Error(absl::StrCat("expected ", what, ", found ", Found()));
  }

  // What is at the cursor, quoted: a whole name or number, or one character.
  std::string Found() const {
    if (pos_ >= line_.size()) return "the end of the line";
    if (line_[pos_] == '#') return "a comment";
    size_t end = pos_ + 1;
    if (IsNameStart(line_[pos_])) {
      while (end < line_.size() && IsNameChar(line_[end])) ++end;
    } else if (IsNumberChar(line_[pos_])) {
      while (end < line_.size() && IsNumberChar(line_[end])) ++end;
    }
    return absl::StrCat("'", EscapedPrefix(line_.substr(pos_, end - pos_)),
                        "'");
  }

  void SkipSpaces() {
    while (pos_ < line_.size() &&
           (line_[pos_] == ' ' || line_[pos_] == '\t' || line_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Peek(char c) const { return pos_ < line_.size() && line_[pos_] == c; }
  bool Accept(char c) {
    SkipSpaces();
    if (!Peek(c)) return false;
    ++pos_;
    SkipSpaces();
    return true;
  }
  absl::Status Expect(char c, const std::string& what) {
    if (Accept(c)) return absl::OkStatus();
    return Expected(what);
  }
  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }
  absl::string_view Rest() const { return line_.substr(pos_); }

  // A name: [A-Za-z_][A-Za-z0-9_]*; empty when there is none.
  absl::string_view Name() {
    if (pos_ >= line_.size() || !IsNameStart(line_[pos_])) return {};
    size_t start = pos_;
    while (pos_ < line_.size() && IsNameChar(line_[pos_])) ++pos_;
    return line_.substr(start, pos_ - start);
  }

  // `rN` when the cursor is at one (a name r followed by digits only).
  std::optional<int64_t> RV() {
    size_t start = pos_;
    absl::string_view name = Name();
    if (name.size() >= 2 && name[0] == 'r' &&
        name.find_first_not_of("0123456789", 1) == absl::string_view::npos) {
      int64_t id = 0;
      auto [end, ec] =
          std::from_chars(name.data() + 1, name.data() + name.size(), id);
      if (ec == std::errc() && end == name.data() + name.size()) return id;
    }
    pos_ = start;
    return std::nullopt;
  }

  absl::StatusOr<Number> ParseNumber() {
    size_t start = pos_;
    size_t end = pos_;
    while (end < line_.size() && IsNumberChar(line_[end])) {
      // A sign only leads the number or its exponent.
      if ((line_[end] == '-' || line_[end] == '+') && end > start &&
          line_[end - 1] != 'e' && line_[end - 1] != 'E') {
        break;
      }
      ++end;
    }
    absl::string_view text = line_.substr(start, end - start);
    if (text.empty()) return Expected("a number");
    const bool is_double =
        text.find_first_of(".eEin") != absl::string_view::npos;
    const char* first = text.data();
    const char* last = text.data() + text.size();
    if (is_double) {
      double value = 0;
      auto [ptr, ec] = std::from_chars(first, last, value);
      if (ec != std::errc() || ptr != last) {
        return ErrorAt(start,
                       absl::StrCat("expected a number, found '", text, "'"));
      }
      pos_ = end;
      return Number(value);
    }
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec == std::errc::result_out_of_range) {
      return ErrorAt(start, absl::StrCat("integer '", text,
                                         "' is out of the 64-bit range"));
    }
    if (ec != std::errc() || ptr != last) {
      return ErrorAt(start,
                     absl::StrCat("expected a number, found '", text, "'"));
    }
    pos_ = end;
    return Number(value);
  }

  bool AtNumber() const {
    if (pos_ >= line_.size()) return false;
    char c = line_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.') {
      return true;
    }
    absl::string_view rest = line_.substr(pos_);
    for (absl::string_view word : {"inf", "nan"}) {
      if (absl::StartsWith(rest, word) &&
          (rest.size() == word.size() || !IsNameChar(rest[word.size()]))) {
        return true;
      }
    }
    return false;
  }

  // `[n, n, ...]` of numbers: integers unless one of them is a double.
  absl::StatusOr<AttrValue> ParseList() {
    std::vector<Number> numbers;
    bool any_double = false;
    if (!Accept(']')) {
      while (true) {
        if (!AtNumber()) return Expected("a number or ']'");
        absl::StatusOr<Number> n = ParseNumber();
        if (!n.ok()) return n.status();
        any_double = any_double || std::holds_alternative<double>(*n);
        numbers.push_back(*n);
        if (Accept(']')) break;
        if (!Accept(',')) return Expected("',' or ']' in the list");
      }
    }
    if (any_double) {
      std::vector<double> values;
      for (const Number& n : numbers) {
        values.push_back(std::holds_alternative<double>(n)
                             ? std::get<double>(n)
                             : static_cast<double>(std::get<int64_t>(n)));
      }
      return AttrValue(std::move(values));
    }
    std::vector<int64_t> values;
    for (const Number& n : numbers) values.push_back(std::get<int64_t>(n));
    return AttrValue(std::move(values));
  }

  // A double-quoted string with C escapes; the cursor is at its quote.
  absl::StatusOr<std::string> ParseString() {
    size_t start = pos_;
    size_t end = pos_ + 1;
    while (end < line_.size() && line_[end] != '"') {
      end += line_[end] == '\\' ? 2 : 1;
    }
    if (end >= line_.size()) {
      return ErrorAt(start, "string is not closed by '\"'");
    }
    std::string value;
    std::string error;
    if (!absl::CUnescape(line_.substr(start + 1, end - start - 1), &value,
                         &error)) {
      return ErrorAt(start, absl::StrCat("bad escape in string: ", error));
    }
    pos_ = end + 1;
    return value;
  }

  absl::StatusOr<AttrValue> ParseAttrValue() {
    SkipSpaces();
    if (Peek('"')) {
      absl::StatusOr<std::string> s = ParseString();
      if (!s.ok()) return s.status();
      return AttrValue(*std::move(s));
    }
    if (Accept('[')) return ParseList();
    if (AtNumber()) {
      absl::StatusOr<Number> n = ParseNumber();
      if (!n.ok()) return n.status();
      if (const auto* i = std::get_if<int64_t>(&*n)) return AttrValue(*i);
      return AttrValue(std::get<double>(*n));
    }
    return Expected("a value (a number, a \"string\" or a [list])");
  }

 private:
  absl::string_view line_;
  int line_number_;
  size_t pos_ = 0;
};

// The instruction of one line, with where its parts are for later checks.
struct ParsedLine {
  Instruction instruction;
  std::vector<size_t> input_columns;   // of each input
  std::vector<size_t> output_columns;  // of each output
  std::optional<std::vector<int64_t>> decision;
  size_t kind_column = 0;
};

// Parses `# decision: [...]` at the cursor (a comment); other comments are
// ignored.
absl::Status ParseComment(LineParser& p, ParsedLine* out) {
  if (!p.Accept('#')) return p.Expected("the end of the line");
  size_t start = p.pos();
  absl::string_view word = p.Name();
  if (word != "decision") {
    p.set_pos(start);
    return absl::OkStatus();  // a plain comment
  }
  if (!p.Accept(':')) return p.Expected("':' after 'decision'");
  if (!p.Accept('[')) return p.Expected("'[' to start the decision");
  absl::StatusOr<AttrValue> list = p.ParseList();
  if (!list.ok()) return list.status();
  const auto* ints = std::get_if<std::vector<int64_t>>(&*list);
  if (ints == nullptr) {
    return p.ErrorAt(start, "a decision is a list of integers");
  }
  p.SkipSpaces();
  if (!p.Rest().empty()) {
    return p.Expected("the end of the line after the decision");
  }
  out->decision = *ints;
  return absl::OkStatus();
}

// Parses one non-empty line: [outs =] kind(args) [# comment].
absl::Status ParseInstruction(LineParser& p, ParsedLine* out) {
  Instruction& inst = out->instruction;
  // Outputs, when the line starts with `rN` followed by ',' or '='.
  size_t start = p.pos();
  if (std::optional<int64_t> first = p.RV(); first.has_value()) {
    p.SkipSpaces();
    if (p.Peek(',') || p.Peek('=')) {
      inst.outputs.push_back(*first);
      out->output_columns.push_back(start);
      while (p.Accept(',')) {
        size_t column = p.pos();
        std::optional<int64_t> rv = p.RV();
        if (!rv.has_value()) return p.Expected("an output rN");
        inst.outputs.push_back(*rv);
        out->output_columns.push_back(column);
      }
      if (!p.Accept('=')) return p.Expected("',' or '=' after the outputs");
    } else {
      p.set_pos(start);
    }
  }
  out->kind_column = p.pos();
  absl::string_view kind = p.Name();
  if (kind.empty()) return p.Expected("an instruction kind");
  inst.kind = std::string(kind);
  if (!p.Accept('(')) {
    return p.Expected(absl::StrCat("'(' after ", inst.kind));
  }
  bool in_attrs = false;
  std::set<std::string> attr_names;
  if (!p.Accept(')')) {
    while (true) {
      size_t column = p.pos();
      absl::string_view name = p.Name();
      p.SkipSpaces();
      if (!name.empty() && p.Peek('=')) {
        p.Accept('=');
        std::string key(name);
        if (!attr_names.insert(key).second) {
          return p.ErrorAt(column,
                           absl::StrCat("attribute ", key, " given twice"));
        }
        absl::StatusOr<AttrValue> value = p.ParseAttrValue();
        if (!value.ok()) return value.status();
        inst.attrs.emplace_back(std::move(key), *std::move(value));
        in_attrs = true;
      } else {
        p.set_pos(column);
        if (in_attrs) {
          return p.Expected(
              absl::StrCat("an attribute name=value (inputs come before "
                           "attributes)"));
        }
        if (name == "None") {
          p.Name();
          inst.inputs.push_back(TraceInput::None());
        } else if (std::optional<int64_t> rv = p.RV(); rv.has_value()) {
          inst.inputs.push_back(TraceInput::RV(*rv));
        } else if (p.AtNumber()) {
          absl::StatusOr<Number> n = p.ParseNumber();
          if (!n.ok()) return n.status();
          if (!std::holds_alternative<int64_t>(*n)) {
            return p.ErrorAt(column, "an input number must be an integer");
          }
          inst.inputs.push_back(TraceInput::Int(std::get<int64_t>(*n)));
        } else {
          return p.Expected("an input (rN, an integer or None)");
        }
        out->input_columns.push_back(column);
      }
      if (p.Accept(')')) break;
      if (!p.Accept(',')) return p.Expected("',' or ')'");
    }
  }
  p.SkipSpaces();
  if (!p.Rest().empty()) return ParseComment(p, out);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Trace> ParseTraceText(absl::string_view text) {
  if (text.size() > kMaxTraceBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("trace: ", text.size(), " bytes of text, more than ",
                     "kMaxTraceBytes (", kMaxTraceBytes, ")"));
  }
  Trace trace;
  std::set<int64_t> defined;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    LineParser p(line, line_number);
    p.SkipSpaces();
    if (p.Rest().empty() || p.Peek('#')) continue;  // blank or a comment
    ParsedLine parsed;
    if (absl::Status status = ParseInstruction(p, &parsed); !status.ok()) {
      return status;
    }
    const Instruction& inst = parsed.instruction;
    for (size_t i = 0; i < inst.inputs.size(); ++i) {
      const TraceInput& in = inst.inputs[i];
      if (in.kind == TraceInput::Kind::kRV && !defined.count(in.value)) {
        return p.ErrorAt(parsed.input_columns[i],
                         absl::StrCat(inst.kind, " uses r", in.value,
                                      " before it is defined"));
      }
    }
    for (size_t i = 0; i < inst.outputs.size(); ++i) {
      if (!defined.insert(inst.outputs[i]).second) {
        return p.ErrorAt(
            parsed.output_columns[i],
            absl::StrCat(inst.kind, " redefines r", inst.outputs[i]));
      }
    }
    if (parsed.decision.has_value()) {
      if (!absl::StartsWith(inst.kind, "sample_")) {
        return p.ErrorAt(parsed.kind_column,
                         absl::StrCat("a decision for ", inst.kind,
                                      ", which samples nothing"));
      }
      trace.decisions[static_cast<int64_t>(trace.instructions.size())] =
          *parsed.decision;
    }
    trace.instructions.push_back(std::move(parsed.instruction));
    if (trace.instructions.size() > kMaxTraceInstructions) {
      return p.Error(absl::StrCat("more than kMaxTraceInstructions (",
                                  kMaxTraceInstructions, ") instructions"));
    }
  }
  if (absl::Status st = CheckTraceLimits(trace); !st.ok()) return st;
  return trace;
}

}  // namespace lathe
