// The list of instruction kinds (instruction_kind.h). Each kind is defined
// in the file of its primitive, next to the schedule method that records it;
// adding a primitive adds its line to both lists below.
#include "compiler/schedule/instruction_kind.h"

namespace lathe {

// The queries, in schedule.cc.
const InstructionKind& GetBlockInstruction();
const InstructionKind& GetLoopsInstruction();
const InstructionKind& GetProducersInstruction();
const InstructionKind& GetConsumersInstruction();
// The primitives, each in compiler/schedule/primitive/<name>.cc.
const InstructionKind& SplitInstruction();
const InstructionKind& FuseInstruction();
const InstructionKind& ReorderInstruction();
const InstructionKind& ParallelInstruction();
const InstructionKind& VectorizeInstruction();
const InstructionKind& UnrollInstruction();
const InstructionKind& BindInstruction();
const InstructionKind& AnnotateLoopInstruction();   // annotate.cc
const InstructionKind& AnnotateBlockInstruction();  // annotate.cc
const InstructionKind& CacheReadInstruction();
const InstructionKind& CacheWriteInstruction();
const InstructionKind& ComputeAtInstruction();
const InstructionKind& ReverseComputeAtInstruction();
const InstructionKind& ComputeInlineInstruction();
const InstructionKind& ReverseComputeInlineInstruction();
const InstructionKind& DecomposeReductionInstruction();
const InstructionKind& RFactorInstruction();
const InstructionKind& SamplePerfectTileInstruction();      // sampling.cc
const InstructionKind& SampleCategoricalInstruction();      // sampling.cc
const InstructionKind& SampleComputeLocationInstruction();  // sampling.cc
const InstructionKind& CheckProductInstruction();
const InstructionKind& CheckFootprintInstruction();

const std::vector<const InstructionKind*>& InstructionKinds() {
  static const auto* const kinds = new std::vector<const InstructionKind*>{
      &GetBlockInstruction(),
      &GetLoopsInstruction(),
      &GetProducersInstruction(),
      &GetConsumersInstruction(),
      &SplitInstruction(),
      &FuseInstruction(),
      &ReorderInstruction(),
      &ParallelInstruction(),
      &VectorizeInstruction(),
      &UnrollInstruction(),
      &BindInstruction(),
      &AnnotateLoopInstruction(),
      &AnnotateBlockInstruction(),
      &CacheReadInstruction(),
      &CacheWriteInstruction(),
      &ComputeAtInstruction(),
      &ReverseComputeAtInstruction(),
      &ComputeInlineInstruction(),
      &ReverseComputeInlineInstruction(),
      &DecomposeReductionInstruction(),
      &RFactorInstruction(),
      &SamplePerfectTileInstruction(),
      &SampleCategoricalInstruction(),
      &SampleComputeLocationInstruction(),
      &CheckProductInstruction(),
      &CheckFootprintInstruction(),
  };
  return *kinds;
}

}  // namespace lathe
