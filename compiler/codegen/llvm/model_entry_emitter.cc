#include "compiler/codegen/llvm/model_entry_emitter.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/llvm/llvm_module.h"
#include "compiler/runtime/lathe_runtime.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace lathe {
namespace {

constexpr uint64_t kAlignment = 64;

std::string BufferText(const EntryBuffer& b) {
  switch (b.kind) {
    case EntryBuffer::Kind::kInput:
      return absl::StrCat("input ", b.index);
    case EntryBuffer::Kind::kOutput:
      return absl::StrCat("output ", b.index);
    case EntryBuffer::Kind::kConstant:
      return absl::StrCat("constant ", b.index);
    case EntryBuffer::Kind::kArena:
      return absl::StrCat("arena offset ", b.index);
  }
  return "?";
}

absl::Status CheckBuffer(const ModelEntry& entry, const EntryBuffer& b,
                         const std::string& where) {
  bool ok = b.index >= 0;
  switch (b.kind) {
    case EntryBuffer::Kind::kInput:
      ok = ok && b.index < entry.num_inputs;
      break;
    case EntryBuffer::Kind::kOutput:
      ok = ok && b.index < entry.num_outputs;
      break;
    case EntryBuffer::Kind::kConstant:
      ok = ok && b.index < static_cast<int64_t>(entry.constants.size());
      break;
    case EntryBuffer::Kind::kArena:
      ok = ok && b.index < entry.arena_bytes;
      break;
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("model entry ", entry.function_name, ": ", where, " reads ",
                   BufferText(b), ", which does not exist"));
}

absl::Status CheckEntry(const std::vector<ObjectKernel>& kernels,
                        const ModelEntry& entry) {
  for (size_t c = 0; c < entry.calls.size(); ++c) {
    const EntryCall& call = entry.calls[c];
    const std::string where = absl::StrCat("call ", c);
    if (call.kernel < 0 || call.kernel >= static_cast<int>(kernels.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("model entry ", entry.function_name, ": ", where,
                       " names kernel ", call.kernel, " of ", kernels.size()));
    }
    const size_t params = kernels[call.kernel].lowered->Params().size();
    if (call.args.size() != params) {
      return absl::InvalidArgumentError(
          absl::StrCat("model entry ", entry.function_name, ": ", where,
                       " gives ", call.args.size(), " arguments to kernel ",
                       kernels[call.kernel].options.function_name,
                       ", which takes ", params));
    }
    for (const EntryBuffer& b : call.args) {
      LATHE_RETURN_IF_ERROR(CheckBuffer(entry, b, where));
    }
  }
  for (const EntryCopy& copy : entry.copies) {
    const std::string where = absl::StrCat("the copy to output ", copy.output);
    if (copy.output < 0 || copy.output >= entry.num_outputs) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model entry ", entry.function_name, ": ", where, " has no output"));
    }
    LATHE_RETURN_IF_ERROR(CheckBuffer(entry, copy.from, where));
  }
  for (const EntryConstant& c : entry.constants) {
    if (c.data == nullptr || c.elements < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("model entry ", entry.function_name, ": constant ",
                       c.name, " has no data"));
    }
  }
  return absl::OkStatus();
}

// Emits the entry function into `module`, whose kernels are defined.
void EmitEntry(const std::vector<ObjectKernel>& kernels,
               const ModelEntry& entry, const Target& target,
               llvm::Module* module) {
  llvm::LLVMContext& ctx = module->getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();

  // The constants, one image (ConstantImageOffsets), in the order of
  // `entry.constants` (a model's: the order the steps first read them,
  // api/model_library.h), so that a call streams them front to back.
  const std::vector<int64_t> offsets = ConstantImageOffsets(entry);
  std::vector<float> image(static_cast<size_t>(offsets.back()), 0.0f);
  for (size_t c = 0; c < entry.constants.size(); ++c) {
    const EntryConstant& constant = entry.constants[c];
    std::copy(constant.data, constant.data + constant.elements,
              image.begin() + offsets[c]);
  }
  llvm::GlobalVariable* image_global = nullptr;
  if (!image.empty()) {
    llvm::Constant* data = llvm::ConstantDataArray::get(
        ctx, llvm::ArrayRef<float>(image.data(), image.size()));
    image_global = new llvm::GlobalVariable(
        *module, data->getType(), /*isConstant=*/true,
        llvm::GlobalValue::InternalLinkage, data,
        absl::StrCat(entry.function_name, "_constants"));
    image_global->setAlignment(llvm::Align(kAlignment));
    image_global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  }
  const uint64_t image_bytes = image.size() * sizeof(float);

  // The runtime's allocator.
  llvm::FunctionCallee alloc = module->getOrInsertFunction(
      "lathe_alloc", llvm::FunctionType::get(ptr, {i64, i64}, false));
  llvm::FunctionCallee release = module->getOrInsertFunction(
      "lathe_free", llvm::FunctionType::get(b.getVoidTy(), {ptr}, false));

  const int num_params = entry.num_inputs + entry.num_outputs;
  std::vector<llvm::Type*> params(num_params, ptr);
  llvm::Function* fn = llvm::Function::Create(
      llvm::FunctionType::get(i32, params, false),
      llvm::Function::ExternalLinkage, entry.function_name, module);
  fn->addFnAttr("target-cpu", target.cpu);
  if (!target.features.empty())
    fn->addFnAttr("target-features", target.FeatureString());
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  for (int p = 0; p < num_params; ++p) {
    llvm::Argument* arg = fn->getArg(p);
    arg->setName(p < entry.num_inputs
                     ? absl::StrCat("input", p)
                     : absl::StrCat("output", p - entry.num_inputs));
    arg->addAttr(llvm::Attribute::NoCapture);
    if (p < entry.num_inputs) arg->addAttr(llvm::Attribute::ReadOnly);
  }

  llvm::BasicBlock* start = llvm::BasicBlock::Create(ctx, "start", fn);
  llvm::BasicBlock* fail = llvm::BasicBlock::Create(ctx, "fail", fn);
  b.SetInsertPoint(start);
  // Where the constants are read: a large image from its copy on huge pages
  // (lathe_model_constants, made by the first call into zero-initialized
  // space of the library), a small one where it is.
  llvm::Value* constants_base = image_global;
  if (ConstantsReadFromCopy(static_cast<int64_t>(image_bytes))) {
    // Room for the copy from the space's first 2 MiB boundary on.
    llvm::Type* space_type = llvm::ArrayType::get(
        b.getInt8Ty(), LATHE_MODEL_CONSTANTS_SPACE(image_bytes));
    auto* space = new llvm::GlobalVariable(
        *module, space_type, /*isConstant=*/false,
        llvm::GlobalValue::InternalLinkage,
        llvm::ConstantAggregateZero::get(space_type),
        absl::StrCat(entry.function_name, "_constants_space"));
    space->setAlignment(llvm::Align(kAlignment));
    auto* where = new llvm::GlobalVariable(
        *module, ptr, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
        llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(ptr)),
        absl::StrCat(entry.function_name, "_constants_at"));
    llvm::FunctionCallee copy = module->getOrInsertFunction(
        "lathe_model_constants",
        llvm::FunctionType::get(ptr, {ptr, ptr, i64, ptr}, false));
    constants_base = b.CreateCall(
        copy, {image_global, space, b.getInt64(image_bytes), where},
        "constants");
  }
  llvm::BasicBlock* path = start;  // the straight-line path of a success
  llvm::Value* arena =
      llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(ptr));
  if (entry.arena_bytes > 0) {
    arena = b.CreateCall(
        alloc, {b.getInt64(entry.arena_bytes), b.getInt64(kAlignment)},
        "arena");
    llvm::BasicBlock* run = llvm::BasicBlock::Create(ctx, "run", fn);
    llvm::BasicBlock* no_arena = llvm::BasicBlock::Create(ctx, "no_arena", fn);
    b.CreateCondBr(b.CreateIsNull(arena), no_arena, run);
    b.SetInsertPoint(no_arena);
    b.CreateRet(b.getInt32(1));
    path = run;
  }
  auto address = [&](const EntryBuffer& buffer) -> llvm::Value* {
    switch (buffer.kind) {
      case EntryBuffer::Kind::kInput:
        return fn->getArg(static_cast<unsigned>(buffer.index));
      case EntryBuffer::Kind::kOutput:
        return fn->getArg(
            static_cast<unsigned>(entry.num_inputs + buffer.index));
      case EntryBuffer::Kind::kConstant:
        return b.CreateInBoundsGEP(b.getFloatTy(), constants_base,
                                   b.getInt64(offsets[buffer.index]));
      case EntryBuffer::Kind::kArena:
        return b.CreateInBoundsGEP(b.getInt8Ty(), arena,
                                   b.getInt64(buffer.index));
    }
    return nullptr;
  };

  // Failure: free the arena and return the kernel's code.
  b.SetInsertPoint(fail);
  llvm::PHINode* code = b.CreatePHI(i32, 0, "code");
  if (entry.arena_bytes > 0) b.CreateCall(release, {arena});
  b.CreateRet(code);

  b.SetInsertPoint(path);
  for (size_t c = 0; c < entry.calls.size(); ++c) {
    const EntryCall& call = entry.calls[c];
    llvm::Function* kernel =
        module->getFunction(kernels[call.kernel].options.function_name);
    std::vector<llvm::Value*> args;
    for (const EntryBuffer& buffer : call.args) args.push_back(address(buffer));
    llvm::Value* rc = b.CreateCall(kernel, args);
    llvm::BasicBlock* next =
        llvm::BasicBlock::Create(ctx, absl::StrCat("after_call", c), fn);
    b.CreateCondBr(b.CreateICmpNE(rc, b.getInt32(0)), fail, next);
    code->addIncoming(rc, b.GetInsertBlock());
    b.SetInsertPoint(next);
  }
  for (const EntryCopy& copy : entry.copies) {
    b.CreateMemCpy(
        address(EntryBuffer{EntryBuffer::Kind::kOutput, copy.output}),
        llvm::MaybeAlign(4), address(copy.from), llvm::MaybeAlign(4),
        b.getInt64(copy.elements * 4));
  }
  if (entry.arena_bytes > 0) b.CreateCall(release, {arena});
  b.CreateRet(b.getInt32(0));
  if (code->getNumIncomingValues() == 0) {
    // No call can fail: the failure block has no predecessor.
    code->eraseFromParent();
    fail->eraseFromParent();
  }
}

// The module of the model's object, verified, before LLVM's optimizer.
absl::StatusOr<std::unique_ptr<llvm::Module>> BuildModelModule(
    const std::vector<ObjectKernel>& kernels, const ModelEntry& entry,
    const Target& target, llvm::TargetMachine* tm, llvm::LLVMContext* ctx) {
  LATHE_RETURN_IF_ERROR(CheckEntry(kernels, entry));
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                         NewModule(entry.function_name, tm, ctx));
  for (const ObjectKernel& kernel : kernels) {
    if (kernel.options.function_name == entry.function_name) {
      return absl::InvalidArgumentError(
          absl::StrCat("model entry ", entry.function_name,
                       ": a kernel has the entry's name"));
    }
    LATHE_RETURN_IF_ERROR(AddKernelToModule(*kernel.lowered, target,
                                            kernel.options, module.get()));
    llvm::Function* fn = module->getFunction(kernel.options.function_name);
    fn->setLinkage(llvm::GlobalValue::InternalLinkage);
    fn->addFnAttr(llvm::Attribute::NoInline);
  }
  EmitEntry(kernels, entry, target, module.get());
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(*module, &os)) {
    return absl::InternalError(
        absl::StrCat("model entry ", entry.function_name,
                     ": the generated LLVM IR is invalid: ", os.str()));
  }
  return module;
}

// The object, or the module as text before LLVM's optimizer.
absl::StatusOr<std::string> EmitModel(const std::vector<ObjectKernel>& kernels,
                                      const ModelEntry& entry,
                                      const Target& target, bool object) {
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                         CreateTargetMachine(target));
  llvm::LLVMContext ctx;
  LATHE_ASSIGN_OR_RETURN(
      std::unique_ptr<llvm::Module> module,
      BuildModelModule(kernels, entry, target, tm.get(), &ctx));
  if (object) {
    OptimizeModule(module.get(), tm.get());
    return EmitObjectToMemory(module.get(), tm.get());
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, nullptr);
  os.flush();
  return text;
}

}  // namespace

absl::StatusOr<std::string> EmitModelObject(
    const std::vector<ObjectKernel>& kernels, const ModelEntry& entry,
    const Target& target) {
  return EmitModel(kernels, entry, target, /*object=*/true);
}

absl::StatusOr<std::string> ModelModuleIr(
    const std::vector<ObjectKernel>& kernels, const ModelEntry& entry,
    const Target& target) {
  return EmitModel(kernels, entry, target, /*object=*/false);
}

}  // namespace lathe
