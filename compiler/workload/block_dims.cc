#include "compiler/workload/block_dims.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace lathe {
namespace {

struct Blocking {
  int dim;
  int64_t block;
};

// Step 1: the tensors blocked and the variables split, to a fixed point.
class Closure {
 public:
  Closure(const CustomDefinition& def, bool block_constants)
      : def_(def), block_constants_(block_constants) {}

  absl::Status Block(const std::string& tensor, int dim, int64_t block) {
    auto [it, added] = tensors_.emplace(tensor, Blocking{dim, block});
    if (!added && (it->second.dim != dim || it->second.block != block)) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot block ", tensor, " along dimension ", dim,
                       " by ", block, ": it is blocked along dimension ",
                       it->second.dim, " by ", it->second.block));
    }
    changed_ |= added;
    return absl::OkStatus();
  }

  // The fixed point over the requested tensors and the intermediates; then,
  // with block_constants, the constants blocked and the fixed point again
  // (their reads checked like any blocked tensor's).
  absl::Status Run() {
    LATHE_RETURN_IF_ERROR(Converge());
    if (!block_constants_) return absl::OkStatus();
    LATHE_RETURN_IF_ERROR(BlockConstants());
    return Converge();
  }

  const std::map<std::string, Blocking>& tensors() const { return tensors_; }
  const std::map<std::string, int64_t>& vars() const { return vars_; }

 private:
  absl::Status Converge() {
    do {
      changed_ = false;
      for (const ParsedStatement& st : def_.parsed.statements) {
        // The statement's own write, then its reads.
        LATHE_RETURN_IF_ERROR(WriteOf(st));
        std::vector<const ParsedExpr*> accesses;
        CollectAccesses(st.value, accesses);
        for (const ParsedExpr* a : accesses) {
          LATHE_RETURN_IF_ERROR(ReadOfIntermediate(*a));
          auto it = tensors_.find(a->name);
          if (it == tensors_.end()) continue;
          const int d = it->second.dim;
          const std::string v = PlainVariable(a->indices[d]);
          const int64_t extent = def_.FindTensor(a->name)->shape[d];
          if (v.empty() || def_.dims.at(v) != extent) {
            return absl::FailedPreconditionError(
                absl::StrCat("cannot block ", a->name, " along dimension ", d,
                             ": a read indexes it with ",
                             a->indices[d].ToString(), " (column ", a->column,
                             "), not a variable over the whole dimension"));
          }
          LATHE_RETURN_IF_ERROR(Split(v, it->second.block, a->name));
        }
      }
    } while (changed_);
    return absl::OkStatus();
  }

  // Each constant input read with a split variable over a whole dimension
  // is blocked there, preferring a variable the reading statement writes
  // (its lanes then match the statement's output lanes: a 1x1
  // convolution's weights blocked by output channel, not input channel).
  absl::Status BlockConstants() {
    for (const ParsedStatement& st : def_.parsed.statements) {
      std::vector<const ParsedExpr*> accesses;
      CollectAccesses(st.value, accesses);
      for (const ParsedExpr* a : accesses) {
        const CustomTensor* tensor = def_.FindTensor(a->name);
        if (!tensor->constant || tensor->role != CustomTensor::Role::kInput ||
            tensors_.count(a->name)) {
          continue;
        }
        int chosen = -1;
        for (size_t p = 0; p < a->indices.size(); ++p) {
          const std::string v = PlainVariable(a->indices[p]);
          if (!vars_.count(v) || tensor->shape[p] != def_.dims.at(v)) continue;
          const bool written =
              std::find(st.output_indices.begin(), st.output_indices.end(),
                        v) != st.output_indices.end();
          if (chosen < 0 || written) chosen = static_cast<int>(p);
          if (written) break;
        }
        if (chosen >= 0) {
          LATHE_RETURN_IF_ERROR(Block(
              a->name, chosen, vars_.at(PlainVariable(a->indices[chosen]))));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status WriteOf(const ParsedStatement& st) {
    auto it = tensors_.find(st.output);
    if (it != tensors_.end()) {
      LATHE_RETURN_IF_ERROR(Split(st.output_indices[it->second.dim],
                                  it->second.block, st.output));
    }
    // A split variable among the written indices blocks the tensor there.
    for (size_t p = 0; p < st.output_indices.size(); ++p) {
      auto var = vars_.find(st.output_indices[p]);
      if (var == vars_.end()) continue;
      const CustomTensor* tensor = def_.FindTensor(st.output);
      if (tensor->role == CustomTensor::Role::kOutput &&
          !tensors_.count(st.output)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot block: the output ", st.output, " is not blocked, yet its ",
            "dimension ", p, " is indexed by ", var->first,
            ", which a blocked tensor splits"));
      }
      LATHE_RETURN_IF_ERROR(Block(st.output, static_cast<int>(p), var->second));
    }
    return absl::OkStatus();
  }

  // An intermediate read with a split variable in a dimension is blocked
  // there: the statement that defines it then computes in blocks too.
  absl::Status ReadOfIntermediate(const ParsedExpr& a) {
    const CustomTensor* tensor = def_.FindTensor(a.name);
    if (tensor->role != CustomTensor::Role::kIntermediate ||
        tensors_.count(a.name)) {
      return absl::OkStatus();
    }
    for (size_t p = 0; p < a.indices.size(); ++p) {
      auto var = vars_.find(PlainVariable(a.indices[p]));
      if (var != vars_.end() && tensor->shape[p] == def_.dims.at(var->first))
        return Block(a.name, static_cast<int>(p), var->second);
    }
    return absl::OkStatus();
  }

  absl::Status Split(const std::string& var, int64_t block,
                     const std::string& tensor) {
    auto [it, added] = vars_.emplace(var, block);
    if (!added && it->second != block) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot block ", tensor, " by ", block, ": variable ",
                       var, " is split by ", it->second, " already"));
    }
    changed_ |= added;
    return absl::OkStatus();
  }

  const CustomDefinition& def_;
  const bool block_constants_;
  std::map<std::string, Blocking> tensors_;
  std::map<std::string, int64_t> vars_;  // variable -> block
  bool changed_ = false;
};

// A name not yet used by a variable or tensor, `base` when free.
std::string FreshName(const std::string& base, std::set<std::string>& used) {
  std::string name = base;
  for (int n = 2; used.count(name); ++n) name = absl::StrCat(base, n);
  used.insert(name);
  return name;
}

}  // namespace

absl::StatusOr<BlockedDefinition> BlockDims(const CustomDefinition& def,
                                            const std::vector<DimBlock>& blocks,
                                            bool block_constants) {
  Closure closure(def, block_constants);
  std::set<std::string> requested;
  for (const DimBlock& b : blocks) {
    const CustomTensor* tensor = def.FindTensor(b.tensor);
    if (tensor == nullptr ||
        tensor->role == CustomTensor::Role::kIntermediate) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot block ", b.tensor, ": not an input or the output"));
    }
    if (!requested.insert(b.tensor).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot block ", b.tensor, ": named twice"));
    }
    if (b.dim < 0 || b.dim >= static_cast<int>(tensor->shape.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot block ", b.tensor, " along dimension ", b.dim,
                       ": it has ", tensor->shape.size()));
    }
    if (b.block < 2 || tensor->shape[b.dim] % b.block != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot block ", b.tensor, " along dimension ", b.dim, " by ",
          b.block, ": its extent there is ", tensor->shape[b.dim]));
    }
    if (absl::Status st = closure.Block(b.tensor, b.dim, b.block); !st.ok())
      return st;
  }
  if (absl::Status st = closure.Run(); !st.ok()) return st;

  // Step 2: the new variables, vo and vi per split v.
  std::set<std::string> used;
  for (const auto& [v, extent] : def.dims) used.insert(v);
  for (const CustomTensor& t : def.tensors) used.insert(t.name);
  std::map<std::string, std::pair<std::string, std::string>> parts;
  std::map<std::string, int64_t> dims = def.dims;
  for (const auto& [v, block] : closure.vars()) {
    const std::string outer = FreshName(v + "o", used);
    const std::string inner = FreshName(v + "i", used);
    parts[v] = {outer, inner};
    dims[outer] = def.dims.at(v) / block;
    dims[inner] = block;
    dims.erase(v);
  }
  auto substitute = [&](AffineIndex& index) {
    AffineIndex out;
    out.constant = index.constant;
    for (const auto& [v, coef] : index.coefs) {
      auto it = parts.find(v);
      if (it == parts.end()) {
        out.coefs[v] += coef;
        continue;
      }
      out.coefs[it->second.first] += coef * closure.vars().at(v);
      out.coefs[it->second.second] += coef;
    }
    index = std::move(out);
  };

  // Step 3: the statements and declarations rewritten.
  ParsedDefinition parsed = def.parsed;
  for (ParsedStatement& st : parsed.statements) {
    auto blocked = closure.tensors().find(st.output);
    if (blocked != closure.tensors().end()) {
      std::string& v = st.output_indices[blocked->second.dim];
      const auto [outer, inner] = parts.at(v);
      v = outer;
      st.output_indices.push_back(inner);
    }
    std::vector<ParsedExpr*> accesses;
    CollectAccesses(st.value, accesses);
    for (ParsedExpr* a : accesses) {
      auto it = closure.tensors().find(a->name);
      std::string inner;
      if (it != closure.tensors().end()) {
        AffineIndex& index = a->indices[it->second.dim];
        const auto [outer, in] = parts.at(PlainVariable(index));
        index = AffineIndex{{{outer, 1}}, 0};
        inner = in;
      }
      for (AffineIndex& index : a->indices) substitute(index);
      if (!inner.empty()) a->indices.push_back(AffineIndex{{{inner, 1}}, 0});
    }
  }
  for (InputDeclaration& input : parsed.inputs) {
    auto it = closure.tensors().find(input.name);
    if (it == closure.tensors().end()) continue;
    input.shape[it->second.dim] /= it->second.block;
    input.shape.push_back(it->second.block);
  }
  absl::StatusOr<CustomDefinition> checked =
      CheckCustomDefinition(std::move(parsed), std::move(dims));
  if (!checked.ok()) {
    return absl::InternalError(absl::StrCat("blocking broke the definition: ",
                                            checked.status().message()));
  }
  BlockedDefinition result{*std::move(checked), {}};
  for (const CustomTensor& t : def.tensors) {
    auto it = closure.tensors().find(t.name);
    if (it == closure.tensors().end() ||
        t.role == CustomTensor::Role::kIntermediate) {
      continue;
    }
    result.blocked.push_back({t.name, it->second.dim, it->second.block});
  }
  return result;
}

}  // namespace lathe
