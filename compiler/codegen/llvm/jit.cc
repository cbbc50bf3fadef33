// The process-wide ORC session and the compile cache.
#include "compiler/codegen/llvm/jit.h"

#include <chrono>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/llvm/llvm_module.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/runtime/lathe_runtime.h"
#include "compiler/runtime/runtime_symbols.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"

namespace lathe {
namespace {

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

std::string ToString(llvm::Error error) {
  return llvm::toString(std::move(error));
}

}  // namespace

// One LLJIT for the process. Objects are compiled by our own target machine
// (the target's CPU and features), so the session's own JIT target machine
// never generates code; it only links.
class JitSession {
 public:
  static JitSession& Get() {
    static JitSession* session =
        new JitSession();  // never destroyed: kernels outlive statics
    return *session;
  }

  absl::StatusOr<CompiledKernel> Compile(const Program& lowered,
                                         const Target& target,
                                         const CodegenOptions& options) {
    LATHE_RETURN_IF_ERROR(init_status_);
    LATHE_RETURN_IF_ERROR(CheckRunnableHere(target));
    std::string key =
        absl::StrCat(StructuralHashHex(lowered), "|", target.ToString(), "|",
                     options.function_name);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = cache_.find(key);
      if (it != cache_.end()) {
        CompiledKernel k = it->second;
        k.from_cache_ = true;
        return k;
      }
    }
    CompiledKernel kernel;
    kernel.name_ = KernelFunctionName(lowered, options);
    kernel.num_args_ = static_cast<int>(lowered.Params().size());
    kernel.num_threads_ = target.num_threads;
    // Every kernel gets a unique symbol: programs of one name differ by
    // schedule.
    CodegenOptions jit_options = options;
    int64_t id;
    {
      std::lock_guard<std::mutex> lock(mu_);
      id = next_id_++;
    }
    jit_options.function_name = absl::StrCat(kernel.name_, "__lathe_jit", id);
    jit_options.emit_packed_wrapper = true;

    auto start = std::chrono::steady_clock::now();
    LATHE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                           CreateTargetMachine(target));
    llvm::LLVMContext ctx;
    LATHE_ASSIGN_OR_RETURN(
        std::unique_ptr<llvm::Module> module,
        BuildModule(lowered, target, jit_options, tm.get(), &ctx));
    kernel.times_.codegen_ms = MsSince(start);
    start = std::chrono::steady_clock::now();
    OptimizeModule(module.get(), tm.get());
    kernel.times_.optimize_ms = MsSince(start);
    start = std::chrono::steady_clock::now();
    LATHE_ASSIGN_OR_RETURN(std::string object,
                           EmitObjectToMemory(module.get(), tm.get()));
    kernel.times_.machine_code_ms = MsSince(start);
    start = std::chrono::steady_clock::now();
    if (llvm::Error err =
            jit_->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
                object, jit_options.function_name))) {
      return absl::InternalError(absl::StrCat("jit of ", lowered.name, ": ",
                                              ToString(std::move(err))));
    }
    auto fn = jit_->lookup(jit_options.function_name);
    if (!fn)
      return absl::InternalError(absl::StrCat("jit of ", lowered.name, ": ",
                                              ToString(fn.takeError())));
    auto packed = jit_->lookup(jit_options.function_name + "_packed");
    if (!packed) {
      return absl::InternalError(absl::StrCat("jit of ", lowered.name, ": ",
                                              ToString(packed.takeError())));
    }
    kernel.times_.link_ms = MsSince(start);
    kernel.function_ = fn->toPtr<void*>();
    kernel.packed_ = packed->toPtr<CompiledKernel::PackedFn>();
    std::lock_guard<std::mutex> lock(mu_);
    ++num_compilations_;
    // Compiled on two threads at once: both get the first one's kernel, so
    // that one program is one kernel in the process (the worker knows
    // kernels by address).
    return cache_.emplace(key, kernel).first->second;
  }

  int64_t num_compilations() {
    std::lock_guard<std::mutex> lock(mu_);
    return num_compilations_;
  }

 private:
  JitSession() { init_status_ = Init(); }

  absl::Status Init() {
    // Registers the native target before LLJIT looks for it.
    LATHE_ASSIGN_OR_RETURN(auto probe, CreateTargetMachine(HostTarget(1)));
    (void)probe;
    auto jit = llvm::orc::LLJITBuilder().create();
    if (!jit)
      return absl::InternalError(
          absl::StrCat("jit: ", ToString(jit.takeError())));
    jit_ = std::move(*jit);
    llvm::orc::JITDylib& jd = jit_->getMainJITDylib();
    // The runtime by address: it is a static library, so its functions are
    // neither exported nor necessarily linked without this table.
    llvm::orc::SymbolMap runtime;
    int count = 0;
    const runtime::RuntimeSymbol* symbols = runtime::RuntimeSymbols(&count);
    for (int i = 0; i < count; ++i) {
      runtime[jit_->mangleAndIntern(symbols[i].name)] =
          llvm::JITEvaluatedSymbol(
              llvm::pointerToJITTargetAddress(symbols[i].address),
              llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
    }
    if (llvm::Error err =
            jd.define(llvm::orc::absoluteSymbols(std::move(runtime)))) {
      return absl::InternalError(
          absl::StrCat("jit: ", ToString(std::move(err))));
    }
    // libm (expf, tanhf, erff, powf) and libc (memset, memcpy that LLVM forms
    // from loops).
    auto generator =
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
            jit_->getDataLayout().getGlobalPrefix());
    if (!generator)
      return absl::InternalError(
          absl::StrCat("jit: ", ToString(generator.takeError())));
    jd.addGenerator(std::move(*generator));
    return absl::OkStatus();
  }

  absl::Status init_status_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::mutex mu_;
  std::map<std::string, CompiledKernel> cache_;
  int64_t next_id_ = 0;
  int64_t num_compilations_ = 0;
};

int CompiledKernel::Call(const std::vector<float*>& args) const {
  LATHE_CHECK(static_cast<int>(args.size()) == num_args_, "kernel ", name_,
              " takes ", num_args_, " arguments, got ", args.size());
  if (lathe_get_num_threads() != num_threads_)
    lathe_set_num_threads(num_threads_);
  std::vector<void*> packed(args.begin(), args.end());
  return packed_(packed.data());
}

absl::Status CompiledKernel::Run(const std::vector<float*>& args) const {
  if (static_cast<int>(args.size()) != num_args_) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel ", name_, " takes ", num_args_, " arguments, got ",
                     args.size()));
  }
  int rc = Call(args);
  if (rc != 0)
    return absl::InternalError(
        absl::StrCat("kernel ", name_, " returned ", rc));
  return absl::OkStatus();
}

absl::StatusOr<CompiledKernel> Compile(const Program& lowered,
                                       const Target& target,
                                       const CodegenOptions& options) {
  return JitSession::Get().Compile(lowered, target, options);
}

int64_t NumJitCompilations() { return JitSession::Get().num_compilations(); }

}  // namespace lathe
