// scry_deps.h: static dependence facts between the sites of one function (the DEPS record of
// docs/trace-format.md), computed by scry_deps.cpp for the pass in scry_pass.cpp.
#ifndef SCRY_DEPS_H
#define SCRY_DEPS_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instruction.h"

#include <cstdint>
#include <vector>

namespace scry {

// One instruction that becomes at least one site, as the dependence analysis sees it.
struct DepSite {
  llvm::Instruction *I = nullptr;
  // Its result is a value other sites may depend on: a load, an atomic read-modify-write or
  // compare-exchange, a call (its return value).
  bool Producer = false;
  llvm::SmallVector<llvm::Value *, 2> Addr; // the pointer(s) it accesses
  llvm::SmallVector<llvm::Value *, 2> Val;  // the value(s) it uses (stored value, RMW operands, memset byte)
  // More control: the site also depends on the branches these blocks are control dependent on,
  // and directly on these branches (a return site: the blocks where its returned value is
  // defined and the branches choosing between those definitions; see returnDefs).
  llvm::SmallVector<llvm::BasicBlock *, 4> CtrlBlocks;
  llvm::SmallVector<llvm::Instruction *, 4> CtrlBranches;
};

// One fact between instructions: From depends on To in the way Kind (SCRY_DEP_*) says. For a
// control fact To is a conditional branch or switch; for value and address facts To is a
// producer of the DepSite list.
struct DepFact {
  llvm::Instruction *From;
  llvm::Instruction *To;
  uint8_t Kind;
};

struct FunctionDeps {
  std::vector<DepFact> Facts;
  // The conditional branches and switches some site (or, transitively, some such branch) is
  // directly control dependent on: each becomes a branch site.
  std::vector<llvm::Instruction *> Branches;
};

// computeDeps computes the facts of one function, on its IR BEFORE instrumentation.
//
// Control: the direct control dependences of Ferrante, Ottenstein and Warren from the
// post-dominator tree: for a CFG edge A->B where B does not post-dominate A, every block on the
// post-dominator-tree path from B up to (not including) A's immediate post-dominator is control
// dependent on A's terminator. Each site, and each branch that becomes a site, gets one fact per
// branch its block depends on; transitive dependence is left to the reader.
//
// Value and address: register-level dependence. The operands of the value or pointer are
// followed backwards through every instruction that is not a producer site (phis, selects, casts,
// arithmetic, compares, GEPs, aggregate and vector operations, calls that are not sites,
// intrinsics), stopping at the producer sites, which are the facts' targets. A load from a
// non-escaping alloca (only loaded from, stored to, or offset by GEPs and casts) is seen through:
// it depends on every value stored anywhere in that alloca (flow- and field-insensitive), which
// is what -O0 code needs, where every local lives in an alloca. Other memory is not followed
// (memory-level dependence is dynamic, from the trace), and neither are calls' bodies (a call's
// result is a producer of its own).
//
// Implicit flow out of loops: when the address or value a site uses, or a branch's condition, is
// computed (as above) from a definition made inside a loop the site or branch is not in, it is
// also control dependent on the branches that decide when that loop is left (those of the loop's
// exiting blocks, and those these blocks are control dependent on) and on the branches the
// definition's block is control dependent on. For a local, only the stores that reach the load
// (no store to the same place in between) are its definitions here. A lookup loop that leaves
// with the index of the slot it found, inlined into its caller or written there, makes the
// caller's read of that slot control dependent on the branches that tested the slots (WITCHER,
// SOSP'21, §4.3.2: the program dependence graph's control dependence of the index's definitions).
FunctionDeps computeDeps(llvm::Function &F, const std::vector<DepSite> &Sites);

// returnDefs finds where a returned value V is decided (implicit flow): the blocks that define
// the values it can be (a phi's incoming blocks, at -O0 the blocks of the stores into the local
// it is loaded from, through casts, selects and arithmetic) and the conditional branches that
// end a phi's incoming blocks. A lookup that returns the index or pointer it found in a loop
// returns it from a block its guard controls: the return site is control dependent on that
// guard through these (DepSite::CtrlBlocks, CtrlBranches).
void returnDefs(llvm::Value *V, llvm::SmallVectorImpl<llvm::BasicBlock *> &Blocks,
                llvm::SmallVectorImpl<llvm::Instruction *> &Branches);

} // namespace scry

#endif // SCRY_DEPS_H
