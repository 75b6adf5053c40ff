//go:build ignore

// (The constraint above keeps `go build`/`go test` from treating this directory's C++ as cgo
// sources; the plugin is built by build.mk.)
//
// scry_deps.cpp: the static dependence facts of the DEPS record (docs/trace-format.md). The
// pass computes, per function and before it instruments it, which sites are control dependent on
// which conditional branches and which sites' values and addresses depend, through registers, on
// the values other sites load or return (scry_deps.h says exactly what is computed).
//
// These are the static half of a program dependence graph. WITCHER (SOSP'21, §4.3.2) builds its
// PDG from register-level dependences found statically and memory-level dependences found in the
// trace (a load reads what a store wrote); Huang's 2023 dissertation on PM bug detection and
// repair (§5.5.1.2 and §5.5.1.3) computes static control dependences per function and hands them
// to the dynamic side as a table indexed by instruction ids. scry does the same: the facts are a
// table of (from site, kind, to site) the runtime writes once per module, and the Go side joins
// them with the trace's loads and stores.

#include "scry_deps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/PostDominators.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

#include "scry_trace_format.h"

#include <algorithm>

using namespace llvm;

namespace scry {

namespace {

// RegDeps answers "which producer sites does this value depend on, through registers and
// non-escaping allocas" for one function. The dependence graph (value -> the values it is
// computed from) may have cycles (loop phis, an alloca stored a value computed from its own
// load), so answers are computed per strongly connected component (Tarjan's algorithm, iterative
// so that long def-use chains cannot exhaust the stack) and memoised: every value is visited once
// per function whatever the number of queries.
//
// A value that depends on more than MaxProducers producers is marked as overflowing and gets no
// facts at all: such a diffuse dependence tells an analysis nothing, and it is what makes the
// closure grow quadratically with the function's size (a loop-carried accumulator, or at -O0 a
// local assigned in many places, depends on every load that ever fed it). The cap bounds both
// the pass's time and memory and the table's size.
class RegDeps {
public:
  static constexpr size_t MaxProducers = 64;

  explicit RegDeps(const DenseSet<Instruction *> &Producers) : IsProducer(Producers) {
    Sets.emplace_back(); // set 0: no dependence
    Sets.emplace_back(); // set 1: overflow (too many to tell)
  }

  // The producers V depends on (V itself when it is one), as a sorted set; empty when there are
  // none or more than MaxProducers.
  const std::vector<Instruction *> &of(Value *V) { return Sets[resolve(V)]; }

  bool producer(Instruction *I) const { return IsProducer.count(I); }

  // The non-escaping local (alloca) L loads from, or null: its value is what the stores into that
  // local (stores) wrote.
  AllocaInst *local(LoadInst *L) {
    auto *A = dyn_cast<AllocaInst>(getUnderlyingObject(L->getPointerOperand()->stripPointerCasts()));
    return A && !alloca(A).Escapes ? A : nullptr;
  }
  const std::vector<StoreInst *> &stores(AllocaInst *A) { return alloca(A).Stores; }

  // The values V is computed from (its operands; for a load of a non-escaping local, the local).
  void successors(Value *V, SmallVectorImpl<Value *> &Out);

private:
  const DenseSet<Instruction *> &IsProducer;
  static constexpr unsigned Overflowed = 1;
  std::vector<std::vector<Instruction *>> Sets; // interned answers
  DenseMap<Value *, unsigned> Memo;             // value -> index in Sets
  DenseMap<Instruction *, unsigned> Single;     // producer -> index of {producer}

  // Non-escaping allocas and the stores into them.
  struct AllocaInfo {
    bool Escapes = false;
    std::vector<StoreInst *> Stores;
  };
  DenseMap<AllocaInst *, AllocaInfo> Allocas;

  // Tarjan state.
  struct Node {
    Value *V;
    unsigned Index, Low;
    bool OnStack;
    SmallVector<Value *, 4> Succ;
  };
  std::vector<Node> Nodes;
  DenseMap<Value *, unsigned> NodeOf;
  std::vector<unsigned> Stack;

  const AllocaInfo &alloca(AllocaInst *A);
  unsigned singleton(Instruction *P);
  unsigned resolve(Value *Root);
  unsigned newNode(Value *V);
  void finish(unsigned Root);
};

// alloca: whether A escapes (has a use other than as the address of a load or store, directly or
// through GEPs and casts; lifetime markers and debug intrinsics are fine), and what is stored in it.
const RegDeps::AllocaInfo &RegDeps::alloca(AllocaInst *A) {
  auto It = Allocas.find(A);
  if (It != Allocas.end())
    return It->second;
  AllocaInfo Info;
  SmallVector<Value *, 8> Work{A};
  SmallPtrSet<Value *, 8> Seen{A};
  while (!Work.empty() && !Info.Escapes) {
    Value *P = Work.pop_back_val();
    for (User *U : P->users()) {
      if (auto *L = dyn_cast<LoadInst>(U)) {
        if (L->getPointerOperand() != P)
          Info.Escapes = true;
      } else if (auto *S = dyn_cast<StoreInst>(U)) {
        if (S->getPointerOperand() != P || S->getValueOperand() == P)
          Info.Escapes = true;
        else
          Info.Stores.push_back(S);
      } else if (isa<GetElementPtrInst>(U) || isa<BitCastInst>(U) || isa<AddrSpaceCastInst>(U)) {
        if (isa<GetElementPtrInst>(U) && cast<GetElementPtrInst>(U)->getPointerOperand() != P)
          Info.Escapes = true;
        else if (Seen.insert(U).second)
          Work.push_back(U);
      } else if (auto *II = dyn_cast<IntrinsicInst>(U)) {
        if (!II->isLifetimeStartOrEnd() && !isa<DbgInfoIntrinsic>(II))
          Info.Escapes = true;
      } else {
        Info.Escapes = true;
      }
    }
  }
  if (Info.Escapes)
    Info.Stores.clear();
  return Allocas[A] = std::move(Info);
}

// successors: the values V is computed from. Only instructions matter (arguments, constants and
// globals depend on no site of this function).
void RegDeps::successors(Value *V, SmallVectorImpl<Value *> &Out) {
  auto add = [&](Value *Op) {
    if (isa<Instruction>(Op))
      Out.push_back(Op);
  };
  if (auto *A = dyn_cast<AllocaInst>(V)) {
    for (StoreInst *S : alloca(A).Stores)
      add(S->getValueOperand());
    return;
  }
  if (auto *L = dyn_cast<LoadInst>(V)) {
    // Not a site: its address is a local or a global. A non-escaping local holds what was stored
    // in it; of other memory only the address computation is followed.
    Value *P = L->getPointerOperand();
    if (auto *A = dyn_cast<AllocaInst>(getUnderlyingObject(P->stripPointerCasts())))
      if (!alloca(A).Escapes)
        Out.push_back(A);
    add(P);
    return;
  }
  if (auto *CB = dyn_cast<CallBase>(V)) {
    // A call that is not a site (an intrinsic, a read-only libc function): its arguments.
    for (Value *Op : CB->args())
      add(Op);
    return;
  }
  if (auto *PN = dyn_cast<PHINode>(V)) {
    for (Value *Op : PN->incoming_values())
      add(Op);
    return;
  }
  if (auto *I = dyn_cast<Instruction>(V))
    for (Value *Op : I->operands())
      add(Op);
}

unsigned RegDeps::singleton(Instruction *P) {
  auto It = Single.find(P);
  if (It != Single.end())
    return It->second;
  Sets.push_back({P});
  return Single[P] = Sets.size() - 1;
}

unsigned RegDeps::newNode(Value *V) {
  unsigned N = Nodes.size();
  Nodes.push_back({V, N, N, true, {}});
  successors(V, Nodes.back().Succ);
  NodeOf[V] = N;
  Stack.push_back(N);
  return N;
}

// finish: Root is the root of a strongly connected component; pops it and gives every member
// the union of the producers its members point to and the answers of the components below.
void RegDeps::finish(unsigned Root) {
  std::vector<unsigned> Members;
  do {
    Members.push_back(Stack.back());
    Stack.pop_back();
  } while (Members.back() != Root);
  std::vector<Instruction *> U;
  unsigned Largest = 0;
  size_t LargestSize = 0, Inputs = 0;
  bool Overflow = false;
  for (unsigned M : Members)
    for (Value *S : Nodes[M].Succ) {
      if (Overflow)
        break;
      unsigned Id;
      auto *SI = cast<Instruction>(S);
      if (IsProducer.count(SI)) {
        Id = singleton(SI);
      } else {
        auto It = Memo.find(S);
        if (It == Memo.end())
          continue; // a member of this component
        Id = It->second;
      }
      if (Id == 0)
        continue;
      if (Id == Overflowed || U.size() + Sets[Id].size() > 4 * MaxProducers) {
        // Overflowing already, or probably soon: settle it exactly only when it may fit.
        if (Id == Overflowed)
          Overflow = true;
        else {
          std::sort(U.begin(), U.end());
          U.erase(std::unique(U.begin(), U.end()), U.end());
          Overflow = U.size() > MaxProducers;
        }
        if (Overflow)
          break;
      }
      ++Inputs;
      if (Sets[Id].size() > LargestSize)
        Largest = Id, LargestSize = Sets[Id].size();
      U.insert(U.end(), Sets[Id].begin(), Sets[Id].end());
    }
  unsigned Id = 0;
  if (Overflow) {
    Id = Overflowed;
  } else if (Inputs == 1) {
    Id = Largest;
  } else if (!U.empty()) {
    std::sort(U.begin(), U.end());
    U.erase(std::unique(U.begin(), U.end()), U.end());
    if (U.size() > MaxProducers) {
      Id = Overflowed;
    } else if (U.size() == LargestSize) {
      Id = Largest; // the union adds nothing to its largest input: share it
    } else {
      Sets.push_back(std::move(U));
      Id = Sets.size() - 1;
    }
  }
  for (unsigned M : Members) {
    Memo[Nodes[M].V] = Id;
    Nodes[M].OnStack = false;
    Nodes[M].Succ.clear();
  }
}

unsigned RegDeps::resolve(Value *Root) {
  auto *RI = dyn_cast<Instruction>(Root);
  if (!RI)
    return 0;
  if (IsProducer.count(RI))
    return singleton(RI);
  auto It = Memo.find(Root);
  if (It != Memo.end())
    return It->second;
  struct Frame {
    unsigned N, Next;
  };
  std::vector<Frame> Calls{{newNode(Root), 0}};
  while (!Calls.empty()) {
    Frame &F = Calls.back();
    unsigned V = F.N;
    if (F.Next < Nodes[V].Succ.size()) {
      Value *W = Nodes[V].Succ[F.Next++];
      if (IsProducer.count(cast<Instruction>(W)) || Memo.count(W))
        continue;
      auto NI = NodeOf.find(W);
      if (NI == NodeOf.end()) {
        unsigned N = newNode(W); // may reallocate Nodes: F and V stay valid (indices)
        Calls.push_back({N, 0});
      } else if (Nodes[NI->second].OnStack) {
        Nodes[V].Low = std::min(Nodes[V].Low, Nodes[NI->second].Index);
      }
      continue;
    }
    Calls.pop_back();
    if (!Calls.empty()) {
      unsigned P = Calls.back().N;
      Nodes[P].Low = std::min(Nodes[P].Low, Nodes[V].Low);
    }
    if (Nodes[V].Low == Nodes[V].Index)
      finish(V);
  }
  return Memo[Root];
}

// decides reports whether terminator T chooses between successors: a conditional branch or a
// switch.
bool decides(Instruction *T) {
  if (auto *BI = dyn_cast<BranchInst>(T))
    return BI->isConditional();
  return isa<SwitchInst>(T);
}

// LoopFlow answers "which branches decide the value V has at instruction At because V, or a value
// it is computed from, was defined in a loop that At is not in" (implicit flow out of a loop): a
// lookup that scans a bucket and leaves the loop with the index of the slot it found, inlined
// into its caller or written there, hands the caller a value that no load's data flows into, yet
// which slot the caller then reads was decided by the loads the loop's exit branches test.
//
// The definitions of V are those RegDeps follows (through registers and non-escaping locals,
// stopping at producer sites, which are definitions of their own), except that a load of a local
// is defined only by the stores into it that reach the load (a path with no store to the same
// place in between), not by every store into the local. For each definition D made in a loop L
// that does not contain At (and each loop around L that does not), the value depends on when L
// was left and on whether D ran in the iteration that left it: the exiting blocks of L (their
// conditional branches, and the branches they are control dependent on) and D's block (the
// branches it is control dependent on). These are the control dependences of D that WITCHER's
// program dependence graph (SOSP'21, §4.3.2) carries to every use of D's value; a use inside L
// needs none of them (it runs in L's iterations, under L's own branches), and the branches of D's
// block alone would miss the exit branches, which decide the iteration whose D leaves L.
class LoopFlow {
public:
  // MaxVisited bounds the values visited per query (as returnDefs does).
  static constexpr size_t MaxVisited = 256;

  LoopFlow(Function &F, RegDeps &Reg) : DT(F), LI(DT), Reg(Reg) {}

  // none reports whether the function has no loop (no query can find anything).
  bool none() const { return LI.empty(); }

  // decide adds to Blocks the blocks whose control dependences decide V at At, and to Branches
  // the branches that decide it directly.
  void decide(Value *V, Instruction *At, SmallSetVector<BasicBlock *, 8> &Blocks,
              SmallSetVector<Instruction *, 8> &Branches) {
    BasicBlock *AtB = At->getParent();
    SmallPtrSet<Loop *, 4> Left;
    auto def = [&](Instruction *D) {
      for (Loop *L = LI.getLoopFor(D->getParent()); L && !L->contains(AtB); L = L->getParentLoop()) {
        if (Left.insert(L).second) {
          SmallVector<BasicBlock *, 4> Exiting;
          L->getExitingBlocks(Exiting);
          for (BasicBlock *E : Exiting) {
            Blocks.insert(E);
            if (decides(E->getTerminator()))
              Branches.insert(E->getTerminator());
          }
        }
        Blocks.insert(D->getParent());
      }
    };
    SmallPtrSet<Value *, 32> Seen;
    SmallVector<Value *, 16> Work{V};
    SmallVector<Value *, 4> Succ;
    while (!Work.empty() && Seen.size() < MaxVisited) {
      auto *I = dyn_cast<Instruction>(Work.pop_back_val());
      if (!I || !Seen.insert(I).second)
        continue;
      def(I);
      if (Reg.producer(I))
        continue;
      if (auto *Ld = dyn_cast<LoadInst>(I))
        if (AllocaInst *A = Reg.local(Ld)) {
          for (StoreInst *St : Reg.stores(A))
            if (reaches(St, Ld)) {
              def(St);
              Work.push_back(St->getValueOperand());
            }
          continue;
        }
      Succ.clear();
      Reg.successors(I, Succ);
      Work.append(Succ.begin(), Succ.end());
    }
  }

private:
  DominatorTree DT;
  LoopInfo LI;
  RegDeps &Reg;
  // The blocks a store into a local reaches the entry of with no store to the same place in
  // between, by store (memoised).
  DenseMap<StoreInst *, DenseSet<BasicBlock *>> LiveIn;

  // samePlace reports whether two pointers into a local name the same bytes for sure: the same
  // value, or GEPs of the same base with the same constant indices (-O0 code computes a field's
  // address anew at every access).
  static bool samePlace(Value *P, Value *Q) {
    P = P->stripPointerCasts(), Q = Q->stripPointerCasts();
    if (P == Q)
      return true;
    auto *G = dyn_cast<GetElementPtrInst>(P), *H = dyn_cast<GetElementPtrInst>(Q);
    if (!G || !H || G->getNumOperands() != H->getNumOperands() || !G->hasAllConstantIndices() ||
        G->getSourceElementType() != H->getSourceElementType())
      return false;
    for (unsigned K = 0; K < G->getNumOperands(); ++K)
      if (G->getOperand(K) != H->getOperand(K))
        return false;
    return true;
  }

  // kills: the first instruction in [From, To) of one block that stores to St's place, or null.
  static StoreInst *kills(StoreInst *St, BasicBlock::iterator From, BasicBlock::iterator To) {
    for (auto It = From; It != To; ++It)
      if (auto *S = dyn_cast<StoreInst>(&*It))
        if (samePlace(S->getPointerOperand(), St->getPointerOperand()))
          return S;
    return nullptr;
  }

  // reaches reports whether what St stored may be what Ld loads: a path from St to Ld with no
  // store to St's place in between.
  bool reaches(StoreInst *St, LoadInst *Ld) {
    BasicBlock *SB = St->getParent(), *LB = Ld->getParent();
    if (SB == LB && St->comesBefore(Ld))
      return !kills(St, std::next(St->getIterator()), Ld->getIterator());
    auto It = LiveIn.find(St);
    if (It == LiveIn.end()) {
      DenseSet<BasicBlock *> &In = LiveIn[St];
      SmallVector<BasicBlock *, 16> Work;
      if (!kills(St, std::next(St->getIterator()), SB->end()))
        Work.append(succ_begin(SB), succ_end(SB));
      while (!Work.empty()) {
        BasicBlock *B = Work.pop_back_val();
        if (!In.insert(B).second || kills(St, B->begin(), B->end()))
          continue;
        Work.append(succ_begin(B), succ_end(B));
      }
      It = LiveIn.find(St);
    }
    return It->second.count(LB) && !kills(St, LB->begin(), Ld->getIterator());
  }
};

// controlDeps: for every block, the conditional branches and switches it is directly control
// dependent on (Ferrante, Ottenstein and Warren, from the post-dominator tree).
DenseMap<BasicBlock *, SmallVector<Instruction *, 2>> controlDeps(Function &F) {
  DenseMap<BasicBlock *, SmallVector<Instruction *, 2>> CD;
  PostDominatorTree PDT(F);
  for (BasicBlock &A : F) {
    Instruction *T = A.getTerminator();
    if (!T)
      continue;
    if (auto *Br = dyn_cast<BranchInst>(T)) {
      if (!Br->isConditional())
        continue;
    } else if (!isa<SwitchInst>(T)) {
      continue;
    }
    DomTreeNode *NA = PDT.getNode(&A);
    if (!NA)
      continue;
    DomTreeNode *Stop = NA->getIDom();
    SmallPtrSet<BasicBlock *, 4> Done;
    for (BasicBlock *B : successors(&A)) {
      if (!Done.insert(B).second || PDT.dominates(B, &A))
        continue;
      for (DomTreeNode *N = PDT.getNode(B); N && N != Stop && N->getBlock(); N = N->getIDom()) {
        auto &L = CD[N->getBlock()];
        if (L.empty() || L.back() != T)
          L.push_back(T);
      }
    }
  }
  return CD;
}

} // namespace

FunctionDeps computeDeps(Function &F, const std::vector<DepSite> &Sites) {
  FunctionDeps Out;
  if (Sites.empty())
    return Out;
  DenseSet<Instruction *> Producers;
  for (const DepSite &S : Sites)
    if (S.Producer && !S.I->getType()->isVoidTy())
      Producers.insert(S.I);
  RegDeps Reg(Producers);
  auto data = [&](Instruction *From, ArrayRef<Value *> Vals, uint8_t Kind) {
    for (Value *V : Vals)
      for (Instruction *P : Reg.of(V))
        Out.Facts.push_back({From, P, Kind});
  };
  auto CD = controlDeps(F);
  DenseSet<Instruction *> IsBranch;
  auto branch = [&](Instruction *From, Instruction *T) {
    Out.Facts.push_back({From, T, SCRY_DEP_CONTROL});
    if (IsBranch.insert(T).second)
      Out.Branches.push_back(T);
  };
  auto controlIn = [&](Instruction *From, BasicBlock *BB) {
    auto It = CD.find(BB);
    if (It == CD.end())
      return;
    for (Instruction *T : It->second)
      branch(From, T);
  };
  auto control = [&](Instruction *From) { controlIn(From, From->getParent()); };
  // Implicit flow out of loops (LoopFlow): From is control dependent on the branches that decide
  // the values it uses, beyond those of its own block.
  LoopFlow Flow(F, Reg);
  auto implicit = [&](Instruction *From, ArrayRef<Value *> Vals) {
    if (Flow.none())
      return;
    SmallSetVector<BasicBlock *, 8> Blocks;
    SmallSetVector<Instruction *, 8> Ts;
    for (Value *V : Vals)
      Flow.decide(V, From, Blocks, Ts);
    for (BasicBlock *BB : Blocks) {
      auto It = CD.find(BB);
      if (It != CD.end())
        Ts.insert(It->second.begin(), It->second.end());
    }
    auto Own = CD.find(From->getParent());
    for (Instruction *T : Ts)
      if (Own == CD.end() || !is_contained(Own->second, T))
        branch(From, T);
  };
  for (const DepSite &S : Sites) {
    data(S.I, S.Addr, SCRY_DEP_ADDRESS);
    data(S.I, S.Val, SCRY_DEP_VALUE);
    control(S.I);
    for (BasicBlock *BB : S.CtrlBlocks)
      if (BB != S.I->getParent())
        controlIn(S.I, BB);
    for (Instruction *T : S.CtrlBranches)
      branch(S.I, T);
    SmallVector<Value *, 4> Uses(S.Addr.begin(), S.Addr.end());
    Uses.append(S.Val.begin(), S.Val.end());
    implicit(S.I, Uses);
  }
  // The branches found so far are sites too: their own control dependences and conditions.
  for (size_t K = 0; K < Out.Branches.size(); ++K) {
    Instruction *T = Out.Branches[K];
    control(T);
    Value *Cond = isa<BranchInst>(T) ? cast<BranchInst>(T)->getCondition() : cast<SwitchInst>(T)->getCondition();
    data(T, {Cond}, SCRY_DEP_VALUE);
    implicit(T, {Cond});
  }
  return Out;
}

void returnDefs(Value *V, SmallVectorImpl<BasicBlock *> &Blocks, SmallVectorImpl<Instruction *> &Branches) {
  SmallPtrSet<Value *, 32> Seen;
  SmallVector<Value *, 16> Work{V};
  while (!Work.empty() && Seen.size() < 256) {
    Value *X = Work.pop_back_val();
    if (!Seen.insert(X).second)
      continue;
    if (auto *PN = dyn_cast<PHINode>(X)) {
      for (unsigned K = 0; K < PN->getNumIncomingValues(); ++K) {
        BasicBlock *In = PN->getIncomingBlock(K);
        Blocks.push_back(In);
        if (decides(In->getTerminator()))
          Branches.push_back(In->getTerminator());
        Work.push_back(PN->getIncomingValue(K));
      }
    } else if (auto *SI = dyn_cast<SelectInst>(X)) {
      Work.push_back(SI->getTrueValue());
      Work.push_back(SI->getFalseValue());
    } else if (auto *LI = dyn_cast<LoadInst>(X)) {
      // A local (-O0): every store into it is a definition.
      auto *A = dyn_cast<AllocaInst>(getUnderlyingObject(LI->getPointerOperand()->stripPointerCasts()));
      if (!A)
        continue;
      for (User *U : A->users())
        if (auto *St = dyn_cast<StoreInst>(U))
          if (St->getPointerOperand()->stripPointerCasts() == A) {
            Blocks.push_back(St->getParent());
            Work.push_back(St->getValueOperand());
          }
    } else if (auto *C = dyn_cast<CastInst>(X)) {
      Work.push_back(C->getOperand(0));
    } else if (auto *BO = dyn_cast<BinaryOperator>(X)) {
      Work.push_back(BO->getOperand(0));
      Work.push_back(BO->getOperand(1));
    }
  }
}

} // namespace scry
