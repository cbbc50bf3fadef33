#include "compiler/codegen/kernel_header.h"

#include <cctype>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/workload/registry.h"

namespace lathe {
namespace {

// Makes text safe inside a /* */ comment.
std::string CommentSafe(const std::string& text) {
  return absl::StrReplaceAll(text, {{"*/", "* /"}, {"/*", "/ *"}});
}

// The C element type of a tensor; float32 is the only dtype workloads accept
// today, the others are here so that the header never lies when more come.
std::string CType(DType dtype) {
  if (dtype == DType::Float32()) return "float";
  if (dtype == DType::Int32()) return "int32_t";
  return "void";
}

std::string ShapeText(const te::Tensor& tensor) {
  return absl::StrCat(tensor.dtype().ToString(), "[",
                      absl::StrJoin(tensor.shape(), ", "), "]");
}

// The prototype `int NAME(\n    /* X: float32[...] */ const float* X, ...);`.
std::string Prototype(const Workload& workload,
                      const std::string& function_name) {
  std::vector<std::string> params;
  auto add_param = [&params](const te::Tensor& t, const char* qualifier) {
    // Tensor names are identifiers in every workload; the fallback keeps the
    // header valid C should one ever not be.
    std::string name =
        IsCIdentifier(t.name()) ? t.name() : absl::StrCat("arg", params.size());
    params.push_back(absl::StrCat("    /* ", CommentSafe(t.name()), ": ",
                                  ShapeText(t), " (row-major) */ ", qualifier,
                                  CType(t.dtype()), "* ", name));
  };
  for (const te::Tensor& t : workload.inputs()) add_param(t, "const ");
  for (const te::Tensor& t : workload.outputs()) add_param(t, "");
  return absl::StrCat("int ", function_name, "(\n",
                      absl::StrJoin(params, ",\n"), ");\n");
}

// What a .o or .a declares of the runtime linked with its kernels.
constexpr char kRuntimeDeclarations[] =
    "/* From the Lathe runtime (lathe_runtime.h), linked with the kernels.\n"
    " * lathe_set_num_threads: the threads of parallel loops; n <= 0 restores "
    "the\n"
    " * default: LATHE_NUM_THREADS, else the CPUs this process may run on.\n"
    " * lathe_release_scratch: frees the scratch blocks (packed operands, "
    "padded\n"
    " * inputs; up to 64 MiB) kept for the next kernel call; the next call\n"
    " * allocates afresh. */\n"
    "#ifndef LATHE_RUNTIME_H_\n"
    "void lathe_set_num_threads(int n);\n"
    "void lathe_release_scratch(void);\n"
    "#endif\n\n";

// Above the release functions of a shared library.
constexpr char kSharedReleaseComment[] =
    "/* Frees the scratch blocks (packed operands, padded inputs; up to 64 "
    "MiB)\n"
    " * this library's runtime keeps for the next kernel call; the next call\n"
    " * allocates afresh. */\n";

std::string Guard(const std::string& stem) {
  std::string guard = "LATHE_";
  for (char c : stem) {
    guard +=
        std::isalnum(static_cast<unsigned char>(c))
            ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
            : '_';
  }
  return guard + "_H_";
}

}  // namespace

bool IsCIdentifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  // Keywords of C (to C23) and C++ (the header is included from both), the
  // names C reserves (_X..., __...), and main: a header declaring them does
  // not compile, or clashes with the program.
  static const auto* const kTaken =
      new std::set<std::string>{"alignas",     "alignof",
                                "and",         "and_eq",
                                "asm",         "auto",
                                "bitand",      "bitor",
                                "bool",        "break",
                                "case",        "catch",
                                "char",        "char8_t",
                                "char16_t",    "char32_t",
                                "class",       "compl",
                                "concept",     "const",
                                "consteval",   "constexpr",
                                "constinit",   "const_cast",
                                "continue",    "co_await",
                                "co_return",   "co_yield",
                                "decltype",    "default",
                                "delete",      "do",
                                "double",      "dynamic_cast",
                                "else",        "enum",
                                "explicit",    "export",
                                "extern",      "false",
                                "float",       "for",
                                "friend",      "goto",
                                "if",          "inline",
                                "int",         "long",
                                "main",        "mutable",
                                "namespace",   "new",
                                "noexcept",    "not",
                                "not_eq",      "nullptr",
                                "operator",    "or",
                                "or_eq",       "private",
                                "protected",   "public",
                                "register",    "reinterpret_cast",
                                "requires",    "restrict",
                                "return",      "short",
                                "signed",      "sizeof",
                                "static",      "static_assert",
                                "static_cast", "struct",
                                "switch",      "template",
                                "this",        "thread_local",
                                "throw",       "true",
                                "try",         "typedef",
                                "typeid",      "typename",
                                "typeof",      "typeof_unqual",
                                "union",       "unsigned",
                                "using",       "virtual",
                                "void",        "volatile",
                                "wchar_t",     "while",
                                "xor",         "xor_eq"};
  if (kTaken->count(name)) return false;
  // The runtime's symbols (lathe_alloc, lathe_parallel_for, ...), and
  // "lathe", whose setter would be lathe_set_num_threads: a kernel of such a
  // name called itself instead of the runtime and never returned.
  if (name == "lathe" || name.rfind("lathe_", 0) == 0) return false;
  if (name.size() >= 2 && name[0] == '_' &&
      (name[1] == '_' || std::isupper(static_cast<unsigned char>(name[1])))) {
    return false;
  }
  return true;
}

std::string DefaultFunctionName(const Workload& workload) {
  std::vector<std::string> values;
  if (const OperatorDef* op = FindOperator(workload.op())) {
    for (const ParamSpec& param : op->params) {
      if (param.kind == ParamKind::kDType) continue;
      auto it = workload.params().find(param.name);
      if (it != workload.params().end()) values.push_back(it->second);
    }
  } else {
    for (const auto& [name, value] : workload.params()) values.push_back(value);
  }
  std::string name = workload.op();
  if (!values.empty()) absl::StrAppend(&name, "_", absl::StrJoin(values, "x"));
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    name = "k_" + name;
  return name;
}

std::string SharedSetNumThreadsName(const std::string& function_name) {
  return function_name + "_set_num_threads";
}

std::string SharedReleaseScratchName(const std::string& function_name) {
  return function_name + "_release_scratch";
}

std::string ThreadControlDeclarations(const std::string& function_name,
                                      LibraryKind kind) {
  if (kind != LibraryKind::kShared) return kRuntimeDeclarations;
  return absl::StrCat(
      "/* Threads of this library's parallel loops (the runtime "
      "inside a shared\n"
      " * library is private to it). n <= 0 restores the "
      "default: LATHE_NUM_THREADS,\n"
      " * else the CPUs this process may run on. */\n",
      "void ", SharedSetNumThreadsName(function_name), "(int n);\n\n",
      kSharedReleaseComment, "void ", SharedReleaseScratchName(function_name),
      "(void);\n\n");
}

std::string KernelHeader(const Workload& workload, const KernelProgram& kernel,
                         const Target& target, const std::string& function_name,
                         LibraryKind kind) {
  std::string guard = "LATHE_KERNEL_";
  for (char c : function_name)
    guard += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  guard += "_H_";

  std::string out;
  absl::StrAppend(
      &out, "/* Generated by lathe compile. Do not edit.\n", " *\n",
      " * workload: ", CommentSafe(workload.CanonicalForm()), "\n",
      " * target:   ", CommentSafe(target.ToString()), "\n",
      " * schedule: ", kernel.default_schedule ? "default" : "trace",
      ", structural hash ", kernel.structural_hash, "\n", " *\n",
      " * Tensors are row-major and densely packed; inputs first, outputs "
      "last.\n",
      " * An output must not overlap an input or another output: the kernel "
      "is\n",
      " * compiled assuming none do.\n",
      " * Returns 0 on success, non-zero when a scratch allocation or a "
      "parallel\n",
      " * task failed.\n", " */\n", "#ifndef ", guard, "\n#define ", guard,
      "\n\n", "#include <stdint.h>\n\n",
      "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  std::vector<std::string> params;
  auto add_param = [&params](const te::Tensor& t, const char* qualifier) {
    // Tensor names are identifiers in every workload; the fallback keeps the
    // header valid C should one ever not be.
    std::string name =
        IsCIdentifier(t.name()) ? t.name() : absl::StrCat("arg", params.size());
    params.push_back(absl::StrCat("    /* ", CommentSafe(t.name()), ": ",
                                  ShapeText(t), " (row-major) */ ", qualifier,
                                  CType(t.dtype()), "* ", name));
  };
  for (const te::Tensor& t : workload.inputs()) add_param(t, "const ");
  for (const te::Tensor& t : workload.outputs()) add_param(t, "");
  absl::StrAppend(&out, "int ", function_name, "(\n",
                  absl::StrJoin(params, ",\n"), ");\n\n");
  absl::StrAppend(&out, ThreadControlDeclarations(function_name, kind));
  absl::StrAppend(
      &out, "#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n#endif  /* ",
      guard, " */\n");
  return out;
}

std::string KernelLibraryHeader(const std::vector<LibraryKernel>& kernels,
                                const Target& target, LibraryKind kind,
                                const std::string& guard_stem) {
  // The stem alone is not enough: two kernel sets with headers of one name in
  // two folders (--prefix g1_ and g2_) would share the guard, and the second
  // header included would declare nothing. Its functions' names tell sets
  // apart, and are the same for the same inputs.
  std::vector<std::string> names;
  for (const LibraryKernel& k : kernels) names.push_back(k.function_name);
  const uint32_t names_hash =
      static_cast<uint32_t>(StableHash64(absl::StrJoin(names, ",")));
  const std::string guard =
      Guard(absl::StrCat(guard_stem, "_", absl::StrFormat("%08x", names_hash)));
  std::string out;
  absl::StrAppend(&out, "/* Generated by lathe compile. Do not edit.\n", " *\n",
                  " * target:  ", CommentSafe(target.ToString()), "\n",
                  " * kernels: ", kernels.size(), "\n", " *\n",
                  " * Tensors are row-major and densely packed; inputs first, "
                  "outputs last.\n",
                  " * An output must not overlap an input or another output: "
                  "the kernels are\n",
                  " * compiled assuming none do.\n",
                  " * Each kernel returns 0 on success, non-zero when a "
                  "scratch allocation\n",
                  " * or a parallel task failed.\n", " */\n", "#ifndef ", guard,
                  "\n#define ", guard, "\n\n", "#include <stdint.h>\n\n",
                  "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  for (const LibraryKernel& k : kernels) {
    std::string origin = k.origin;
    if (origin.empty())
      origin = k.kernel->default_schedule ? "default" : "trace";
    absl::StrAppend(&out,
                    "/* workload: ", CommentSafe(k.workload->CanonicalForm()),
                    "\n", " * schedule: ", CommentSafe(origin),
                    ", structural hash ", k.kernel->structural_hash, " */\n",
                    Prototype(*k.workload, k.function_name), "\n");
  }
  if (kind == LibraryKind::kShared) {
    absl::StrAppend(&out,
                    "/* Threads of this library's parallel loops (the runtime "
                    "inside a shared\n"
                    " * library is private to it; each setter below sets the "
                    "same pool). n <= 0\n"
                    " * restores the default: LATHE_NUM_THREADS, else the CPUs "
                    "this process may\n"
                    " * run on. */\n");
    for (const LibraryKernel& k : kernels) {
      absl::StrAppend(&out, "void ", SharedSetNumThreadsName(k.function_name),
                      "(int n);\n");
    }
    absl::StrAppend(&out, "\n", kSharedReleaseComment);
    for (const LibraryKernel& k : kernels) {
      absl::StrAppend(&out, "void ", SharedReleaseScratchName(k.function_name),
                      "(void);\n");
    }
    absl::StrAppend(&out, "\n");
  } else {
    absl::StrAppend(&out, kRuntimeDeclarations);
  }
  absl::StrAppend(
      &out, "#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n#endif  /* ",
      guard, " */\n");
  return out;
}

}  // namespace lathe
