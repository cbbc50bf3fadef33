// The interpreter's public interface (interpreter.h): argument checks and
// storage around the bytecode compiler and executor (bytecode.h).
#include "compiler/interp/interpreter.h"

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/interp/bytecode.h"

namespace lathe {
namespace {

using interp::BufInfo;
using interp::BufKind;
using interp::BufState;
using interp::ShapeString;

// Whether an input value is one that a tensor of its dtype can hold (so the
// interpreter sees exactly what a compiled kernel would).
bool Representable(double v, DType dtype) {
  if (dtype.is_float() && std::isnan(v)) return true;
  return RoundToDType(v, dtype) == v;
}

}  // namespace

Interpreter::Interpreter(std::unique_ptr<CompiledProgram> compiled)
    : compiled_(std::move(compiled)) {}
Interpreter::Interpreter(Interpreter&&) noexcept = default;
Interpreter& Interpreter::operator=(Interpreter&&) noexcept = default;
Interpreter::~Interpreter() = default;

absl::StatusOr<Interpreter> Interpreter::Compile(const Program& program) {
  auto compiled = std::make_unique<CompiledProgram>();
  LATHE_RETURN_IF_ERROR(interp::CompileBytecode(program, compiled.get()));
  return Interpreter(std::move(compiled));
}

absl::Status Interpreter::Run(const std::vector<TensorData*>& args,
                              InterpretStats* stats) const {
  const CompiledProgram& p = *compiled_;
  // 1. Check the arguments.
  auto params = [&] {
    std::vector<std::string> names;
    for (int32_t i = 0; i < p.num_params; ++i)
      names.push_back(p.buffers[i].buffer->name);
    return absl::StrJoin(names, ", ");
  };
  if (static_cast<int32_t>(args.size()) != p.num_params) {
    return absl::InvalidArgumentError(
        absl::StrCat("interpret ", p.name, ": expected ", p.num_params,
                     " arguments (", params(), "), got ", args.size()));
  }
  std::set<const TensorData*> distinct;
  for (int32_t i = 0; i < p.num_params; ++i) {
    const Buffer& b = *p.buffers[i].buffer;
    const TensorData* arg = args[i];
    std::string which =
        absl::StrCat("interpret ", p.name, ": argument ", i, " (", b.name, ")");
    if (arg == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(which, " is null"));
    if (!distinct.insert(arg).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(which, " is the same tensor as an earlier argument"));
    }
    if (arg->dtype != b.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat(which, " has dtype ", arg->dtype.ToString(),
                       ", expected ", b.dtype.ToString()));
    }
    if (arg->shape != b.shape) {
      return absl::InvalidArgumentError(
          absl::StrCat(which, " has shape ", ShapeString(arg->shape),
                       ", expected ", ShapeString(b.shape)));
    }
    if (arg->size() != b.NumElements()) {
      return absl::InvalidArgumentError(
          absl::StrCat(which, " holds ", arg->size(), " values for shape ",
                       ShapeString(b.shape)));
    }
    if (p.buffers[i].kind == BufKind::kInput) {
      for (int64_t k = 0; k < arg->size(); ++k) {
        double v = arg->values[static_cast<size_t>(k)];
        if (!Representable(v, b.dtype)) {
          return absl::InvalidArgumentError(absl::StrCat(
              which, ": value ", v, " at flat index ", k, " is not a ",
              b.dtype.ToString(), " value (round inputs with RoundToDType)"));
        }
      }
    }
  }
  // 2. Storage: parameters in place, one region per allocation (reused by
  // every instance of its block, which starts it over as unwritten).
  std::vector<BufState> bufs(p.buffers.size());
  std::vector<std::vector<double>> data(p.buffers.size());
  std::vector<std::vector<uint8_t>> written(p.buffers.size());
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufInfo& info = p.buffers[i];
    auto n = static_cast<size_t>(info.size);
    bufs[i].shape = info.buffer->shape.data();
    bufs[i].ndim = static_cast<int32_t>(info.buffer->shape.size());
    if (info.kind == BufKind::kAlloc) {
      data[i].assign(n, std::numeric_limits<double>::quiet_NaN());
      bufs[i].data = data[i].data();
    } else {
      bufs[i].data = args[static_cast<size_t>(info.param_index)]->values.data();
    }
    if (info.kind != BufKind::kInput) {
      written[i].assign(n, 0);
      bufs[i].written = written[i].data();
    }
  }
  // 3. Run.
  interp::ExecutionCounts counts;
  absl::Status status = interp::ExecuteBytecode(p, &bufs, &counts);
  if (stats != nullptr) {
    stats->block_instances = counts.block_instances;
    stats->stores = counts.stores;
    stats->output_written.clear();
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      if (p.buffers[i].kind == BufKind::kOutput)
        stats->output_written.push_back(written[i]);
    }
  }
  return status;
}

absl::Status Interpret(const Program& program,
                       const std::vector<TensorData*>& args,
                       InterpretStats* stats) {
  LATHE_ASSIGN_OR_RETURN(Interpreter interpreter,
                         Interpreter::Compile(program));
  return interpreter.Run(args, stats);
}

}  // namespace lathe
