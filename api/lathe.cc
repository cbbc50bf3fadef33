#include "api/lathe.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/kernel_plan.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/kernel_header.h"
#include "compiler/codegen/kernel_library.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/codegen/prepacked_kernel.h"
#include "compiler/workload/spec.h"
#include "database/database.h"

namespace lathe::api {
namespace {

// Prefixes an error with what it concerns, keeping its code.
absl::Status Prefixed(const absl::Status& status, const std::string& prefix) {
  return absl::Status(status.code(),
                      absl::StrCat(prefix, ": ", status.message()));
}

}  // namespace

int Kernel::operator()(float* const* args) const {
  if (compiled_ == nullptr) return -1;
  return compiled_->Call(
      std::vector<float*>(args, args + compiled_->num_args()));
}

int Kernel::num_args() const {
  return compiled_ == nullptr ? 0 : compiled_->num_args();
}

int Kernel::Prepack(size_t k, const float* constant, float* packed) const {
  if (k >= prepacks_.size()) return -1;
  return prepacks_[k]->Call({const_cast<float*>(constant), packed});
}

Database::Database(std::string path, std::unique_ptr<db::Database> db,
                   Options options)
    : path_(std::move(path)), db_(std::move(db)), options_(options) {}

Database::~Database() = default;

absl::StatusOr<std::unique_ptr<Database>> Database::Open(
    const std::string& path, Options options) {
  std::unique_ptr<db::Database> db;
  if (!path.empty()) {
    db::OpenOptions open;
    open.mode = db::OpenOptions::Mode::kReadOnly;
    absl::StatusOr<std::unique_ptr<db::Database>> opened =
        db::Database::Open(path, open);
    if (!opened.ok()) return opened.status();
    db = *std::move(opened);
  }
  return std::unique_ptr<Database>(new Database(path, std::move(db), options));
}

absl::StatusOr<KernelPlan> Database::Plan(const std::string& spec,
                                          const std::string& target) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  if (!workload.ok()) return Prefixed(workload.status(), spec);
  absl::StatusOr<Target> parsed = ParseTarget(target);
  if (!parsed.ok()) return Prefixed(parsed.status(), spec);
  std::lock_guard<std::mutex> lock(db_mutex_);
  return PlanKernel(db_.get(), *workload, *parsed,
                    options_.compatible ? db::TargetMatching::kCompatible
                                        : db::TargetMatching::kExact);
}

absl::StatusOr<Kernel> Database::GetKernel(const std::string& spec,
                                           const std::string& target) {
  absl::StatusOr<KernelPlan> plan = Plan(spec, target);
  if (!plan.ok()) return plan.status();
  Kernel kernel;
  absl::StatusOr<CompiledKernel> compiled =
      absl::InternalError("no kernel compiled");
  if (options_.pack_constants_ahead) {
    // Split and compiled as lathe tune's workers measure it.
    absl::StatusOr<PrepackedKernel> prepacked =
        CompilePrepacked(plan->program, plan->target, {});
    if (!prepacked.ok())
      return Prefixed(prepacked.status(), plan->workload.CanonicalForm());
    for (CompiledPrepack& p : prepacked->prepacks) {
      kernel.packed_inputs_.push_back({static_cast<int>(p.input), p.input_shape,
                                       p.packed_shape, p.packed_elements});
      kernel.prepacks_.push_back(
          std::make_shared<const CompiledKernel>(std::move(p.kernel)));
    }
    compiled = std::move(prepacked->main);
  } else {
    compiled = Compile(plan->program.lowered, plan->target);
  }
  if (!compiled.ok())
    return Prefixed(compiled.status(), plan->workload.CanonicalForm());
  kernel.compiled_ =
      std::make_shared<const CompiledKernel>(*std::move(compiled));
  kernel.workload_ = plan->workload.CanonicalForm();
  kernel.target_ = plan->target.ToString();
  kernel.origin_ = std::move(plan->origin);
  return kernel;
}

absl::StatusOr<ObjectFile> Database::GetObject(
    const std::string& spec, const std::string& target,
    const std::string& function_name) {
  absl::StatusOr<KernelPlan> plan = Plan(spec, target);
  if (!plan.ok()) return plan.status();
  ObjectFile object;
  object.function_name = function_name.empty()
                             ? DefaultFunctionName(plan->workload)
                             : function_name;
  if (!IsCIdentifier(object.function_name)) {
    return absl::InvalidArgumentError(absl::StrCat(spec, ": function name ",
                                                   object.function_name,
                                                   " is not a C identifier"));
  }
  absl::StatusOr<std::string> bytes =
      KernelObject(plan->program, plan->target, object.function_name);
  if (!bytes.ok())
    return Prefixed(bytes.status(), plan->workload.CanonicalForm());
  object.bytes = *std::move(bytes);
  object.header = KernelHeader(plan->workload, plan->program, plan->target,
                               object.function_name, LibraryKind::kObject);
  object.origin = std::move(plan->origin);
  return object;
}

}  // namespace lathe::api
