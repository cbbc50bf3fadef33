// Lowered program -> CUDA C (the mapping is in cuda_codegen.h).
#include "compiler/codegen/cuda/cuda_codegen.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/arith/int_bounds.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/lower/lowered_form.h"
#include "compiler/schedule/analysis/index_digits.h"
#include "compiler/schedule/gpu_tile_choice.h"

namespace lathe::cuda {

// The default GPU schedule's ranked tiles keep a chunk's products within
// one unrolled region so that they are unrolled whole; the two bounds are
// one number kept in two layers.
static_assert(kMaxUnrolledRegion == kMaxTileUnrolledProducts,
              "gpu_tile_choice.h mirrors the unrolled region's bound");

namespace {

bool IsThreadIdx(const ForNode& loop) {
  return loop.for_kind == ForKind::kThreadBinding &&
         loop.thread_tag.rfind("threadIdx.", 0) == 0;
}
bool IsBlockIdx(const ForNode& loop) {
  return loop.for_kind == ForKind::kThreadBinding &&
         loop.thread_tag.rfind("blockIdx.", 0) == 0;
}
int64_t& AxisOf(Dim3& dims, char axis) {
  return axis == 'x' ? dims.x : axis == 'y' ? dims.y : dims.z;
}

absl::StatusOr<std::string> CType(DType dtype) {
  if (dtype == DType::Float32()) return std::string("float");
  if (dtype == DType::Int32()) return std::string("int");
  if (dtype == DType::Int64()) return std::string("long long");
  if (dtype == DType::Int8()) return std::string("signed char");
  if (dtype == DType::Bool()) return std::string("bool");
  return absl::InvalidArgumentError(
      absl::StrCat("cuda: dtype ", dtype.ToString(), " is not supported"));
}

std::string Sanitize(const std::string& name) {
  std::string out;
  for (char c : name) {
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "v_" + out;
  return out;
}

std::string FloatLiteral(double value) {
  if (std::isnan(value)) return "__int_as_float(0x7fffffff)";
  if (std::isinf(value)) {
    return value > 0 ? "__int_as_float(0x7f800000)"
                     : "__int_as_float(0xff800000)";
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", value);
  std::string out = text;
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out + "f";
}

// The buffers a statement reads and writes (nested statements included).
struct Touched {
  std::set<const Buffer*> reads;
  std::set<const Buffer*> writes;
};
void CollectTouched(const StmtNode& stmt, Touched* out) {
  VisitStmts(&stmt, [&](const StmtNode* s) {
    VisitOwnExprs(*s, [&](const Expr& e) {
      std::vector<const ExprNode*> stack = {e.get()};
      while (!stack.empty()) {
        const ExprNode* n = stack.back();
        stack.pop_back();
        if (n->kind == ExprKind::kLoad) out->reads.insert(n->buffer.get());
        for (const Expr& o : n->operands) stack.push_back(o.get());
      }
    });
    if (const auto* store = s->as<StoreNode>())
      out->writes.insert(store->buffer.get());
    return true;
  });
}

// A buffer that several threadIdx loops touch, each thread only its own
// elements: in every access, each index is coef * D(t) + rest with t the
// access's outermost threadIdx loop, the same coef and digit D in every
// access, and rest in [0, coef) (a dimension without t: rest is the index,
// over the whole dimension, within it wherever the program runs the access
// even where its bounds pass it under a guard, as a padded tile's do). The
// digits determine t, so threads own
// disjoint elements, and a thread's share is an array of the coefs' shape
// indexed by the rests (see the header). A rest may also hold whole runs
// of every thread's elements: rest = coef * N * q + low with N the digit's
// values and low in [0, coef) (a register tile in groups, one run of every
// thread apart: gpu_shared_tile.h); the index is then coef * (D + N * q) +
// low, still one thread's, and its place in the share q * coef + low.
struct ThreadPartition {
  std::vector<int64_t> shape;
};

// A rest beyond [0, coef) as the place in the share of its thread: for rest
// = coef * N * q + low (N the values of `digit` of `thread_var`, low in
// [0, coef), q >= 0), q * coef + low; nullopt when the rest is not of that
// form (see ThreadPartition).
std::optional<Expr> GroupedRest(const Expr& rest, int64_t coef,
                                const Digit& digit, const Expr& thread_var,
                                const VarRanges& ranges) {
  int64_t values = digit.b;
  if (values == 0) {
    auto range = ranges.find(thread_var.get());
    if (range == ranges.end()) return std::nullopt;
    values = (range->second.max + digit.a) / digit.a;
  }
  if (values <= 0 || coef > (int64_t{1} << 40) / values) return std::nullopt;
  const int64_t stride = coef * values;
  const Expr low = Simplify(FloorMod(rest, stride), ranges);
  const Expr group = Simplify(FloorDiv(rest, stride), ranges);
  const Interval low_bound = BoundOf(low, ranges);
  const Interval group_bound = BoundOf(group, ranges);
  if (low_bound.min < 0 || low_bound.max >= coef || group_bound.min < 0 ||
      !group_bound.is_bounded() ||
      group_bound.max > (int64_t{1} << 40) / coef) {
    return std::nullopt;
  }
  return Simplify(group * coef + low, ranges);
}

// The rests of `indices` for a partition of `buffer` by `thread_var` of
// `extent` iterations; `digits` and `coefs` are the partition's (filled on
// the first access, compared on the others). Empty when the access does not
// fit.
// `widths`, when given, gets each dimension's share width this access needs
// (the largest seen so far kept).
std::optional<std::vector<Expr>> PartitionRests(
    const Buffer& buffer, const std::vector<Expr>& indices,
    const Expr& thread_var, const VarRanges& ranges,
    std::vector<std::optional<std::pair<int64_t, Digit>>>* parts, bool* first,
    std::vector<int64_t>* widths = nullptr) {
  if (indices.size() != buffer.shape.size()) return std::nullopt;
  if (widths != nullptr) widths->resize(indices.size(), 0);
  std::vector<Expr> rests;
  for (size_t d = 0; d < indices.size(); ++d) {
    Expr index = Simplify(indices[d], ranges);
    Decomposed dec = Decompose(index, thread_var);
    std::optional<std::pair<int64_t, Digit>> part;
    Expr rest = index;
    int64_t width = buffer.shape[d];
    if (dec.form == DigitForm::kDigit) {
      if (!dec.base.same_as(thread_var) || dec.coef <= 0) return std::nullopt;
      part = std::make_pair(dec.coef, dec.digit);
      rest = dec.rest;
      width = dec.coef;
    } else if (dec.form != DigitForm::kAbsent) {
      return std::nullopt;
    }
    if (*first) {
      parts->push_back(part);
    } else if ((*parts)[d].has_value() != part.has_value() ||
               (part.has_value() && (part->first != (*parts)[d]->first ||
                                     !(part->second == (*parts)[d]->second)))) {
      return std::nullopt;
    }
    if (!part.has_value()) {
      // A dimension without the thread: the share holds all of it, indexed
      // as the buffer is, so an access the program makes stays within it
      // (a padded tile's index past it sits under the tile's guard).
      if (widths != nullptr) (*widths)[d] = width;
      rests.push_back(rest);
      continue;
    }
    Interval bound = BoundOf(rest, ranges);
    if (bound.min < 0) return std::nullopt;
    if (bound.max >= width) {
      std::optional<Expr> grouped =
          GroupedRest(rest, part->first, part->second, thread_var, ranges);
      if (!grouped.has_value()) return std::nullopt;
      rest = *grouped;
      bound = BoundOf(rest, ranges);
      width = bound.max + 1;
      // A thread's share of a dimension is no wider than the dimension (so
      // the share's element count stays within the buffer's).
      if (width > buffer.shape[d]) return std::nullopt;
    }
    if (widths != nullptr) (*widths)[d] = std::max((*widths)[d], width);
    rests.push_back(rest);
  }
  *first = false;
  return rests;
}

// The stores a thread's code has once each loop is unrolled to
// `copies(loop)` copies of its body (1: the loop stays a loop), each store
// counted once per copy around it, saturating at `cap`.
int64_t StoresUnrolled(const StmtNode* stmt, int64_t cap,
                       const std::function<int64_t(const ForNode&)>& copies) {
  if (stmt == nullptr) return 0;
  switch (stmt->kind) {
    case StmtKind::kFor: {
      const auto* loop = stmt->as<ForNode>();
      const int64_t body = StoresUnrolled(loop->body.get(), cap, copies);
      if (body == 0) return 0;
      const int64_t n = copies(*loop);
      return n > cap / body ? cap : n * body;
    }
    case StmtKind::kSeq: {
      int64_t total = 0;
      for (const StmtPtr& s : stmt->as<SeqNode>()->stmts)
        total = std::min(cap, total + StoresUnrolled(s.get(), cap, copies));
      return total;
    }
    case StmtKind::kBlock: {
      const auto* block = stmt->as<BlockNode>();
      return std::min(cap, StoresUnrolled(block->init.get(), cap, copies) +
                               StoresUnrolled(block->body.get(), cap, copies));
    }
    case StmtKind::kIf: {
      const auto* branch = stmt->as<IfNode>();
      return std::min(cap,
                      StoresUnrolled(branch->then_case.get(), cap, copies) +
                          StoresUnrolled(branch->else_case.get(), cap, copies));
    }
    case StmtKind::kStore:
      return 1;
  }
  return 0;
}

// StoresUnrolled with every unrolled and vectorized loop unrolled whole, or
// kPartialUnroll times when longer than kMaxFullUnroll.
int64_t UnrolledStores(const StmtNode* stmt, int64_t cap) {
  return StoresUnrolled(stmt, cap, [](const ForNode& loop) -> int64_t {
    if (loop.for_kind != ForKind::kUnrolled &&
        loop.for_kind != ForKind::kVectorized) {
      return 1;
    }
    return loop.extent > kMaxFullUnroll ? kPartialUnroll : loop.extent;
  });
}

class KernelEmitter {
 public:
  KernelEmitter(const Target& target, const std::string& index_type,
                const std::map<const Buffer*, std::string>& global_names)
      : target_(target), index_type_(index_type), names_(global_names) {
    for (const auto& [buffer, name] : names_) used_names_.insert(name);
  }

  // 1. Checks the placement of bound loops and computes the launch.
  absl::Status Plan(const StmtNode& stmt) {
    LATHE_RETURN_IF_ERROR(PlanStmt(stmt, /*above_is_grid_uniform=*/true,
                                   /*under_thread=*/false));
    const GpuLimits& limits = target_.gpu;
    if (kernel_.block.Count() > limits.max_threads_per_block) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cuda: kernel ", kernel_name_, " has ", kernel_.block.Count(),
          " threads per block (", kernel_.block.x, "x", kernel_.block.y, "x",
          kernel_.block.z, "), more than the target's max-threads-per-block ",
          limits.max_threads_per_block));
    }
    if (kernel_.block.x > 1024 || kernel_.block.y > 1024 ||
        kernel_.block.z > 64) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cuda: kernel ", kernel_name_, " has a block of ", kernel_.block.x,
          "x", kernel_.block.y, "x", kernel_.block.z,
          " threads; CUDA allows at most 1024x1024x64"));
    }
    if (kernel_.grid.x > 2147483647 || kernel_.grid.y > 65535 ||
        kernel_.grid.z > 65535) {
      return absl::FailedPreconditionError(
          absl::StrCat("cuda: kernel ", kernel_name_, " has a grid of ",
                       kernel_.grid.x, "x", kernel_.grid.y, "x", kernel_.grid.z,
                       " blocks; CUDA allows at most 2147483647x65535x65535"));
    }
    return absl::OkStatus();
  }

  // 2. The kernel's source.
  absl::StatusOr<std::string> Emit(const StmtNode& stmt,
                                   const std::vector<BufferPtr>& args,
                                   const std::set<const Buffer*>& inputs) {
    std::string body;
    FindHandedDeviceBuffers(stmt, args);
    LATHE_RETURN_IF_ERROR(EmitStmt(stmt, 1, &body));
    if (const int64_t stores = EmittedStores(&stmt, kMaxUnrolledStores + 1);
        stores > kMaxUnrolledStores) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cuda: kernel ", kernel_name_, " unrolls to more than ",
          kMaxUnrolledStores,
          " stores per thread, the limit (NVRTC's compile time grows with "
          "the unrolled code)"));
    }
    if (kernel_.shared_bytes > target_.gpu.max_shared_memory_per_block) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cuda: kernel ", kernel_name_, " uses ", kernel_.shared_bytes,
          " bytes of shared memory, more than the target's "
          "max-shared-memory-per-block ",
          target_.gpu.max_shared_memory_per_block));
    }
    // Device buffers are 16-byte aligned (cuMemAlloc gives 256): said to
    // the compiler, it merges neighbouring accesses into vector loads and
    // stores.
    std::vector<std::string> params;
    std::string prologue;
    for (const BufferPtr& b : args) {
      LATHE_ASSIGN_OR_RETURN(std::string type, CType(b->dtype));
      const std::string qualified =
          absl::StrCat(inputs.count(b.get()) ? "const " : "", type);
      const std::string& name = names_.at(b.get());
      params.push_back(
          absl::StrCat(qualified, "* __restrict__ ", name, "_arg"));
      absl::StrAppend(&prologue, "  ", qualified, "* __restrict__ ", name,
                      " = (", qualified, "*)__builtin_assume_aligned(", name,
                      "_arg, 16);\n");
    }
    return absl::StrCat("extern \"C\" __global__ void __launch_bounds__(",
                        kernel_.block.Count(), ") ", kernel_name_, "(",
                        absl::StrJoin(params, ", "), ") {\n", prologue, body,
                        "}\n");
  }

  CudaKernel& kernel() { return kernel_; }
  void set_name(const std::string& name) {
    kernel_name_ = name;
    kernel_.name = name;
  }

 private:
  absl::Status PlanStmt(const StmtNode& stmt, bool above_is_grid_uniform,
                        bool under_thread) {
    if (const auto* loop = stmt.as<ForNode>()) {
      if (loop->for_kind == ForKind::kParallel) {
        return absl::FailedPreconditionError(
            absl::StrCat("cuda: loop \"", loop->var->name,
                         "\" is parallel; a GPU kernel binds loops to "
                         "blockIdx/threadIdx instead"));
      }
      if (IsBlockIdx(*loop)) {
        if (!above_is_grid_uniform || under_thread) {
          return absl::FailedPreconditionError(absl::StrCat(
              "cuda: loop \"", loop->var->name, "\" bound to ",
              loop->thread_tag,
              " is inside a serial loop, a sequence or a threadIdx loop; "
              "blocks cannot synchronize"));
        }
        int64_t& dim = AxisOf(kernel_.grid, loop->thread_tag.back());
        dim = std::max(dim, loop->extent);
        return PlanStmt(*loop->body, true, under_thread);
      }
      if (IsThreadIdx(*loop)) {
        int64_t& dim = AxisOf(kernel_.block, loop->thread_tag.back());
        dim = std::max(dim, loop->extent);
        return PlanStmt(*loop->body, false, true);
      }
      return PlanStmt(*loop->body, false, under_thread);
    }
    if (const auto* seq = stmt.as<SeqNode>()) {
      for (const StmtPtr& s : seq->stmts) {
        LATHE_RETURN_IF_ERROR(PlanStmt(*s, false, under_thread));
      }
      return absl::OkStatus();
    }
    if (const auto* branch = stmt.as<IfNode>()) {
      LATHE_RETURN_IF_ERROR(
          PlanStmt(*branch->then_case, above_is_grid_uniform, under_thread));
      if (branch->else_case) {
        LATHE_RETURN_IF_ERROR(
            PlanStmt(*branch->else_case, above_is_grid_uniform, under_thread));
      }
      return absl::OkStatus();
    }
    if (const auto* block = stmt.as<BlockNode>()) {
      return PlanStmt(*block->body, above_is_grid_uniform, under_thread);
    }
    return absl::OkStatus();
  }

  static void Indent(int depth, std::string* out) {
    out->append(static_cast<size_t>(depth) * 2, ' ');
  }

  std::string VarName(const Expr& var) {
    auto it = var_names_.find(var.get());
    if (it != var_names_.end()) return it->second;
    std::string name = Sanitize(var->name);
    while (used_names_.count(name)) name += "_";
    used_names_.insert(name);
    var_names_[var.get()] = name;
    return name;
  }

  std::string BufferName(const Buffer* buffer) {
    auto it = names_.find(buffer);
    if (it != names_.end()) return it->second;
    std::string name = Sanitize(buffer->name);
    while (used_names_.count(name)) name += "_";
    used_names_.insert(name);
    names_[buffer] = name;
    return name;
  }

  bool NonNegative(const Expr& e) { return BoundOf(e, ranges_).min >= 0; }

  absl::StatusOr<std::string> EmitExpr(const Expr& e) {
    const ExprNode& n = *e.get();
    auto operand = [&](size_t i) { return EmitExpr(n.operands[i]); };
    auto binary = [&](const char* op) -> absl::StatusOr<std::string> {
      LATHE_ASSIGN_OR_RETURN(std::string a, operand(0));
      LATHE_ASSIGN_OR_RETURN(std::string b, operand(1));
      return absl::StrCat("(", a, " ", op, " ", b, ")");
    };
    auto call2 = [&](const char* fn) -> absl::StatusOr<std::string> {
      LATHE_ASSIGN_OR_RETURN(std::string a, operand(0));
      LATHE_ASSIGN_OR_RETURN(std::string b, operand(1));
      return absl::StrCat(fn, "(", a, ", ", b, ")");
    };
    switch (n.kind) {
      case ExprKind::kIntImm:
        if (n.dtype.is_bool())
          return std::string(n.int_value ? "true" : "false");
        return absl::StrCat(n.int_value);
      case ExprKind::kFloatImm:
        return FloatLiteral(n.float_value);
      case ExprKind::kVar:
        return VarName(e);
      case ExprKind::kAdd:
        return binary("+");
      case ExprKind::kSub:
        return binary("-");
      case ExprKind::kMul:
        return binary("*");
      case ExprKind::kDiv:
        return binary("/");
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod: {
        const bool div = n.kind == ExprKind::kFloorDiv;
        const Expr& b = n.operands[1];
        if (b.is_int_imm() && b.int_value() > 0 && NonNegative(n.operands[0]))
          return binary(div ? "/" : "%");
        return call2(div ? "lathe_floordiv" : "lathe_floormod");
      }
      case ExprKind::kMin:
        return call2(n.dtype.is_float() ? "fminf" : "min");
      case ExprKind::kMax:
        return call2(n.dtype.is_float() ? "fmaxf" : "max");
      case ExprKind::kEq:
        return binary("==");
      case ExprKind::kNe:
        return binary("!=");
      case ExprKind::kLt:
        return binary("<");
      case ExprKind::kLe:
        return binary("<=");
      case ExprKind::kGt:
        return binary(">");
      case ExprKind::kGe:
        return binary(">=");
      case ExprKind::kAnd:
        return binary("&&");
      case ExprKind::kOr:
        return binary("||");
      case ExprKind::kNot: {
        LATHE_ASSIGN_OR_RETURN(std::string a, operand(0));
        return absl::StrCat("(!", a, ")");
      }
      case ExprKind::kSelect: {
        LATHE_ASSIGN_OR_RETURN(std::string c, operand(0));
        LATHE_ASSIGN_OR_RETURN(std::string a, operand(1));
        LATHE_ASSIGN_OR_RETURN(std::string b, operand(2));
        return absl::StrCat("(", c, " ? ", a, " : ", b, ")");
      }
      case ExprKind::kCast: {
        LATHE_ASSIGN_OR_RETURN(std::string a, operand(0));
        LATHE_ASSIGN_OR_RETURN(std::string type, CType(n.dtype));
        return absl::StrCat("((", type, ")", a, ")");
      }
      case ExprKind::kCall: {
        // The IR's functions (compiler/ir/expr.h) on float32: CUDA's math
        // library, with the number of arguments each takes.
        struct FloatFunction {
          const char* cuda;
          size_t arity;
        };
        static const auto* const kFloatFns =
            new std::map<std::string, FloatFunction>{
                {"exp", {"expf", 1}}, {"sqrt", {"sqrtf", 1}},
                {"log", {"logf", 1}}, {"tanh", {"tanhf", 1}},
                {"erf", {"erff", 1}}, {"abs", {"fabsf", 1}},
                {"pow", {"powf", 2}}};
        if (n.dtype.is_float()) {
          auto it = kFloatFns->find(n.name);
          if (it == kFloatFns->end()) {
            return absl::InvalidArgumentError(
                absl::StrCat("cuda: unknown function ", n.name));
          }
          if (n.operands.size() != it->second.arity) {
            return absl::InvalidArgumentError(absl::StrCat(
                "cuda: function ", n.name, " takes ", it->second.arity,
                " arguments, not ", n.operands.size()));
          }
          std::vector<std::string> args;
          for (size_t i = 0; i < n.operands.size(); ++i) {
            LATHE_ASSIGN_OR_RETURN(std::string a, operand(i));
            args.push_back(std::move(a));
          }
          return absl::StrCat(it->second.cuda, "(", absl::StrJoin(args, ", "),
                              ")");
        }
        if (n.name == "abs" && n.operands.size() == 1) {
          LATHE_ASSIGN_OR_RETURN(std::string a, operand(0));
          return absl::StrCat("abs(", a, ")");
        }
        return absl::InvalidArgumentError(
            absl::StrCat("cuda: unknown integer function ", n.name));
      }
      case ExprKind::kLoad: {
        LATHE_ASSIGN_OR_RETURN(std::string index,
                               FlatIndex(*n.buffer, n.operands));
        return absl::StrCat(BufferName(n.buffer.get()), "[", index, "]");
      }
    }
    return absl::InternalError("cuda: unknown expression kind");
  }

  absl::StatusOr<std::string> FlatIndex(const Buffer& buffer,
                                        const std::vector<Expr>& indices) {
    if (partitions_.count(&buffer)) return PartitionedIndex(buffer, indices);
    if (indices.empty()) return std::string("0");
    std::vector<std::string> terms;
    int64_t stride = 1;
    for (size_t d = indices.size(); d-- > 0;) {
      if (indices[d].is_int_imm() && indices[d].int_value() == 0) {
        stride *= buffer.shape[d];
        continue;
      }
      LATHE_ASSIGN_OR_RETURN(std::string i, EmitExpr(indices[d]));
      terms.push_back(stride == 1 ? i : absl::StrCat(i, " * ", stride));
      stride *= buffer.shape[d];
    }
    if (terms.empty()) return std::string("0");
    std::reverse(terms.begin(), terms.end());
    return absl::StrJoin(terms, " + ");
  }

  // Emits `stmts` in order, with barriers between them (see the header).
  absl::Status EmitSequence(const std::vector<const StmtNode*>& stmts,
                            int depth, std::string* out) {
    for (const StmtNode* s : stmts) {
      if (thread_depth_ == 0 && has_threads()) {
        Touched t;
        CollectTouched(*s, &t);
        bool needs = false;
        for (const Buffer* b : t.reads) {
          needs |= pending_writes_.count(b) > 0 || guarded_writes_.count(b) > 0;
        }
        for (const Buffer* b : t.writes) {
          needs |= pending_writes_.count(b) > 0 || pending_reads_.count(b) > 0;
        }
        if (needs) {
          Indent(depth, out);
          out->append("__syncthreads();\n");
          pending_reads_.clear();
          pending_writes_.clear();
          guarded_writes_.clear();
        }
      }
      LATHE_RETURN_IF_ERROR(EmitStmt(*s, depth, out));
      if (thread_depth_ == 0 && has_threads()) {
        Touched t;
        CollectTouched(*s, &t);
        for (const Buffer* b : t.reads)
          if (HandedBetweenThreads(b)) pending_reads_.insert(b);
        for (const Buffer* b : t.writes)
          if (HandedBetweenThreads(b)) pending_writes_.insert(b);
      }
    }
    return absl::OkStatus();
  }

  bool has_threads() const { return kernel_.block.Count() > 1; }

  // Whether threads of a block may hand `buffer`'s elements to each other
  // (so that barriers order their accesses): shared memory, and device
  // buffers in handed_.
  bool HandedBetweenThreads(const Buffer* b) const {
    return shared_.count(b) > 0 || handed_.count(b) > 0;
  }

  // The device buffers among `args` that `kernel` writes under a threadIdx
  // loop and that are not partitioned among the threads: one thread may
  // read what another wrote (a single block's partial sums, its block loop
  // of one iteration gone, are the root's buffer, not a shared one).
  void FindHandedDeviceBuffers(const StmtNode& kernel,
                               const std::vector<BufferPtr>& args) {
    if (!has_threads()) return;
    std::set<const Buffer*> written;
    std::function<void(const StmtNode&, bool)> walk = [&](const StmtNode& s,
                                                          bool threads) {
      if (const auto* loop = s.as<ForNode>()) threads |= IsThreadIdx(*loop);
      if (const auto* store = s.as<StoreNode>(); store != nullptr && threads)
        written.insert(store->buffer.get());
      for (const StmtNode* c : ChildStmts(const_cast<StmtNode*>(&s)))
        walk(*c, threads);
    };
    walk(kernel, false);
    for (const BufferPtr& b : args) {
      if (written.count(b.get()) && !PartitionOf(kernel, b.get()).has_value())
        handed_.insert(b.get());
    }
  }

  std::string FirstThreadCondition() const {
    std::vector<std::string> parts;
    if (kernel_.block.x > 1) parts.push_back("threadIdx.x == 0");
    if (kernel_.block.y > 1) parts.push_back("threadIdx.y == 0");
    if (kernel_.block.z > 1) parts.push_back("threadIdx.z == 0");
    return absl::StrJoin(parts, " && ");
  }

  // Where a buffer allocated at `scope` lives (see the header).
  bool PrivateToEachThread(const BlockNode& scope, const Buffer* buffer) {
    std::set<const ForNode*> loops;
    bool outside = false;
    std::function<void(const StmtNode&, const ForNode*)> walk =
        [&](const StmtNode& s, const ForNode* thread_loop) {
          if (const auto* loop = s.as<ForNode>()) {
            if (thread_loop == nullptr && IsThreadIdx(*loop))
              thread_loop = loop;
          }
          bool touches = false;
          VisitOwnExprs(s, [&](const Expr& e) {
            std::vector<const ExprNode*> stack = {e.get()};
            while (!stack.empty()) {
              const ExprNode* n = stack.back();
              stack.pop_back();
              if (n->kind == ExprKind::kLoad && n->buffer.get() == buffer)
                touches = true;
              for (const Expr& o : n->operands) stack.push_back(o.get());
            }
          });
          if (const auto* store = s.as<StoreNode>())
            touches |= store->buffer.get() == buffer;
          if (touches) {
            if (thread_loop == nullptr)
              outside = true;
            else
              loops.insert(thread_loop);
          }
          for (const StmtNode* c : ChildStmts(const_cast<StmtNode*>(&s)))
            walk(*c, thread_loop);
        };
    walk(*scope.body, nullptr);
    // Under one threadIdx loop: each thread touches its own elements (bind
    // proved it). Outside every threadIdx loop: each thread computes all of
    // it, the same values, in its own copy.
    return loops.size() <= 1 && !(outside && !loops.empty());
  }

  // Whether `buffer`, which only `body` touches (a buffer allocated at a
  // scope outside every threadIdx loop, that scope's body; a device buffer,
  // the kernel), is partitioned among the threads (ThreadPartition).
  std::optional<ThreadPartition> PartitionOf(const StmtNode& body,
                                             const Buffer* buffer) {
    std::vector<std::optional<std::pair<int64_t, Digit>>> parts;
    std::vector<int64_t> widths;
    bool first = true, fits = true;
    const ForNode* axis = nullptr;  // the first thread loop met
    VarRanges ranges = ranges_;
    std::function<void(const StmtNode&, const ForNode*)> walk =
        [&](const StmtNode& s, const ForNode* thread_loop) {
          if (!fits) return;
          if (const auto* loop = s.as<ForNode>()) {
            ranges[loop->var.get()] = Interval::Extent(loop->extent);
            if (thread_loop == nullptr && IsThreadIdx(*loop)) {
              thread_loop = loop;
              if (axis == nullptr) axis = loop;
              if (loop->thread_tag != axis->thread_tag ||
                  loop->extent != axis->extent) {
                fits = false;
                return;
              }
            }
          }
          auto access = [&](const std::vector<Expr>& indices) {
            if (thread_loop == nullptr ||
                !PartitionRests(*buffer, indices, thread_loop->var, ranges,
                                &parts, &first, &widths)
                     .has_value()) {
              fits = false;
            }
          };
          VisitOwnExprs(s, [&](const Expr& e) {
            VisitExpr(e, [&](const Expr& x) {
              if (x.is(ExprKind::kLoad) && x->buffer.get() == buffer)
                access(x->operands);
            });
          });
          if (const auto* store = s.as<StoreNode>()) {
            if (store->buffer.get() == buffer) access(store->indices);
          }
          for (const StmtNode* c : ChildStmts(const_cast<StmtNode*>(&s)))
            walk(*c, thread_loop);
        };
    walk(body, nullptr);
    if (!fits || first || axis == nullptr) return std::nullopt;
    std::vector<Digit> digits;
    ThreadPartition partition;
    for (size_t d = 0; d < parts.size(); ++d) {
      if (parts[d].has_value()) digits.push_back(parts[d]->second);
      partition.shape.push_back(parts[d].has_value() ? widths[d]
                                                     : buffer->shape[d]);
    }
    if (digits.empty() || !DigitsDetermine(digits, axis->extent)) {
      return std::nullopt;
    }
    return partition;
  }

  // A thread's index into its share of a partitioned buffer.
  absl::StatusOr<std::string> PartitionedIndex(
      const Buffer& buffer, const std::vector<Expr>& indices) {
    std::vector<std::optional<std::pair<int64_t, Digit>>> parts;
    bool first = true;
    std::optional<std::vector<Expr>> rests;
    if (outer_thread_var_.defined()) {
      rests = PartitionRests(buffer, indices, outer_thread_var_, ranges_,
                             &parts, &first);
    }
    if (!rests.has_value()) {
      return absl::InternalError(absl::StrCat(
          "cuda: an access to ", buffer.name, " left its thread's share"));
    }
    Buffer share = buffer;
    share.shape = partitions_.at(&buffer).shape;
    return FlatIndex(share, *rests);
  }

  absl::Status EmitStmt(const StmtNode& stmt, int depth, std::string* out) {
    if (const auto* loop = stmt.as<ForNode>())
      return EmitFor(*loop, depth, out);
    if (const auto* seq = stmt.as<SeqNode>()) {
      std::vector<const StmtNode*> stmts;
      for (const StmtPtr& s : seq->stmts) stmts.push_back(s.get());
      return EmitSequence(stmts, depth, out);
    }
    if (const auto* branch = stmt.as<IfNode>()) {
      LATHE_ASSIGN_OR_RETURN(std::string cond, EmitExpr(branch->cond));
      Indent(depth, out);
      absl::StrAppend(out, "if ", cond.front() == '(' ? "" : "(", cond,
                      cond.front() == '(' ? "" : ")", " {\n");
      LATHE_RETURN_IF_ERROR(EmitStmt(*branch->then_case, depth + 1, out));
      if (branch->else_case) {
        Indent(depth, out);
        out->append("} else {\n");
        LATHE_RETURN_IF_ERROR(EmitStmt(*branch->else_case, depth + 1, out));
      }
      Indent(depth, out);
      out->append("}\n");
      return absl::OkStatus();
    }
    if (const auto* store = stmt.as<StoreNode>()) {
      LATHE_ASSIGN_OR_RETURN(std::string index,
                             FlatIndex(*store->buffer, store->indices));
      LATHE_ASSIGN_OR_RETURN(std::string value, EmitExpr(store->value));
      // Outside every threadIdx loop each thread computes the same value;
      // one of them stores it to device memory.
      const bool one_thread = thread_depth_ == 0 && has_threads() &&
                              block_local_.count(store->buffer.get()) == 0;
      Indent(depth, out);
      if (one_thread) {
        absl::StrAppend(out, "if (", FirstThreadCondition(), ") ");
        guarded_writes_.insert(store->buffer.get());
      }
      absl::StrAppend(out, BufferName(store->buffer.get()), "[", index,
                      "] = ", value, ";\n");
      return absl::OkStatus();
    }
    const auto* block = stmt.as<BlockNode>();
    if (block == nullptr || !IsAllocScope(*block)) {
      return absl::InternalError("cuda: the program is not in lowered form");
    }
    Indent(depth, out);
    out->append("{\n");
    for (const BufferPtr& b : block->alloc_buffers) {
      LATHE_ASSIGN_OR_RETURN(std::string type, CType(b->dtype));
      const std::string name = BufferName(b.get());
      const bool per_thread = thread_depth_ > 0 || !has_threads() ||
                              PrivateToEachThread(*block, b.get());
      block_local_.insert(b.get());
      Indent(depth + 1, out);
      std::optional<ThreadPartition> partition;
      if (!per_thread) partition = PartitionOf(*block->body, b.get());
      if (partition.has_value()) {
        int64_t elements = 1;
        for (int64_t e : partition->shape) elements *= e;
        // A share is the thread's registers (kMaxRegistersPerThread is
        // well under kMaxThreadArrayElements).
        if (elements > kMaxRegistersPerThread) {
          return absl::FailedPreconditionError(absl::StrCat(
              "cuda: buffer \"", b->name, "\" (", elements,
              " elements of each thread's share) is held in registers, more "
              "than the ",
              kMaxRegistersPerThread, " registers a thread has"));
        }
        const int64_t block_registers = elements * kernel_.block.Count();
        if (block_registers > target_.gpu.registers_per_block) {
          return absl::FailedPreconditionError(absl::StrCat(
              "cuda: buffer \"", b->name, "\" (", elements,
              " elements of each thread's share, ", kernel_.block.Count(),
              " threads) needs ", block_registers,
              " registers, more than the target's registers-per-block ",
              target_.gpu.registers_per_block));
        }
        partitions_[b.get()] = *partition;
        absl::StrAppend(out, type, " ", name, "[", elements, "];\n");
      } else if (per_thread) {
        if (b->NumElements() > kMaxThreadArrayElements) {
          return absl::FailedPreconditionError(absl::StrCat(
              "cuda: buffer \"", b->name, "\" (", b->NumElements(),
              " elements) is an array of each thread, larger than ",
              kMaxThreadArrayElements, " elements"));
        }
        absl::StrAppend(out, type, " ", name, "[", b->NumElements(), "];\n");
      } else {
        shared_.insert(b.get());
        kernel_.shared_bytes += b->NumElements() * b->dtype.bytes();
        absl::StrAppend(out, "__shared__ __align__(16) ", type, " ", name, "[",
                        b->NumElements(), "];\n");
      }
    }
    LATHE_RETURN_IF_ERROR(EmitStmt(*block->body, depth + 1, out));
    Indent(depth, out);
    out->append("}\n");
    return absl::OkStatus();
  }

  absl::Status EmitFor(const ForNode& loop, int depth, std::string* out) {
    const std::string var = VarName(loop.var);
    ranges_[loop.var.get()] = Interval::Extent(loop.extent);
    if (loop.for_kind == ForKind::kThreadBinding &&
        loop.thread_tag != "vthread") {
      const char axis = loop.thread_tag.back();
      const int64_t dim = IsBlockIdx(loop) ? AxisOf(kernel_.grid, axis)
                                           : AxisOf(kernel_.block, axis);
      Indent(depth, out);
      absl::StrAppend(out, "{\n");
      Indent(depth + 1, out);
      absl::StrAppend(out, "const ", index_type_, " ", var, " = (", index_type_,
                      ")", loop.thread_tag, ";\n");
      const bool guarded = loop.extent < dim;
      if (guarded) {
        Indent(depth + 1, out);
        absl::StrAppend(out, "if (", var, " < ", loop.extent, ") {\n");
      }
      const bool thread = IsThreadIdx(loop);
      const bool outermost_thread = thread && thread_depth_ == 0;
      if (outermost_thread) outer_thread_var_ = loop.var;
      if (thread) ++thread_depth_;
      LATHE_RETURN_IF_ERROR(
          EmitStmt(*loop.body, depth + (guarded ? 2 : 1), out));
      if (thread) --thread_depth_;
      if (outermost_thread) outer_thread_var_ = Expr();
      if (guarded) {
        Indent(depth + 1, out);
        out->append("}\n");
      }
      Indent(depth, out);
      out->append("}\n");
      return absl::OkStatus();
    }
    if (loop.for_kind == ForKind::kUnrolled ||
        loop.for_kind == ForKind::kVectorized) {
      const int64_t factor = UnrollFactor(loop);
      unroll_factors_[&loop] = factor;
      Indent(depth, out);
      out->append(factor >= loop.extent
                      ? std::string("#pragma unroll\n")
                      : absl::StrCat("#pragma unroll ", factor, "\n"));
    }
    Indent(depth, out);
    absl::StrAppend(out, "for (", index_type_, " ", var, " = 0; ", var, " < ",
                    loop.extent, "; ++", var, ") {\n");
    LATHE_RETURN_IF_ERROR(EmitStmt(*loop.body, depth + 1, out));
    if (thread_depth_ == 0 && has_threads()) {
      // The next iteration overwrites memory that this one read.
      Touched t;
      CollectTouched(*loop.body, &t);
      bool writes_shared = false, reads_shared = false, reads_guarded = false;
      for (const Buffer* b : t.writes) writes_shared |= HandedBetweenThreads(b);
      for (const Buffer* b : t.reads) {
        reads_shared |= HandedBetweenThreads(b);
        reads_guarded |= guarded_writes_.count(b) > 0;
      }
      if ((writes_shared && reads_shared) || reads_guarded) {
        Indent(depth + 1, out);
        out->append("__syncthreads();\n");
        pending_reads_.clear();
        pending_writes_.clear();
        guarded_writes_.clear();
      }
    }
    Indent(depth, out);
    out->append("}\n");
    return absl::OkStatus();
  }

  // The stores of the thread's code as emitted: each loop unrolled by the
  // factor EmitFor chose (at most its extent), saturating at `cap`.
  int64_t EmittedStores(const StmtNode* stmt, int64_t cap) const {
    return StoresUnrolled(stmt, cap, [this](const ForNode& loop) -> int64_t {
      const auto factor = unroll_factors_.find(&loop);
      return factor == unroll_factors_.end() ? 1 : factor->second;
    });
  }

  // How many times an unrolled loop is unrolled (see the header): whole,
  // unless it is longer than kMaxFullUnroll (kPartialUnroll), or its
  // unrolled body would pass kMaxUnrolledRegion stores and its variable
  // indexes no array of the thread (the largest divisor of its extent that
  // keeps the region within the bound, 1 at least).
  int64_t UnrollFactor(const ForNode& loop) const {
    if (loop.extent > kMaxFullUnroll) return kPartialUnroll;
    const int64_t body = std::max<int64_t>(
        1, UnrolledStores(loop.body.get(), kMaxUnrolledRegion + 1));
    if (loop.extent * body <= kMaxUnrolledRegion || IndexesThreadArray(loop))
      return loop.extent;
    int64_t factor = 1;
    for (int64_t f = 1; f <= loop.extent && f * body <= kMaxUnrolledRegion;
         ++f) {
      if (loop.extent % f == 0) factor = f;
    }
    return factor;
  }

  // Whether `loop`'s variable indexes an array of the thread below it (a
  // register tile's loop, which must unroll whole for the array to stay in
  // registers).
  bool IndexesThreadArray(const ForNode& loop) const {
    bool found = false;
    auto check = [&](const Buffer* b, const std::vector<Expr>& indices) {
      if (found || !block_local_.count(b) || shared_.count(b)) return;
      for (const Expr& index : indices) found |= UsesVar(index, loop.var);
    };
    VisitStmts(loop.body.get(), [&](const StmtNode* s) {
      if (const auto* store = s->as<StoreNode>())
        check(store->buffer.get(), store->indices);
      VisitOwnExprs(*s, [&](const Expr& e) {
        VisitExpr(e, [&](const Expr& x) {
          if (x.is(ExprKind::kLoad)) check(x->buffer.get(), x->operands);
        });
      });
      return !found;
    });
    return found;
  }

  const Target& target_;
  std::string index_type_;
  std::map<const Buffer*, std::string> names_;
  std::set<std::string> used_names_;
  std::map<const ExprNode*, std::string> var_names_;
  VarRanges ranges_;
  std::string kernel_name_;
  CudaKernel kernel_;
  int thread_depth_ = 0;
  std::set<const Buffer*> shared_;
  // Device buffers that threads of a block hand to each other.
  std::set<const Buffer*> handed_;
  // Buffers that threads hold in shares of their own (ThreadPartition).
  std::map<const Buffer*, ThreadPartition> partitions_;
  // The variable of the outermost threadIdx loop being emitted.
  Expr outer_thread_var_;
  // Device buffers stored by thread 0 alone since the last barrier.
  std::set<const Buffer*> guarded_writes_;
  // Buffers allocated inside the kernel (a thread's or the block's).
  std::set<const Buffer*> block_local_;
  std::map<const ForNode*, int64_t> unroll_factors_;
  std::set<const Buffer*> pending_reads_;
  std::set<const Buffer*> pending_writes_;
};

constexpr char kPrelude[] = R"(// Generated by Lathe's CUDA back end.
__device__ __forceinline__ long long lathe_floordiv(long long a, long long b) {
  long long q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ long long lathe_floormod(long long a, long long b) {
  long long r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
)";

}  // namespace

absl::StatusOr<CudaModule> GenerateCuda(const Program& lowered,
                                        const Target& target) {
  if (!target.IsCuda()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cuda: target \"", target.ToString(), "\" is not a CUDA target"));
  }
  LATHE_RETURN_IF_ERROR(VerifyLowered(lowered));
  CudaModule module;
  std::map<const Buffer*, int> buffer_index;
  std::map<const Buffer*, std::string> names;
  std::set<std::string> used;
  std::vector<BufferPtr> all;
  auto add = [&](const BufferPtr& b, int param_index) -> absl::Status {
    LATHE_RETURN_IF_ERROR(CType(b->dtype).status());
    std::string name = Sanitize(b->name);
    while (used.count(name)) name += "_";
    used.insert(name);
    names[b.get()] = name;
    buffer_index[b.get()] = static_cast<int>(module.buffers.size());
    module.buffers.push_back(
        {b->name, b->NumElements() * b->dtype.bytes(), param_index});
    all.push_back(b);
    return absl::OkStatus();
  };
  const std::vector<BufferPtr> params = lowered.Params();
  for (size_t i = 0; i < params.size(); ++i)
    LATHE_RETURN_IF_ERROR(add(params[i], static_cast<int>(i)));
  for (const BufferPtr& b : lowered.root->alloc_buffers)
    LATHE_RETURN_IF_ERROR(add(b, -1));
  std::set<const Buffer*> inputs;
  for (const BufferPtr& b : lowered.inputs) inputs.insert(b.get());

  // Index arithmetic in int when every buffer fits (see the header).
  int64_t largest = 1;
  VisitStmts(lowered.root.get(), [&](const StmtNode* s) {
    if (const auto* b = s->as<BlockNode>()) {
      for (const BufferPtr& buf : b->alloc_buffers)
        largest = std::max(largest, buf->NumElements());
    }
    return true;
  });
  for (const BufferPtr& b : params)
    largest = std::max(largest, b->NumElements());
  const std::string index_type =
      largest < (int64_t{1} << 31) ? "int" : "long long";

  std::vector<const StmtNode*> top;
  if (const auto* seq = lowered.root->body->as<SeqNode>()) {
    for (const StmtPtr& s : seq->stmts) top.push_back(s.get());
  } else {
    top.push_back(lowered.root->body.get());
  }
  module.source = kPrelude;
  const std::string base = Sanitize(lowered.name);
  for (size_t k = 0; k < top.size(); ++k) {
    KernelEmitter emitter(target, index_type, names);
    emitter.set_name(top.size() == 1 ? base : absl::StrCat(base, "_", k));
    LATHE_RETURN_IF_ERROR(emitter.Plan(*top[k]));
    // The buffers the kernel touches, in the module's order.
    Touched t;
    CollectTouched(*top[k], &t);
    std::vector<BufferPtr> args;
    for (const BufferPtr& b : all) {
      if (t.reads.count(b.get()) || t.writes.count(b.get())) {
        args.push_back(b);
        emitter.kernel().buffer_args.push_back(buffer_index[b.get()]);
      }
    }
    LATHE_ASSIGN_OR_RETURN(std::string source,
                           emitter.Emit(*top[k], args, inputs));
    absl::StrAppend(&module.source, "\n", source);
    module.kernels.push_back(emitter.kernel());
  }
  return module;
}

}  // namespace lathe::cuda
