#include "compiler/workload/flatten_dims.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace lathe {
namespace {

// Step 1: reduction variables of extent 1 used by one statement only.
void DropUnitReductions(ParsedDefinition& parsed,
                        std::map<std::string, int64_t>& dims) {
  // Statements each variable appears in.
  std::map<std::string, std::set<size_t>> used_in;
  for (size_t s = 0; s < parsed.statements.size(); ++s) {
    ParsedStatement& st = parsed.statements[s];
    for (const std::string& v : st.output_indices) used_in[v].insert(s);
    std::vector<ParsedExpr*> accesses;
    CollectAccesses(st.value, accesses);
    for (ParsedExpr* a : accesses) {
      for (const AffineIndex& index : a->indices) {
        for (const auto& [v, coef] : index.coefs) used_in[v].insert(s);
      }
    }
  }
  for (size_t s = 0; s < parsed.statements.size(); ++s) {
    ParsedStatement& st = parsed.statements[s];
    if (st.assign == AssignKind::kAssign) continue;
    const std::set<std::string> lhs(st.output_indices.begin(),
                                    st.output_indices.end());
    std::vector<ParsedExpr*> accesses;
    CollectAccesses(st.value, accesses);
    // Reduction variables in order of first appearance.
    std::vector<std::string> reductions;
    for (ParsedExpr* a : accesses) {
      for (const AffineIndex& index : a->indices) {
        for (const auto& [v, coef] : index.coefs) {
          if (!lhs.count(v) && std::find(reductions.begin(), reductions.end(),
                                         v) == reductions.end()) {
            reductions.push_back(v);
          }
        }
      }
    }
    std::set<std::string> drop;
    for (const std::string& v : reductions) {
      if (dims.at(v) == 1 && used_in[v].size() == 1) drop.insert(v);
    }
    if (drop.size() == reductions.size() && !drop.empty()) {
      drop.erase(reductions.front());
    }
    if (drop.empty()) continue;
    for (ParsedExpr* a : accesses) {
      for (AffineIndex& index : a->indices) {
        for (const std::string& v : drop) index.coefs.erase(v);
      }
    }
    for (const std::string& v : drop) dims.erase(v);
  }
}

// One tensor access seen by step 2: its tensor, and per dimension the plain
// variable there ("" if none) and the variables its index mentions.
struct AccessView {
  std::string tensor;
  std::vector<std::string> plain;
  std::vector<std::vector<std::string>> mentions;
  std::vector<int64_t> shape;
};

using VarPair = std::pair<std::string, std::string>;
using Position = std::pair<std::string, size_t>;  // tensor, dimension

std::vector<AccessView> Accesses(const CustomDefinition& def) {
  std::vector<AccessView> views;
  for (const ParsedStatement& st : def.parsed.statements) {
    AccessView lhs;
    lhs.tensor = st.output;
    for (const std::string& v : st.output_indices) {
      lhs.plain.push_back(v);
      lhs.mentions.push_back({v});
      lhs.shape.push_back(def.dims.at(v));
    }
    views.push_back(std::move(lhs));
    std::vector<const ParsedExpr*> accesses;
    CollectAccesses(st.value, accesses);
    for (const ParsedExpr* a : accesses) {
      AccessView view;
      view.tensor = a->name;
      view.shape = def.FindTensor(a->name)->shape;
      for (const AffineIndex& index : a->indices) {
        view.plain.push_back(PlainVariable(index));
        std::vector<std::string> vars;
        for (const auto& [v, coef] : index.coefs) vars.push_back(v);
        view.mentions.push_back(std::move(vars));
      }
      views.push_back(std::move(view));
    }
  }
  return views;
}

// The pairs that may merge, with the positions each is found at; empty when
// none may.
std::map<VarPair, std::set<Position>> MergeablePairs(
    const CustomDefinition& def, const std::vector<AccessView>& views) {
  std::map<std::string, int> mentions;
  std::map<VarPair, int> found;
  std::map<VarPair, std::set<Position>> positions;
  for (const AccessView& view : views) {
    for (const std::vector<std::string>& vars : view.mentions) {
      for (const std::string& v : vars) ++mentions[v];
    }
    for (size_t d = 0; d + 1 < view.plain.size(); ++d) {
      const std::string& a = view.plain[d];
      const std::string& b = view.plain[d + 1];
      if (a.empty() || b.empty() || a == b) continue;
      if (view.shape[d] != def.dims.at(a) ||
          view.shape[d + 1] != def.dims.at(b)) {
        continue;
      }
      ++found[{a, b}];
      positions[{a, b}].insert({view.tensor, d});
    }
  }
  // Every index that mentions a or b is that pair.
  std::map<VarPair, std::set<Position>> pairs;
  for (const auto& [pair, count] : found) {
    if (count == mentions[pair.first] && count == mentions[pair.second]) {
      pairs[pair] = positions[pair];
    }
  }
  // Every access of a tensor merges at a position or none does: drop pairs
  // whose positions some access of the tensor has another index pair at,
  // until none is dropped.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = pairs.begin(); it != pairs.end();) {
      bool consistent = true;
      for (const Position& p : it->second) {
        for (const AccessView& view : views) {
          if (view.tensor != p.first) continue;
          const VarPair at = {view.plain[p.second], view.plain[p.second + 1]};
          auto other = pairs.find(at);
          if (other == pairs.end() || !other->second.count(p)) {
            consistent = false;
          }
        }
      }
      if (consistent) {
        ++it;
      } else {
        it = pairs.erase(it);
        changed = true;
      }
    }
  }
  return pairs;
}

// Merges the pairs at the positions given (tensor dimension d with d+1).
void ApplyMerge(const std::set<VarPair>& pairs,
                const std::set<Position>& positions, CustomDefinition& def) {
  ParsedDefinition& parsed = def.parsed;
  for (InputDeclaration& input : parsed.inputs) {
    // A declaration's dimensions from the last, so earlier indices hold.
    for (size_t d = input.shape.size(); d-- > 1;) {
      if (positions.count({input.name, d - 1})) {
        input.shape[d - 1] *= input.shape[d];
        input.shape.erase(input.shape.begin() + d);
      }
    }
  }
  for (ParsedStatement& st : parsed.statements) {
    for (const VarPair& pair : pairs) {
      auto b = std::find(st.output_indices.begin(), st.output_indices.end(),
                         pair.second);
      if (b != st.output_indices.end()) st.output_indices.erase(b);
    }
    std::vector<ParsedExpr*> accesses;
    CollectAccesses(st.value, accesses);
    for (ParsedExpr* a : accesses) {
      for (size_t d = a->indices.size(); d-- > 1;) {
        if (positions.count({a->name, d - 1})) {
          a->indices.erase(a->indices.begin() + d);
        }
      }
    }
  }
  for (const VarPair& pair : pairs) {
    def.dims[pair.first] *= def.dims[pair.second];
    def.dims.erase(pair.second);
  }
}

// The pairs and positions that must merge together with `first`: the pairs
// every access of a tensor has at a position of one of them. Empty when
// two positions of one tensor overlap (d, d+1 and d+1, d+2).
std::pair<std::set<VarPair>, std::set<Position>> MergeClosure(
    const VarPair& first, const std::map<VarPair, std::set<Position>>& pairs,
    const std::vector<AccessView>& views) {
  std::set<VarPair> group = {first};
  std::set<Position> positions;
  std::vector<VarPair> work = {first};
  while (!work.empty()) {
    const VarPair pair = work.back();
    work.pop_back();
    for (const Position& p : pairs.at(pair)) {
      if (!positions.insert(p).second) continue;
      for (const AccessView& view : views) {
        if (view.tensor != p.first) continue;
        const VarPair at = {view.plain[p.second], view.plain[p.second + 1]};
        if (group.insert(at).second) work.push_back(at);
      }
    }
  }
  for (const Position& p : positions) {
    if (positions.count({p.first, p.second + 1})) return {};
  }
  return {group, positions};
}

}  // namespace

absl::StatusOr<CustomDefinition> FlattenDims(const CustomDefinition& def) {
  ParsedDefinition parsed = def.parsed;
  std::map<std::string, int64_t> dims = def.dims;
  DropUnitReductions(parsed, dims);
  absl::StatusOr<CustomDefinition> current =
      CheckCustomDefinition(std::move(parsed), std::move(dims));
  // Each merge removes a variable, so this ends.
  while (current.ok()) {
    const std::vector<AccessView> views = Accesses(*current);
    const std::map<VarPair, std::set<Position>> pairs =
        MergeablePairs(*current, views);
    bool merged = false;
    for (const auto& [pair, positions] : pairs) {
      auto [group, at] = MergeClosure(pair, pairs, views);
      if (group.empty()) continue;
      CustomDefinition next = *current;
      ApplyMerge(group, at, next);
      current =
          CheckCustomDefinition(std::move(next.parsed), std::move(next.dims));
      merged = true;
      break;
    }
    if (!merged) break;
  }
  if (!current.ok()) {
    return absl::InternalError(absl::StrCat(
        "flattening the dimensions of ", PrintParsedDefinition(def.parsed),
        " broke it: ", current.status().message()));
  }
  return current;
}

}  // namespace lathe
