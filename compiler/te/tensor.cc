#include "compiler/te/tensor.h"

#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "compiler/ir/expr_functor.h"

namespace lathe::te {

namespace {
// While a stage's definition runs, the tensors it reads are collected here, so
// that the stage knows its inputs without any global registry of tensors.
thread_local std::vector<Tensor>* g_reads_of_stage_being_defined = nullptr;
}  // namespace

Expr Tensor::operator()(std::vector<Expr> indices) const {
  if (g_reads_of_stage_being_defined != nullptr) {
    g_reads_of_stage_being_defined->push_back(*this);
  }
  return Load(buffer_, std::move(indices));
}

Tensor Placeholder(const std::string& name, std::vector<int64_t> shape,
                   DType dtype) {
  return Tensor(MakeBuffer(name, dtype, std::move(shape)), nullptr);
}

ReduceAxis MakeReduceAxis(int64_t extent, const std::string& name) {
  return ReduceAxis{Var(name), extent};
}

Reduction Sum(Expr source, std::vector<ReduceAxis> axes) {
  return Reduction{ReduceKind::kSum, std::move(source), std::move(axes)};
}
Reduction MaxOver(Expr source, std::vector<ReduceAxis> axes) {
  return Reduction{ReduceKind::kMax, std::move(source), std::move(axes)};
}
Reduction MinOver(Expr source, std::vector<ReduceAxis> axes) {
  return Reduction{ReduceKind::kMin, std::move(source), std::move(axes)};
}

Expr ReduceIdentity(ReduceKind kind, DType dtype) {
  switch (kind) {
    case ReduceKind::kSum:
      return Zero(dtype);
    case ReduceKind::kMax:
      return MinValue(dtype);
    case ReduceKind::kMin:
      return MaxValue(dtype);
  }
  return Zero(dtype);
}

Expr ReduceCombine(ReduceKind kind, Expr acc, Expr value) {
  switch (kind) {
    case ReduceKind::kSum:
      return acc + value;
    case ReduceKind::kMax:
      return Max(acc, value);
    case ReduceKind::kMin:
      return Min(acc, value);
  }
  return acc + value;
}

namespace {

// The tensors that expr loads from, in order of first load.
std::vector<Tensor> TensorsRead(const Expr& expr,
                                const std::vector<Tensor>& captured,
                                const std::string& stage) {
  std::vector<Tensor> inputs;
  std::set<const Buffer*> seen;
  VisitExpr(expr, [&](const Expr& e) {
    if (!e.is(ExprKind::kLoad)) return;
    const Buffer* b = e->buffer.get();
    if (!seen.insert(b).second) return;
    for (const Tensor& t : captured) {
      if (t.buffer().get() == b) {
        inputs.push_back(t);
        return;
      }
    }
    LATHE_CHECK(false, "te: stage ", stage, " loads ", b->name,
                " through an expression built outside its definition");
  });
  return inputs;
}

Tensor MakeStage(const std::string& name, std::vector<int64_t> shape,
                 std::vector<std::string> axis_names,
                 const std::function<void(StageDef*)>& define) {
  if (axis_names.empty()) {
    for (size_t i = 0; i < shape.size(); ++i)
      axis_names.push_back(absl::StrCat("i", i));
  }
  LATHE_CHECK(axis_names.size() == shape.size(), "te: stage ", name, " has ",
              shape.size(), " dimensions but ", axis_names.size(),
              " axis names");
  auto def = std::make_shared<StageDef>();
  for (const std::string& axis : axis_names) def->axes.push_back(Var(axis));
  def->axis_names = axis_names;
  std::vector<Tensor> captured;
  std::vector<Tensor>* outer = g_reads_of_stage_being_defined;
  g_reads_of_stage_being_defined = &captured;
  define(def.get());
  g_reads_of_stage_being_defined = outer;
  Expr body = def->value.defined() ? def->value : def->reduction.source;
  LATHE_CHECK(body.defined(), "te: stage ", name, " has no definition");
  def->inputs = TensorsRead(body, captured, name);
  return Tensor(MakeBuffer(name, body.dtype(), std::move(shape)), def);
}

}  // namespace

Tensor Compute(const std::string& name, std::vector<int64_t> shape,
               std::vector<std::string> axis_names,
               const std::function<Expr(const std::vector<Expr>&)>& fn) {
  return MakeStage(name, std::move(shape), std::move(axis_names),
                   [&](StageDef* def) { def->value = fn(def->axes); });
}

Tensor ComputeReduction(
    const std::string& name, std::vector<int64_t> shape,
    std::vector<std::string> axis_names,
    const std::function<Reduction(const std::vector<Expr>&)>& fn) {
  return MakeStage(name, std::move(shape), std::move(axis_names),
                   [&](StageDef* def) { def->reduction = fn(def->axes); });
}

namespace {

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::set<std::string>* used_names)
      : used_(used_names) {}

  std::string Unique(const std::string& hint) {
    std::string name = hint;
    for (int i = 1; used_->count(name); ++i) name = absl::StrCat(hint, "_", i);
    used_->insert(name);
    return name;
  }

  // One loop nest with one block computing `t`.
  StmtPtr BuildStage(const Tensor& t) {
    const StageDef& def = *t.def();
    auto block = std::make_unique<BlockNode>();
    block->name = t.name();  // tensor names are unique and already taken
    std::vector<Expr> loop_vars;
    std::vector<int64_t> extents;
    VarMap to_iter;  // axis var -> block iter var
    std::vector<Expr> out_indices;
    for (size_t i = 0; i < def.axes.size(); ++i) {
      Expr loop = Var(Unique(def.axis_names[i]));
      Expr iv = Var(Unique(absl::StrCat("v", def.axis_names[i])));
      loop_vars.push_back(loop);
      extents.push_back(t.shape()[i]);
      block->iter_vars.push_back({iv, t.shape()[i], IterType::kSpatial});
      block->iter_values.push_back(loop);
      to_iter[def.axes[i]] = iv;
      out_indices.push_back(iv);
    }
    if (def.value.defined()) {
      block->body =
          MakeStore(t.buffer(), out_indices, Substitute(def.value, to_iter));
    } else {
      const Reduction& r = def.reduction;
      for (const ReduceAxis& axis : r.axes) {
        const std::string& hint = axis.var->name;
        Expr loop = Var(Unique(hint));
        Expr iv = Var(Unique(absl::StrCat("v", hint)));
        loop_vars.push_back(loop);
        extents.push_back(axis.extent);
        block->iter_vars.push_back({iv, axis.extent, IterType::kReduce});
        block->iter_values.push_back(loop);
        to_iter[axis.var] = iv;
      }
      DType dtype = t.dtype();
      block->init =
          MakeStore(t.buffer(), out_indices, ReduceIdentity(r.kind, dtype));
      Expr acc = Load(t.buffer(), out_indices);
      block->body =
          MakeStore(t.buffer(), out_indices,
                    ReduceCombine(r.kind, acc, Substitute(r.source, to_iter)));
    }
    StmtPtr nest = std::move(block);
    for (size_t i = loop_vars.size(); i-- > 0;) {
      nest = MakeFor(loop_vars[i], extents[i], std::move(nest));
    }
    return nest;
  }

 private:
  std::set<std::string>* used_;
};

}  // namespace

absl::StatusOr<Program> CreateProgram(const std::string& name,
                                      const std::vector<Tensor>& inputs,
                                      const std::vector<Tensor>& outputs) {
  std::set<const Buffer*> input_set;
  std::set<std::string> used_names;
  for (const Tensor& t : inputs) {
    if (t.def() != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("program ", name, ": input ", t.name(),
                       " is a computed tensor, not a placeholder"));
    }
    input_set.insert(t.buffer().get());
  }
  // Post-order DFS from the outputs gives a dependency order.
  std::vector<Tensor> order;
  std::set<const Buffer*> visited;
  std::function<absl::Status(const Tensor&)> visit =
      [&](const Tensor& t) -> absl::Status {
    if (!visited.insert(t.buffer().get()).second) return absl::OkStatus();
    if (t.def() == nullptr) {
      if (!input_set.count(t.buffer().get())) {
        return absl::InvalidArgumentError(
            absl::StrCat("program ", name, ": placeholder ", t.name(),
                         " is read but not listed among the inputs"));
      }
      return absl::OkStatus();
    }
    for (const Tensor& in : t.def()->inputs) LATHE_RETURN_IF_ERROR(visit(in));
    order.push_back(t);
    return absl::OkStatus();
  };
  for (const Tensor& t : outputs) {
    if (input_set.count(t.buffer().get())) {
      return absl::InvalidArgumentError(
          absl::StrCat("program ", name, ": tensor ", t.name(),
                       " is both input and output"));
    }
    LATHE_RETURN_IF_ERROR(visit(t));
  }
  std::set<std::string> names = {"root"};  // the root block's name
  for (const Tensor& t : inputs) {
    if (!names.insert(t.name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("program ", name, ": two tensors are named ", t.name()));
    }
  }
  for (const Tensor& t : order) {
    if (!names.insert(t.name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("program ", name, ": two tensors are named ", t.name()));
    }
  }
  used_names = names;
  used_names.insert("root");

  Program program;
  program.name = name;
  for (const Tensor& t : inputs) program.inputs.push_back(t.buffer());
  for (const Tensor& t : outputs) program.outputs.push_back(t.buffer());
  program.root = std::make_unique<BlockNode>();
  program.root->name = "root";
  std::set<const Buffer*> output_set;
  for (const Tensor& t : outputs) output_set.insert(t.buffer().get());
  ProgramBuilder builder(&used_names);
  std::vector<StmtPtr> nests;
  for (const Tensor& t : order) {
    if (!output_set.count(t.buffer().get())) {
      program.root->alloc_buffers.push_back(t.buffer());
    }
    nests.push_back(builder.BuildStage(t));
  }
  program.root->body = MakeSeq(std::move(nests));
  return program;
}

}  // namespace lathe::te
