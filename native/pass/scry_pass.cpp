//go:build ignore

// (The constraint above keeps `go build`/`go test` from treating this directory's C++ as cgo
// sources; the plugin is built by build.mk.)
//
// scry_pass.cpp: the scry LLVM pass plugin (new pass manager). It instruments a module so that,
// linked with the scry runtime (native/runtime/), the program writes a trace of everything that changes
// or orders persistent-memory (PM) state. The callbacks and their arguments are the contract in
// native/include/scry_abi.h; the site table is SCRY_SITE_* of native/include/scry_trace_format.h.
//
// Which instructions matter follows AGAMOTTO (OSDI'20) §4.1 ("PM Model and PM State
// Tracking") and the Px86 model (WITCHER (SOSP'21) §4.4.1): stores make a cache line dirty,
// non-temporal stores bypass the cache but need a fence, clflushopt/clwb start a write-back that a
// fence (sfence, mfence, a locked instruction) completes, clflush is a flush ordered by itself.
// Loads are traced too (invariant inference), and calls for call stacks, library semantics
// (PMDK, mmap) and writes made by code scry did not instrument.
//
// Besides the sites it instruments, the pass records static dependence facts between them
// (scry_deps.cpp): which sites are control dependent on which conditional branches (these become
// sites of kind "branch", which never call the runtime) and which sites' values and addresses
// depend, through registers, on the values loaded or returned at other sites. The runtime writes
// them as a DEPS record after the module's SITES.
//
// The pass runs as a module pass at the end of the optimization pipeline (OptimizerLastEP), so
// -O2 code is instrumented as optimized; it also runs at -O0 (isRequired).

#include "scry_pass.h"
#include "scry_abi.h"
#include "scry_deps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include "scry_trace_format.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace llvm;

// Counters of what the pass instrumented and what it left alone. They are LLVM statistics, so a
// clang built with assertions prints them with `-mllvm -stats`; Debian's clang is built without
// statistics, so `-mllvm -scry-stats` prints them too (the plugin must be loaded early for clang
// to accept the option: `scry cc` passes -fplugin as well as -fpass-plugin).
//
// SCRY_STATS lists every counter once, as X(variable, description): the declarations and the
// printed list below are both expanded from it, so a counter cannot be declared and not printed.
#define SCRY_STATS(X)                                                                                \
  X(NumFunctions, "functions instrumented")                                                        \
  X(NumLoads, "loads instrumented (behind the PM hull test)")                                      \
  X(NumStores, "stores instrumented (behind the PM hull test)")                                    \
  X(NumNTStores, "non-temporal stores instrumented")                                               \
  X(NumRMWs, "atomic read-modify-writes instrumented")                                             \
  X(NumFlushes, "flushes instrumented (intrinsics and inline assembly)")                           \
  X(NumFences, "fences instrumented (intrinsics, inline assembly, fence instructions)")            \
  X(NumMemOps, "mem intrinsics instrumented (memcpy, memmove, memset)")                            \
  X(NumCalls, "other calls given a call-stack frame")                                              \
  X(NumHooked, "library calls hooked (scry_hooks.def)")                                            \
  X(NumHookMismatch, "library calls not hooked: the callee's type is not scry_hooks.def's")        \
  X(NumExternal, "calls into uninstrumented code watched for PM writes")                           \
  X(NumSkippedAccesses, "accesses and mem intrinsics skipped: provably to the stack or a global")  \
  X(NumSkippedCalls, "calls skipped: intrinsics, read-only libc, C++ exception runtime, musttail") \
  X(NumBranches, "branch sites (static control dependence)")                                       \
  X(NumInlined, "inlined-call sites (the inlined-at chains of other sites)")                       \
  X(NumDeps, "static dependence facts")
#define SCRY_STAT_DECLARE(Var, Desc) static TrackingStatistic Var("scry", #Var, Desc);
SCRY_STATS(SCRY_STAT_DECLARE)
#undef SCRY_STAT_DECLARE

static cl::opt<bool> PrintStats("scry-stats",
                                cl::desc("print scry's instrumentation counters to stderr after each module"));

static void printStats(StringRef Module) {
#define SCRY_STAT_REF(Var, Desc) &Var,
  const TrackingStatistic *All[] = {SCRY_STATS(SCRY_STAT_REF)};
#undef SCRY_STAT_REF
  errs() << "scry: instrumentation statistics (" << Module << ")\n";
  for (const TrackingStatistic *S : All)
    errs() << format("%10u scry - %s\n", S->getValue(), S->getDesc());
}

namespace scry {

namespace {

// libc functions that never write memory a program could map as PM (or only write what their
// caller owns on the stack): calls to them get neither external-write tracking nor a call-stack
// frame, which keeps common string/IO code cheap. The ones whose reads scry records (strcmp,
// memcmp, strlen, printf, ...) or whose output it records (putchar, fputc, putc, fwrite: what
// a compiler makes of a printf of a constant string) are hooks of scry_hooks.def instead; a
// name in both lists would never reach its hook.
const char *const ReadOnlyLibc[] = {
    "strcasecmp", "strncasecmp", "strchr", "strrchr", "strstr",   "memchr",  "strspn",
    "strcspn",    "atoi",        "atol",   "atoll",   "strtol",   "strtoul", "strtoll",
    "strtoull",   "strtod",      "abs",    "labs",    "rand",     "srand",   "time",
    "fflush",     "perror",      "free",   "isatty",  "__assert_fail"};

bool startsWith(StringRef S, StringRef P) { return S.size() >= P.size() && S.substr(0, P.size()) == P; }

} // namespace

bool isReadOnlyLibc(StringRef Name) {
  for (const char *H : ReadOnlyLibc)
    if (Name == H)
      return true;
  return false;
}

// isClientRequestAsm: Valgrind's client request on amd64 as valgrind.h writes it
// (VALGRIND_DO_CLIENT_REQUEST_EXPR): the "special instruction preamble", rotates of %rdi by 3, 13,
// 61 and 51 bits (128 in all, so a no-op when not under Valgrind), then `xchgq %rbx,%rbx`, with
// the request array's address in %rax and the default result in %rdx, which is also the result
// ("={dx},{ax},0"). clang-14 and clang-16 emit it so for C and C++ at -O0 and -O2. The other
// special instructions (`xchgq %rcx,%rcx`, `%rdx,%rdx`, `%rdi,%rdi`) are not requests.
bool isClientRequestAsm(StringRef AsmStr, StringRef Constraints) {
  std::string S; // the statements with white space removed
  for (char C : AsmStr)
    if (C != ' ' && C != '\t' && C != '\n')
      S += C;
  return S == "rolq$$3,%rdi;rolq$$13,%rdirolq$$61,%rdi;rolq$$51,%rdixchgq%rbx,%rbx" &&
         startsWith(Constraints, "={dx},{ax},0,");
}

// parseAsm splits an inline-assembly string into the PM operations it performs, in textual order.
// Statements are separated by ';' or newlines. Old toolchains spell clflushopt as
// ".byte 0x66; clflush" and clwb as ".byte 0x66; xsaveopt" (PMDK, research code): the 0x66 prefix
// carries over to the next statement. `OperandRef` is the asm operand number a flush names ($N or
// ${N:mod}), or -1 when it names none (then the first pointer argument is used).
std::vector<AsmOp> parseAsm(StringRef AsmStr) {
  std::vector<AsmOp> Ops;
  std::string S = AsmStr.lower();
  bool Prefix66 = false;
  size_t Pos = 0;
  while (Pos <= S.size()) {
    size_t End = S.find_first_of(";\n", Pos);
    if (End == std::string::npos)
      End = S.size();
    StringRef Stmt = StringRef(S).slice(Pos, End).trim();
    Pos = End + 1;
    if (Stmt.empty())
      continue;
    if (startsWith(Stmt, ".byte")) {
      // ".byte 0x66" alone is the operand-size prefix of the next instruction.
      Prefix66 = Stmt.contains("0x66");
      continue;
    }
    bool P66 = Prefix66;
    Prefix66 = false;
    AsmOp Op;
    // Operand reference: the first "$N" or "${N" in the statement ("$$" is a literal dollar).
    for (size_t I = 0; I + 1 < Stmt.size(); ++I) {
      if (Stmt[I] != '$')
        continue;
      if (Stmt[I + 1] == '$') {
        ++I;
        continue;
      }
      size_t J = I + 1;
      if (Stmt[J] == '{')
        ++J;
      unsigned N = 0;
      bool Any = false;
      while (J < Stmt.size() && Stmt[J] >= '0' && Stmt[J] <= '9') {
        N = N * 10 + (Stmt[J] - '0');
        ++J;
        Any = true;
      }
      if (Any) {
        Op.OperandRef = (int)N;
        break;
      }
    }
    if (Stmt.contains("clflushopt")) {
      Op.Kind = AsmOp::Flush, Op.Arg = SCRY_FLUSH_CLFLUSHOPT;
    } else if (Stmt.contains("clwb")) {
      Op.Kind = AsmOp::Flush, Op.Arg = SCRY_FLUSH_CLWB;
    } else if (Stmt.contains("clflush")) {
      Op.Kind = AsmOp::Flush, Op.Arg = P66 ? SCRY_FLUSH_CLFLUSHOPT : SCRY_FLUSH_CLFLUSH;
    } else if (Stmt.contains("xsaveopt") && P66) {
      Op.Kind = AsmOp::Flush, Op.Arg = SCRY_FLUSH_CLWB;
    } else if (Stmt.contains("sfence")) {
      Op.Kind = AsmOp::Fence, Op.Arg = SCRY_FENCE_SFENCE;
    } else if (Stmt.contains("mfence")) {
      Op.Kind = AsmOp::Fence, Op.Arg = SCRY_FENCE_MFENCE;
    } else if (startsWith(Stmt, "dc ") || startsWith(Stmt, "dc\t")) {
      // Arm data-cache maintenance by address ("dc cvap, $0"): the cleans that reach memory.
      if (Stmt.contains("cvadp"))
        Op.Kind = AsmOp::Flush, Op.Arg = SCRY_FLUSH_DC_CVADP;
      else if (Stmt.contains("cvap"))
        Op.Kind = AsmOp::Flush, Op.Arg = SCRY_FLUSH_DC_CVAP;
      else if (Stmt.contains("civac"))
        Op.Kind = AsmOp::Flush, Op.Arg = SCRY_FLUSH_DC_CIVAC;
      else if (Stmt.contains("cvac"))
        Op.Kind = AsmOp::Flush, Op.Arg = SCRY_FLUSH_DC_CVAC;
      else
        continue; // cvau, ivac, zva, ...: not a clean to memory
    } else if (startsWith(Stmt, "dsb") || startsWith(Stmt, "dmb")) {
      // Arm barriers; the load-only options (ld, ishld, oshld, nshld) order no cleans.
      if (Stmt.size() >= 2 && Stmt.substr(Stmt.size() - 2) == "ld")
        continue;
      Op.Kind = AsmOp::Fence, Op.Arg = startsWith(Stmt, "dsb") ? SCRY_FENCE_DSB : SCRY_FENCE_DMB;
    } else if (startsWith(Stmt, "lock") || startsWith(Stmt, "xchg")) {
      // "lock; addq ..." or "lock addq ...", and xchg with memory (implicitly locked).
      Op.Kind = AsmOp::Locked, Op.Arg = SCRY_FENCE_LOCKED;
    } else if (startsWith(Stmt, "movnt")) {
      Op.Kind = AsmOp::NTStore;
    } else {
      continue;
    }
    Ops.push_back(Op);
  }
  return Ops;
}

namespace {

// One static site of the module's table (struct scry_site).
struct SiteRec {
  uint32_t Kind, Line, Column;
  uint32_t InlinedAt = 0; // 1 + index of the SCRY_SITE_INLINED site of the inlined call, or 0
  uint32_t Access = SCRY_ACCESS_UNKNOWN; // SiteAccess, packed above Kind in the table (scry_abi.h)
  std::string Function, File, Callee;
};

// SiteAccessShift is SCRY_SITE_ACCESS_SHIFT of native/include/scry_abi.h (the C header the pass
// does not include): a site's SiteAccess sits above its kind's byte in struct scry_site.kind.
constexpr uint32_t SiteAccessShift = 8;

// accessOfOrdering: the SiteAccess of an atomic memory order (LLVM has no consume: clang emits
// acquire for it; unordered, weaker than monotonic, counts as relaxed).
uint32_t accessOfOrdering(AtomicOrdering O) {
  switch (O) {
  case AtomicOrdering::NotAtomic: return SCRY_ACCESS_PLAIN;
  case AtomicOrdering::Unordered:
  case AtomicOrdering::Monotonic: return SCRY_ACCESS_RELAXED;
  case AtomicOrdering::Acquire: return SCRY_ACCESS_ACQUIRE;
  case AtomicOrdering::Release: return SCRY_ACCESS_RELEASE;
  case AtomicOrdering::AcquireRelease: return SCRY_ACCESS_ACQ_REL;
  case AtomicOrdering::SequentiallyConsistent: return SCRY_ACCESS_SEQ_CST;
  }
  return SCRY_ACCESS_UNKNOWN;
}

// accessOf: how instruction I accesses memory (SiteAccess): loads and stores by their ordering
// (volatile when not atomic and volatile), read-modify-writes and compare-exchanges by their
// (success) ordering, mem intrinsics plain or volatile; unknown for anything else (calls, inline
// assembly: the caller sets a locked instruction's).
uint32_t accessOf(const Instruction *I) {
  auto plainOr = [](bool Volatile) { return Volatile ? SCRY_ACCESS_VOLATILE : SCRY_ACCESS_PLAIN; };
  if (auto *LI = dyn_cast<LoadInst>(I))
    return LI->isAtomic() ? accessOfOrdering(LI->getOrdering()) : plainOr(LI->isVolatile());
  if (auto *SI = dyn_cast<StoreInst>(I))
    return SI->isAtomic() ? accessOfOrdering(SI->getOrdering()) : plainOr(SI->isVolatile());
  if (auto *RI = dyn_cast<AtomicRMWInst>(I))
    return accessOfOrdering(RI->getOrdering());
  if (auto *CI = dyn_cast<AtomicCmpXchgInst>(I))
    return accessOfOrdering(CI->getSuccessOrdering());
  if (auto *MI = dyn_cast<MemIntrinsic>(I))
    return plainOr(MI->isVolatile());
  return SCRY_ACCESS_UNKNOWN;
}

// What an instruction gets.
// MemOp is a mem intrinsic that may write PM; MemLoad a memcpy or memmove into a local or a
// global from memory that may be PM, whose only PM access is the load of its source.
enum class What { Load, Store, NTStore, Rmw, Fence, MemOp, MemLoad, FlushIntr, FenceIntr, NTIntr, Asm, ClientRequest, Call, Ret };

struct Item {
  What W;
  Instruction *I;
  uint32_t Arg; // flush/fence kind for intrinsics and fences
};

class Instrumenter {
public:
  explicit Instrumenter(Module &M)
      : M(M), DL(M.getDataLayout()), Ctx(M.getContext()), I8(Type::getInt8Ty(Ctx)),
        I32(Type::getInt32Ty(Ctx)), I64(Type::getInt64Ty(Ctx)), IntPtr(DL.getIntPtrType(Ctx)),
        I8Ptr(PointerType::getUnqual(I8)), VoidTy(Type::getVoidTy(Ctx)),
        AArch64(startsWith(M.getTargetTriple(), "aarch64")) {}

  bool run();

private:
  Module &M;
  const DataLayout &DL;
  LLVMContext &Ctx;
  Type *I8, *I32, *I64, *IntPtr;
  PointerType *I8Ptr;
  Type *VoidTy;
  // AArch64: the module targets aarch64 (its fences compile to DMB, not mfence).
  bool AArch64;

  std::vector<SiteRec> Sites;
  DenseMap<Instruction *, SmallVector<unsigned, 1>> SiteOf; // sites of each instruction
  // Dependence facts between sites, as module-local site indices (struct scry_dep).
  struct DepRec {
    uint32_t From, To, Kind;
    bool operator<(const DepRec &O) const {
      return std::tie(From, To, Kind) < std::tie(O.From, O.To, O.Kind);
    }
    bool operator==(const DepRec &O) const { return From == O.From && To == O.To && Kind == O.Kind; }
  };
  std::vector<DepRec> Deps;
  std::vector<Function *> Defined; // functions defined (and so instrumented) in this module
  std::vector<Instruction *> Dead;  // replaced instructions, erased after the function's facts
  GlobalVariable *Base = nullptr, *PmLo = nullptr, *PmHi = nullptr;
  MDNode *Unlikely = nullptr;
  std::map<const DISubprogram *, std::string> SPNames;
  std::map<const DILocation *, unsigned> InlinedOf; // inlined-call location -> its site

  // Per function.
  Value *BaseV = nullptr;  // this module's base site id, loaded at entry
  Value *Depth = nullptr;  // call depth at entry (__scry_enter)

  void collect(Function &F, std::vector<Item> &Items);
  bool classifyCall(CallBase *CB, std::vector<Item> &Items);
  bool isPMCandidate(const Value *Ptr);
  bool holdsNonPM(const LoadInst *L);
  SmallPtrSet<const AllocaInst *, 4> Deciding; // the variables holdsNonPM is deciding
  DenseSet<const Argument *> StackArgs;        // findStackArgs
  void findStackArgs();
  void instrument(Function &F, std::vector<Item> &Items);
  std::vector<DepSite> depSites(const std::vector<Item> &Items);
  void addDeps(const FunctionDeps &FD);

  unsigned addSite(uint32_t Kind, Instruction *I, StringRef Callee = "");
  std::string functionName(Instruction *I);
  std::string subprogramName(const DISubprogram *SP);
  uint32_t inlinedAt(const DILocation *Loc);
  Value *siteId(IRBuilder<> &B, unsigned Idx) { return B.CreateAdd(BaseV, ConstantInt::get(I32, Idx)); }
  Value *toI8Ptr(IRBuilder<> &B, Value *P) {
    if (P->getType()->isIntegerTy())
      return B.CreateIntToPtr(P, I8Ptr);
    return B.CreatePointerBitCastOrAddrSpaceCast(P, I8Ptr);
  }
  // Bytes a store of T writes (DataLayout store size).
  uint64_t storeSize(Type *T) {
#if LLVM_VERSION_MAJOR >= 16
    return DL.getTypeStoreSize(T).getFixedValue();
#else
    return DL.getTypeStoreSize(T).getFixedSize();
#endif
  }
  // The runtime's callbacks (scry_abi.def), each declared once per module on first use.
  FunctionCallee Callbacks[static_cast<size_t>(Callback::Count)];
  FunctionCallee callback(Callback C) {
    FunctionCallee &F = Callbacks[static_cast<size_t>(C)];
    if (!F.getCallee()) {
      const CSignature &S = callbackSignature(C);
      std::vector<Type *> P;
      for (CType T : S.Params)
        llvmParams(T, Ctx, I8Ptr, P);
      F = declare(M, S.Name, llvmResult(S.Ret, Ctx, I8Ptr), P, S.VarArg);
    }
    return F;
  }
  // hookFor: the hook signature a call gets, or null when the callee is not in scry_hooks.def or
  // is declared with another type (counted, and reported once per function and module).
  const CSignature *hookFor(CallBase *CB, Function *Callee);
  std::set<std::string> Mismatched;
  Instruction *afterPoint(Instruction *I);
  Value *inHull(IRBuilder<> &B, Value *Ptr, Value *Len);
  Instruction *guarded(Instruction *At, Value *Cond);

  void doAccess(Item &It);
  void doMemOp(Item &It);
  void doMemLoad(Item &It);
  void doAsm(Item &It);
  void doClientRequest(Item &It);
  void doCall(Item &It);
  void addUnitSite();
  void emitModuleCtor();
};

// isPMCandidate: false when the pointer provably points to memory that cannot be in a mapped PM
// file, so the access needs no callback at all: every object it can be based on
// (getUnderlyingObjects: through GEPs and casts, and through selects and phis, each of whose
// operands must then be such an object) is an alloca, a global variable, a byval argument (the
// callee's own copy, on the stack), a stack argument (findStackArgs), a pointer variable holding only such pointers (holdsNonPM), errno (the
// thread-local int that libc's __errno_location returns) or null (which no access goes through:
// a static function's `if (parent) *parent = p` called with a local's address or NULL). A pointer based on anything else
// (another argument, another loaded pointer, another call's result), or one followed further than
// getUnderlyingObjects looks, may point to PM.
// isClientRequest: the call is Valgrind's client request on amd64 (isClientRequestAsm) with the
// operands valgrind.h gives it: the address of the six-word request array (%rax) and the default
// result (%rdx, tied to the i64 result).
bool isClientRequest(CallBase *CB) {
  auto *IA = dyn_cast<InlineAsm>(CB->getCalledOperand());
  if (!IA || !isa<CallInst>(CB) || CB->arg_size() != 2 || !CB->getType()->isIntegerTy(64) ||
      !CB->getArgOperand(1)->getType()->isIntegerTy(64))
    return false;
  Type *A0 = CB->getArgOperand(0)->getType();
  return (A0->isPointerTy() || A0->isIntegerTy(64)) &&
         isClientRequestAsm(IA->getAsmString(), IA->getConstraintString());
}

bool Instrumenter::isPMCandidate(const Value *Ptr) {
  SmallVector<const Value *, 4> Objs;
  getUnderlyingObjects(Ptr->stripPointerCasts(), Objs);
  for (const Value *Obj : Objs) {
    if (isa<AllocaInst>(Obj) || isa<GlobalVariable>(Obj) || isa<ConstantPointerNull>(Obj))
      continue;
    if (isa<LoadInst>(Obj) && holdsNonPM(cast<LoadInst>(Obj)))
      continue;
    if (isa<Argument>(Obj) && (StackArgs.count(cast<Argument>(Obj)) || cast<Argument>(Obj)->hasByValAttr()))
      continue;
    const Function *Callee = isa<CallBase>(Obj) ? cast<CallBase>(Obj)->getCalledFunction() : nullptr;
    if (Callee && Callee->isDeclaration() && Callee->getName() == "__errno_location")
      continue;
    return true;
  }
  return Objs.empty();
}

// holdsNonPM: L loads a pointer variable that -O0 code keeps in memory, a local whose address
// never escapes (its only uses are loads from it and stores into it), and every store into it
// stores a pointer isPMCandidate rejects. A variable being decided (`p = p + 1` stores what was
// loaded from it) is taken as holding none: its values then come only from the other stores.
// At most 4 variables deep.
bool Instrumenter::holdsNonPM(const LoadInst *L) {
  auto *A = dyn_cast<AllocaInst>(L->getPointerOperand()->stripPointerCasts());
  if (!A || !L->getType()->isPointerTy())
    return false;
  if (Deciding.count(A))
    return true;
  if (Deciding.size() >= 4)
    return false;
  Deciding.insert(A);
  bool Holds = true;
  for (const User *U : A->users()) {
    if (isa<LoadInst>(U) && cast<LoadInst>(U)->getPointerOperand() == A)
      continue;
    auto *S = dyn_cast<StoreInst>(U);
    if (!S || S->getPointerOperand() != A || !S->getValueOperand()->getType()->isPointerTy() ||
        isPMCandidate(S->getValueOperand())) {
      Holds = false;
      break;
    }
  }
  Deciding.erase(A);
  return Holds;
}

// findStackArgs: the pointer arguments that provably point to the stack or a global variable in
// every call: arguments of functions only this module's code calls (local linkage, address never
// taken: every use is a direct call) whose calls all pass a pointer isPMCandidate rejects, such
// as a local's address or, in a recursive call, such an argument passed on (PMDK's btree passes
// its caller's `int *p` down the tree and stores the slot index through it). The greatest
// fixpoint: every such argument at first, then those a call passes something else to are dropped
// until none is.
void Instrumenter::findStackArgs() {
  std::vector<Argument *> Args;
  for (Function &F : M)
    if (!F.isDeclaration() && F.hasLocalLinkage() && !F.hasAddressTaken())
      for (Argument &A : F.args())
        if (A.getType()->isPointerTy()) {
          StackArgs.insert(&A);
          Args.push_back(&A);
        }
  for (bool Dropped = true; Dropped;) {
    Dropped = false;
    for (Argument *A : Args) {
      if (!StackArgs.count(A))
        continue;
      for (User *U : A->getParent()->users()) {
        auto *CB = dyn_cast<CallBase>(U);
        if (!CB || CB->getCalledOperand() != A->getParent() || A->getArgNo() >= CB->arg_size() ||
            isPMCandidate(CB->getArgOperand(A->getArgNo()))) {
          StackArgs.erase(A);
          Dropped = true;
          break;
        }
      }
    }
  }
}

// classifyCall decides what a call gets: PM flush/fence/nt-store intrinsics, mem intrinsics,
// inline assembly, or a call-site (call stack, library hooks, external-write tracking).
bool Instrumenter::classifyCall(CallBase *CB, std::vector<Item> &Items) {
  if (CB->isInlineAsm()) {
    auto *IA = cast<InlineAsm>(CB->getCalledOperand());
    if (isClientRequest(CB)) {
      Items.push_back({What::ClientRequest, CB, 0});
      return true;
    }
    if (parseAsm(IA->getAsmString()).empty() || isa<InvokeInst>(CB) || !isa<CallInst>(CB))
      return false;
    Items.push_back({What::Asm, CB, 0});
    return true;
  }
  if (isa<AnyMemTransferInst>(CB) || isa<AnyMemSetInst>(CB)) {
    // A copy into a local or a global (`struct item sep = D_RO(parent)->items[p]`) never writes
    // PM: its store part is not a site; its load part is, when the source may be PM (inference
    // reads the values loaded).
    if (isPMCandidate(CB->getArgOperand(0)))
      Items.push_back({What::MemOp, CB, 0});
    else if (isa<AnyMemTransferInst>(CB) && isPMCandidate(CB->getArgOperand(1)))
      Items.push_back({What::MemLoad, CB, 0});
    else
      ++NumSkippedAccesses;
    return true;
  }
  Function *Callee = CB->getCalledFunction();
  if (Callee && Callee->isIntrinsic()) {
    switch (Callee->getIntrinsicID()) {
    case Intrinsic::x86_sse2_clflush:
      Items.push_back({What::FlushIntr, CB, SCRY_FLUSH_CLFLUSH});
      return true;
    case Intrinsic::x86_clflushopt:
      Items.push_back({What::FlushIntr, CB, SCRY_FLUSH_CLFLUSHOPT});
      return true;
    case Intrinsic::x86_clwb:
      Items.push_back({What::FlushIntr, CB, SCRY_FLUSH_CLWB});
      return true;
    case Intrinsic::x86_sse_sfence:
      Items.push_back({What::FenceIntr, CB, SCRY_FENCE_SFENCE});
      return true;
    case Intrinsic::x86_sse2_mfence:
      Items.push_back({What::FenceIntr, CB, SCRY_FENCE_MFENCE});
      return true;
    default:
      break;
    }
    // Legacy non-temporal store intrinsics (llvm.x86.*movnt*(ptr, value)); clang itself lowers
    // _mm_stream_* to stores with !nontemporal metadata.
    StringRef N = Callee->getName();
    if (startsWith(N, "llvm.x86.") && N.contains("movnt") && CB->arg_size() == 2 &&
        CB->getArgOperand(0)->getType()->isPointerTy()) {
      Items.push_back({What::NTIntr, CB, 0});
      return true;
    }
    return false;
  }
  if (Callee && startsWith(Callee->getName(), "__scry_"))
    return false;
  if (Callee && Callee->isDeclaration() &&
      (isReadOnlyLibc(Callee->getName()) || startsWith(Callee->getName(), "__cxa_") ||
       startsWith(Callee->getName(), "_Unwind_")))
    return false; // never writes PM; C++ EH runtime calls need no frame either
  if (CB->isMustTailCall() || isa<CallBrInst>(CB))
    return false; // nothing may follow a musttail call
  Items.push_back({What::Call, CB, 0});
  return true;
}

void Instrumenter::collect(Function &F, std::vector<Item> &Items) {
  for (BasicBlock &BB : F) {
    for (Instruction &I : BB) {
      if (auto *LI = dyn_cast<LoadInst>(&I)) {
        if (isPMCandidate(LI->getPointerOperand()))
          Items.push_back({What::Load, LI, 0});
        else
          ++NumSkippedAccesses;
      } else if (auto *SI = dyn_cast<StoreInst>(&I)) {
        // A seq_cst atomic store is an xchg on x86: a locked instruction, hence also a fence.
        if (SI->isAtomic() && SI->getOrdering() == AtomicOrdering::SequentiallyConsistent)
          Items.push_back({What::Rmw, SI, 0});
        else if (isPMCandidate(SI->getPointerOperand()))
          Items.push_back({SI->getMetadata(LLVMContext::MD_nontemporal) ? What::NTStore : What::Store, SI, 0});
        else
          ++NumSkippedAccesses;
      } else if (isa<AtomicRMWInst>(&I) || isa<AtomicCmpXchgInst>(&I)) {
        Items.push_back({What::Rmw, &I, 0});
      } else if (auto *FI = dyn_cast<FenceInst>(&I)) {
        // x86 emits mfence only for a seq_cst fence; acquire/release fences compile to nothing.
        // AArch64 emits dmb ish for every fence but an acquire one (dmb ishld).
        if (FI->getSyncScopeID() == SyncScope::SingleThread)
          continue;
        if (AArch64) {
          if (FI->getOrdering() != AtomicOrdering::Acquire)
            Items.push_back({What::Fence, FI, SCRY_FENCE_DMB});
        } else if (FI->getOrdering() == AtomicOrdering::SequentiallyConsistent) {
          Items.push_back({What::Fence, FI, SCRY_FENCE_MFENCE});
        }
      } else if (auto *CB = dyn_cast<CallBase>(&I)) {
        if (!classifyCall(CB, Items) && !isa<DbgInfoIntrinsic>(CB))
          ++NumSkippedCalls;
      }
    }
  }
  // The returns of a value, in a function that loads or calls: static sites whose dependence
  // facts say which loads and calls the returned value, and the decision to return, depend on
  // (a guard in a callee seen through its return value). A function that does neither cannot
  // return anything a PM load decided.
  if (Items.empty() || F.getReturnType()->isVoidTy())
    return;
  for (BasicBlock &BB : F)
    if (auto *RI = dyn_cast<ReturnInst>(BB.getTerminator()))
      if (RI->getReturnValue())
        Items.push_back({What::Ret, RI, 0});
}

// functionName: the source-level name of the function holding I (the inlined one when I came
// from inlining, so it agrees with the site's file and line), demangled for C++.
std::string Instrumenter::functionName(Instruction *I) {
  if (const DILocation *Loc = I->getDebugLoc().get())
    if (const DISubprogram *SP = Loc->getScope()->getSubprogram())
      return subprogramName(SP);
  return demangle(I->getFunction()->getName().str());
}

// subprogramName: the source-level name of a debug-info function, demangled for C++.
std::string Instrumenter::subprogramName(const DISubprogram *SP) {
  auto It = SPNames.find(SP);
  if (It != SPNames.end())
    return It->second;
  std::string Name = SP->getLinkageName().str();
  Name = Name.empty() ? SP->getName().str() : demangle(Name);
  SPNames[SP] = Name;
  return Name;
}

static std::string fileOf(const DILocation *Loc) {
  StringRef File = Loc->getFilename(), Dir = Loc->getDirectory();
  return (File.startswith("/") || Dir.empty() || File.empty()) ? File.str() : (Dir + "/" + File).str();
}

// inlinedAt: the site field for an instruction at Loc: 1 + the index of the SCRY_SITE_INLINED
// site that stands for the call Loc's code was inlined at (Loc->getInlinedAt(): the call's
// position in its caller, whose own scope may be inlined further), or 0 when Loc is in its own
// function. One inlined site per inlined call (debug locations are uniqued), each chained to the
// next, so a site's inlined-at chain lists its inlined callers innermost first.
uint32_t Instrumenter::inlinedAt(const DILocation *Loc) {
  const DILocation *IA = Loc ? Loc->getInlinedAt() : nullptr;
  if (!IA)
    return 0;
  auto It = InlinedOf.find(IA);
  if (It != InlinedOf.end())
    return It->second + 1;
  SiteRec S;
  S.Kind = SCRY_SITE_INLINED;
  S.Line = IA->getLine();
  S.Column = IA->getColumn();
  S.File = fileOf(IA);
  if (const DISubprogram *SP = IA->getScope()->getSubprogram())
    S.Function = subprogramName(SP);
  if (const DISubprogram *Callee = Loc->getScope()->getSubprogram())
    S.Callee = subprogramName(Callee);
  S.InlinedAt = inlinedAt(IA); // before this site: the chain is built outermost first
  Sites.push_back(S);
  ++NumInlined;
  InlinedOf[IA] = Sites.size() - 1;
  return Sites.size();
}

// knownLine: the line (and column) to report for an instruction whose debug location has line
// 0, which optimisations give code merged from several lines (a store sunk out of both arms of
// an if, hoisted code): the nearest earlier instruction of its block in the same scope and
// inlined call that has a line, else the line of the innermost enclosing scope that has one (the
// block statement that holds every merged line, or the function). Line stays 0 only for code
// with no enclosing scope line.
static void knownLine(const Instruction *I, const DILocation *Loc, unsigned &Line, unsigned &Col) {
  for (const Instruction *P = I->getPrevNode(); P; P = P->getPrevNode()) {
    const DILocation *L = P->getDebugLoc().get();
    if (L && L->getLine() != 0 && L->getScope() == Loc->getScope() && L->getInlinedAt() == Loc->getInlinedAt()) {
      Line = L->getLine();
      Col = L->getColumn();
      return;
    }
  }
  const DILocalScope *Scope = Loc->getScope();
  while (Scope) {
    if (const auto *B = dyn_cast<DILexicalBlock>(Scope)) {
      if (B->getLine() != 0) {
        Line = B->getLine();
        Col = B->getColumn();
        return;
      }
      Scope = B->getScope();
    } else if (const auto *F = dyn_cast<DILexicalBlockFile>(Scope)) {
      Scope = F->getScope();
    } else {
      if (const auto *SP = dyn_cast<DISubprogram>(Scope))
        Line = SP->getScopeLine() ? SP->getScopeLine() : SP->getLine();
      Col = 0;
      return;
    }
  }
}

unsigned Instrumenter::addSite(uint32_t Kind, Instruction *I, StringRef Callee) {
  SiteRec S;
  S.Kind = Kind;
  S.Line = S.Column = 0;
  if (const DILocation *Loc = I->getDebugLoc().get()) {
    S.Line = Loc->getLine();
    S.Column = Loc->getColumn();
    if (S.Line == 0)
      knownLine(I, Loc, S.Line, S.Column);
    S.File = fileOf(Loc);
    S.InlinedAt = inlinedAt(Loc);
  }
  S.Function = functionName(I);
  S.Callee = Callee.str();
  switch (Kind) {
  case SCRY_SITE_LOAD:
  case SCRY_SITE_STORE:
  case SCRY_SITE_NT_STORE:
  case SCRY_SITE_RMW:
  case SCRY_SITE_RANGE:
    S.Access = accessOf(I);
    // A locked instruction of inline assembly orders as a seq_cst read-modify-write.
    if (Kind == SCRY_SITE_RMW && S.Access == SCRY_ACCESS_UNKNOWN && isa<CallBase>(I))
      S.Access = SCRY_ACCESS_SEQ_CST;
    break;
  }
  switch (Kind) {
  case SCRY_SITE_LOAD: ++NumLoads; break;
  case SCRY_SITE_STORE: ++NumStores; break;
  case SCRY_SITE_NT_STORE: ++NumNTStores; break;
  case SCRY_SITE_RMW: ++NumRMWs; break;
  case SCRY_SITE_FLUSH: ++NumFlushes; break;
  case SCRY_SITE_FENCE: ++NumFences; break;
  case SCRY_SITE_RANGE: ++NumMemOps; break;
  case SCRY_SITE_LIBCALL: ++NumHooked; break;
  case SCRY_SITE_CALL: ++NumCalls; break;
  case SCRY_SITE_BRANCH: ++NumBranches; break;
  }
  Sites.push_back(S);
  SiteOf[I].push_back(Sites.size() - 1);
  return Sites.size() - 1;
}

// afterPoint: where code that must run after I goes (an invoke's normal destination, through a
// block of its own when that destination has other predecessors).
Instruction *Instrumenter::afterPoint(Instruction *I) {
  if (auto *II = dyn_cast<InvokeInst>(I)) {
    BasicBlock *Normal = II->getNormalDest();
    if (!Normal->getSinglePredecessor()) {
      BasicBlock *From = II->getParent();
      BasicBlock *NB = BasicBlock::Create(Ctx, "scry.invoke.cont", I->getFunction(), Normal);
      BranchInst::Create(Normal, NB)->setDebugLoc(I->getDebugLoc());
      II->setNormalDest(NB);
      for (PHINode &P : Normal->phis())
        for (unsigned K = 0; K < P.getNumIncomingValues(); ++K)
          if (P.getIncomingBlock(K) == From)
            P.setIncomingBlock(K, NB);
      Normal = NB;
    }
    return &*Normal->getFirstInsertionPt();
  }
  return I->getNextNode();
}

// inHull: the range [Ptr, Ptr+Len) overlaps the PM hull [__scry_pm_lo, __scry_pm_hi); with a
// null Len, just Ptr lies in it.
Value *Instrumenter::inHull(IRBuilder<> &B, Value *Ptr, Value *Len) {
  Value *A = B.CreatePtrToInt(Ptr, IntPtr);
  Value *Lo = B.CreateLoad(IntPtr, PmLo, "scry.lo");
  Value *Hi = B.CreateLoad(IntPtr, PmHi, "scry.hi");
  if (!Len)
    return B.CreateAnd(B.CreateICmpUGE(A, Lo), B.CreateICmpULT(A, Hi));
  Value *End = B.CreateAdd(A, B.CreateZExtOrTrunc(Len, IntPtr));
  return B.CreateAnd(B.CreateICmpULT(A, Hi), B.CreateICmpUGT(End, Lo));
}

// guarded: splits the block at `At` so that code inserted before the returned instruction runs
// only when Cond (marked unlikely: most accesses are not to PM).
Instruction *Instrumenter::guarded(Instruction *At, Value *Cond) {
  return SplitBlockAndInsertIfThen(Cond, At, false, Unlikely);
}

// doAccess: loads, stores, non-temporal stores and atomics, reported right after they execute
// (the runtime then reads the bytes now in memory). Plain accesses are filtered inline by the PM
// hull; atomic RMWs are reported always, since a locked instruction orders flushes even to DRAM.
void Instrumenter::doAccess(Item &It) {
  Instruction *I = It.I;
  Instruction *At = I->getNextNode();
  IRBuilder<> B(At);
  B.SetCurrentDebugLocation(I->getDebugLoc());
  if (It.W == What::Fence) {
    unsigned S = addSite(SCRY_SITE_FENCE, I);
    B.CreateCall(callback(Callback::__scry_fence), {siteId(B, S), ConstantInt::get(I32, It.Arg)});
    return;
  }
  Value *Ptr;
  Type *Ty;
  if (auto *LI = dyn_cast<LoadInst>(I))
    Ptr = LI->getPointerOperand(), Ty = LI->getType();
  else if (auto *SI = dyn_cast<StoreInst>(I))
    Ptr = SI->getPointerOperand(), Ty = SI->getValueOperand()->getType();
  else if (auto *RI = dyn_cast<AtomicRMWInst>(I))
    Ptr = RI->getPointerOperand(), Ty = RI->getValOperand()->getType();
  else {
    auto *CI = cast<AtomicCmpXchgInst>(I);
    Ptr = CI->getPointerOperand(), Ty = CI->getNewValOperand()->getType();
  }
  uint64_t Size = storeSize(Ty);
  Callback Which;
  uint32_t Kind;
  switch (It.W) {
  case What::Load: Which = Callback::__scry_load, Kind = SCRY_SITE_LOAD; break;
  case What::Store: Which = Callback::__scry_store, Kind = SCRY_SITE_STORE; break;
  case What::NTStore: Which = Callback::__scry_nt_store, Kind = SCRY_SITE_NT_STORE; break;
  default: Which = Callback::__scry_rmw, Kind = SCRY_SITE_RMW; break;
  }
  unsigned S = addSite(Kind, I);
  FunctionCallee Cb = callback(Which);
  if (It.W == What::Rmw) {
    B.CreateCall(Cb, {siteId(B, S), toI8Ptr(B, Ptr), ConstantInt::get(I64, Size)});
    return;
  }
  IRBuilder<> TB(guarded(At, inHull(B, Ptr, nullptr)));
  TB.SetCurrentDebugLocation(I->getDebugLoc());
  TB.CreateCall(Cb, {siteId(TB, S), toI8Ptr(TB, Ptr), ConstantInt::get(I64, Size)});
}

// doMemOp: memcpy/memmove/memset intrinsics, reported after they ran when the destination or
// the source overlaps the PM hull.
void Instrumenter::doMemOp(Item &It) {
  auto *MI = cast<CallBase>(It.I);
  Value *Dst = MI->getArgOperand(0);
  Value *Src = isa<AnyMemTransferInst>(MI) ? MI->getArgOperand(1) : nullptr;
  Value *Len = MI->getArgOperand(2);
  Instruction *At = MI->getNextNode();
  IRBuilder<> B(At);
  B.SetCurrentDebugLocation(MI->getDebugLoc());
  Value *Cond = inHull(B, Dst, Len);
  if (Src)
    Cond = B.CreateOr(Cond, inHull(B, Src, Len));
  unsigned S = addSite(SCRY_SITE_RANGE, MI);
  IRBuilder<> TB(guarded(At, Cond));
  TB.SetCurrentDebugLocation(MI->getDebugLoc());
  TB.CreateCall(callback(Callback::__scry_memop),
                {siteId(TB, S), toI8Ptr(TB, Dst), Src ? toI8Ptr(TB, Src) : ConstantPointerNull::get(I8Ptr),
                 TB.CreateZExtOrTrunc(Len, I64)});
}

// doMemLoad: a copy into a local or a global from memory that may be PM (What::MemLoad), reported
// after it ran as one load of the source's Len bytes when the source lies in the PM hull (a load
// site: it stores nothing to PM). The runtime records it when the source starts in a PM region,
// as every load.
void Instrumenter::doMemLoad(Item &It) {
  auto *MI = cast<CallBase>(It.I);
  Value *Src = MI->getArgOperand(1), *Len = MI->getArgOperand(2);
  Instruction *At = MI->getNextNode();
  IRBuilder<> B(At);
  B.SetCurrentDebugLocation(MI->getDebugLoc());
  Value *Cond = B.CreateAnd(inHull(B, Src, Len), B.CreateICmpNE(Len, ConstantInt::get(Len->getType(), 0)));
  unsigned S = addSite(SCRY_SITE_LOAD, MI);
  IRBuilder<> TB(guarded(At, Cond));
  TB.SetCurrentDebugLocation(MI->getDebugLoc());
  TB.CreateCall(callback(Callback::__scry_load), {siteId(TB, S), toI8Ptr(TB, Src), TB.CreateZExtOrTrunc(Len, I64)});
}

// doClientRequest: a Valgrind client request (isClientRequest) becomes
//     result = __scry_client_request(site, args, default)
// in its place, with the same operands; the runtime answers the requests it understands and gives
// the default for all others, as a program not running under Valgrind would see.
void Instrumenter::doClientRequest(Item &It) {
  auto *CB = cast<CallInst>(It.I);
  IRBuilder<> B(CB);
  B.SetCurrentDebugLocation(CB->getDebugLoc());
  unsigned S = addSite(SCRY_SITE_LIBCALL, CB, "VALGRIND_DO_CLIENT_REQUEST");
  Value *R = B.CreateCall(callback(Callback::__scry_client_request),
                          {siteId(B, S), toI8Ptr(B, CB->getArgOperand(0)), CB->getArgOperand(1)});
  CB->replaceAllUsesWith(R);
  Dead.push_back(CB); // erased once the function's dependence facts are mapped to sites
}

// doAsm: flushes, fences, locked and non-temporal instructions written in inline assembly, in
// the order the asm string has them, reported after the asm statement.
void Instrumenter::doAsm(Item &It) {
  auto *CB = cast<CallInst>(It.I);
  auto *IA = cast<InlineAsm>(CB->getCalledOperand());
  // Map asm operand numbers to call arguments: outputs come first; only indirect outputs ("=*m")
  // and inputs are arguments; clobbers are not operands.
  std::vector<int> ArgOf;
  unsigned ArgNo = 0;
  for (const InlineAsm::ConstraintInfo &C : IA->ParseConstraints()) {
    if (C.Type == InlineAsm::isClobber)
      continue;
    if (C.Type == InlineAsm::isOutput && !C.isIndirect)
      ArgOf.push_back(-1);
    else
      ArgOf.push_back(ArgNo++);
  }
  auto ptrArg = [&](int OperandRef) -> Value * {
    if (OperandRef >= 0 && (unsigned)OperandRef < ArgOf.size() && ArgOf[OperandRef] >= 0 &&
        (unsigned)ArgOf[OperandRef] < CB->arg_size()) {
      Value *V = CB->getArgOperand(ArgOf[OperandRef]);
      if (V->getType()->isPointerTy() || V->getType()->isIntegerTy(DL.getPointerSizeInBits()))
        return V;
    }
    for (Value *V : CB->args()) // no usable operand: the first pointer argument
      if (V->getType()->isPointerTy())
        return V;
    return nullptr;
  };
  // The size of a memory operand (the elementtype of an indirect operand), 8 if unknown.
  auto memSize = [&](Value *P) -> uint64_t {
    for (unsigned K = 0; K < CB->arg_size(); ++K)
      if (CB->getArgOperand(K) == P)
        if (Type *T = CB->getAttributes().getParamElementType(K))
          if (T->isSized())
            return storeSize(T);
    return 8;
  };
  IRBuilder<> B(CB->getNextNode());
  B.SetCurrentDebugLocation(CB->getDebugLoc());
  for (const AsmOp &Op : parseAsm(IA->getAsmString())) {
    switch (Op.Kind) {
    case AsmOp::Flush:
      if (Value *P = ptrArg(Op.OperandRef)) {
        unsigned S = addSite(SCRY_SITE_FLUSH, CB);
        B.CreateCall(callback(Callback::__scry_flush),
                     {siteId(B, S), toI8Ptr(B, P), ConstantInt::get(I32, Op.Arg)});
      }
      break;
    case AsmOp::Fence: {
      unsigned S = addSite(SCRY_SITE_FENCE, CB);
      B.CreateCall(callback(Callback::__scry_fence), {siteId(B, S), ConstantInt::get(I32, Op.Arg)});
      break;
    }
    case AsmOp::Locked: {
      // A locked instruction on a memory operand is an RMW (load, store, fence); without a
      // pointer operand we can only record the fence.
      Value *P = ptrArg(Op.OperandRef);
      if (P && P->getType()->isPointerTy()) {
        unsigned S = addSite(SCRY_SITE_RMW, CB);
        B.CreateCall(callback(Callback::__scry_rmw),
                     {siteId(B, S), toI8Ptr(B, P), ConstantInt::get(I64, memSize(P))});
      } else {
        unsigned S = addSite(SCRY_SITE_FENCE, CB);
        B.CreateCall(callback(Callback::__scry_fence), {siteId(B, S), ConstantInt::get(I32, Op.Arg)});
      }
      break;
    }
    case AsmOp::NTStore: {
      Value *P = ptrArg(Op.OperandRef);
      if (P && P->getType()->isPointerTy()) {
        unsigned S = addSite(SCRY_SITE_NT_STORE, CB);
        B.CreateCall(callback(Callback::__scry_nt_store),
                     {siteId(B, S), toI8Ptr(B, P), ConstantInt::get(I64, memSize(P))});
      }
      break;
    }
    }
  }
}

// Flattens a returned value into the hook's arguments: a struct or array (PMEMoid is {i64, i64})
// becomes its elements, as clang passes a small by-value struct.
static void flatten(IRBuilder<> &B, Value *V, std::vector<Value *> &Out) {
  Type *T = V->getType();
  unsigned N = T->isStructTy() ? T->getStructNumElements() : T->isArrayTy() ? T->getArrayNumElements() : 0;
  if (!N) {
    Out.push_back(V);
    return;
  }
  for (unsigned K = 0; K < N; ++K)
    flatten(B, B.CreateExtractValue(V, K), Out);
}

const CSignature *Instrumenter::hookFor(CallBase *CB, Function *Callee) {
  const CSignature *S = hookSignature(Callee->getName());
  if (!S)
    return nullptr;
  if (hookMatches(*S, Callee->getFunctionType(), AArch64) && hookMatches(*S, CB->getFunctionType(), AArch64))
    return S;
  ++NumHookMismatch;
  if (Mismatched.insert(Callee->getName().str()).second) {
    std::string Ty;
    raw_string_ostream OS(Ty);
    CB->getFunctionType()->print(OS);
    errs() << "scry: warning: " << M.getSourceFileName() << ": '" << Callee->getName()
           << "' is called with a type other than the library's (" << OS.str()
           << "); its calls are not interpreted, only watched as calls into uninstrumented code\n";
  }
  return nullptr;
}

// doCall: every call outside the scry runtime and intrinsics. Around it, __scry_call/__scry_ret
// keep the shadow call stack; library functions of scry_hooks.def get __scry_pre_F/__scry_post_F
// with the call's fixed arguments (and its flattened result); other calls into uninstrumented
// code that get pointers get __scry_ext_pre/__scry_ext_post so the runtime can catch their
// writes to PM. Order: pre hook, __scry_call, the call, __scry_ret, post hook, so the hooks' events
// carry the caller's stack and the call's site.
void Instrumenter::doCall(Item &It) {
  auto *CB = cast<CallBase>(It.I);
  Function *Callee = dyn_cast<Function>(CB->getCalledOperand()->stripPointerCasts());
  StringRef Name = Callee ? Callee->getName() : "";
  bool External = !Callee || Callee->isDeclaration();
  bool NoReturn = CB->doesNotReturn() || (Callee && Callee->doesNotReturn());
  bool ReturnsTwice = CB->hasFnAttr(Attribute::ReturnsTwice) || (Callee && Callee->hasFnAttribute(Attribute::ReturnsTwice));
  const CSignature *Hook = Callee && Callee->isDeclaration() ? hookFor(CB, Callee) : nullptr;
  bool Hooked = Hook != nullptr;
  FunctionType *FT = CB->getFunctionType();
  unsigned NFixed = FT->getNumParams();
  std::vector<Value *> Ptrs;
  for (unsigned K = 0; K < NFixed && K < CB->arg_size(); ++K)
    if (CB->getArgOperand(K)->getType()->isPointerTy())
      Ptrs.push_back(CB->getArgOperand(K));
  bool Ext = !Hooked && External && !NoReturn && !ReturnsTwice && !Ptrs.empty();
  if (Ext)
    ++NumExternal;

  unsigned S = Hooked ? addSite(SCRY_SITE_LIBCALL, CB, Name) : addSite(SCRY_SITE_CALL, CB, demangle(Name.str()));
  IRBuilder<> B(CB);
  B.SetCurrentDebugLocation(CB->getDebugLoc());
  Value *Site = siteId(B, S);
  Value *Token = nullptr;
  std::vector<Value *> Args;
  for (unsigned K = 0; K < NFixed; ++K)
    Args.push_back(CB->getArgOperand(K));
  // The hooks are declared from scry_hooks.def's signature; hookFor checked that the call's
  // arguments are of those kinds, so only pointer types (before opaque pointers) need a cast.
  // The tables have no integer narrower than 32 bits, so no argument needs signext/zeroext.
  std::vector<Type *> ParamTys;
  if (Hooked)
    for (CType T : Hook->Params)
      llvmParams(T, Ctx, I8Ptr, ParamTys, AArch64);
  auto hookCall = [&](IRBuilder<> &At, StringRef Prefix, std::vector<Value *> Lead, std::vector<Type *> LeadTys) {
    std::vector<Type *> PT{I32};
    PT.insert(PT.end(), LeadTys.begin(), LeadTys.end());
    PT.insert(PT.end(), ParamTys.begin(), ParamTys.end());
    std::vector<Value *> V{Site};
    V.insert(V.end(), Lead.begin(), Lead.end());
    V.insert(V.end(), Args.begin(), Args.end());
    for (unsigned K = 0; K < V.size(); ++K)
      if (V[K]->getType() != PT[K])
        V[K] = At.CreatePointerCast(V[K], PT[K]);
    At.CreateCall(declare(M, (Prefix + Name).str(), VoidTy, PT), V);
  };
  if (Hooked) {
    hookCall(B, "__scry_pre_", {}, {});
  } else if (Ext) {
    Value *P[4];
    for (unsigned K = 0; K < 4; ++K)
      P[K] = K < Ptrs.size() ? toI8Ptr(B, Ptrs[K]) : ConstantPointerNull::get(I8Ptr);
    Token = B.CreateCall(callback(Callback::__scry_ext_pre),
                         {Site, toI8Ptr(B, CB->getCalledOperand()), P[0], P[1], P[2], P[3]});
  }
  B.CreateCall(callback(Callback::__scry_call), {Depth, Site});

  IRBuilder<> A(afterPoint(CB));
  A.SetCurrentDebugLocation(CB->getDebugLoc());
  A.CreateCall(callback(Callback::__scry_ret), {Depth});
  if (Hooked) {
    std::vector<Value *> Ret;
    if (AArch64 && Hook->Ret == CType::Oid)
      Ret.push_back(CB); // passed on as it came, one [2 x i64]
    else if (!CB->getType()->isVoidTy())
      flatten(A, CB, Ret);
    std::vector<Type *> RetTys;
    llvmParams(Hook->Ret, Ctx, I8Ptr, RetTys, AArch64);
    hookCall(A, "__scry_post_", Ret, RetTys);
    // A printf-like function reads the strings its format's %s conversions name: the runtime
    // walks the format over the same variadic arguments (passed on unchanged: both callees are
    // C variadic functions, so the arguments are lowered alike) and records the PM bytes read.
    if (Hook->Format >= 0 && FT->isVarArg() && static_cast<unsigned>(Hook->Format) < NFixed) {
      bool Plain = true;
      for (unsigned K = NFixed; K < CB->arg_size(); ++K)
        for (Attribute::AttrKind AK : {Attribute::ByVal, Attribute::InAlloca, Attribute::Preallocated, Attribute::ByRef})
          Plain = Plain && !CB->paramHasAttr(K, AK); // an aggregate passed in memory: not forwarded
      if (Plain) {
        std::vector<Value *> V{Site, toI8Ptr(A, CB->getArgOperand(Hook->Format))};
        for (unsigned K = NFixed; K < CB->arg_size(); ++K)
          V.push_back(CB->getArgOperand(K));
        A.CreateCall(callback(Callback::__scry_format_loads), V);
      }
    }
  } else if (Ext) {
    A.CreateCall(callback(Callback::__scry_ext_post), {Site, Token});
  }
}

void Instrumenter::instrument(Function &F, std::vector<Item> &Items) {
  // Entry code goes after the leading allocas, before anything instrumented.
  BasicBlock &Entry = F.getEntryBlock();
  BasicBlock::iterator IP = Entry.getFirstInsertionPt();
  while (isa<AllocaInst>(&*IP))
    ++IP;
  IRBuilder<> B(&*IP);
  // Entry code carries no location of its own; a line-0 location in the function's scope keeps
  // the verifier happy in functions with debug info.
  if (DISubprogram *SP = F.getSubprogram())
    B.SetCurrentDebugLocation(DILocation::get(Ctx, 0, 0, SP));
  BaseV = B.CreateLoad(I32, Base, "scry.base");
  Depth = nullptr;
  for (Item &It : Items)
    if (It.W == What::Call) {
      Depth = B.CreateCall(callback(Callback::__scry_enter), {}, "scry.depth");
      break;
    }
  for (Item &It : Items) {
    switch (It.W) {
    case What::MemOp: doMemOp(It); break;
    case What::MemLoad: doMemLoad(It); break;
    case What::Asm: doAsm(It); break;
    case What::ClientRequest: doClientRequest(It); break;
    case What::Call: doCall(It); break;
    case What::Ret: addSite(SCRY_SITE_RETURN, It.I); break; // a static fact: no callback
    case What::FlushIntr:
    case What::FenceIntr:
    case What::NTIntr: {
      auto *CB = cast<CallBase>(It.I);
      IRBuilder<> A(CB->getNextNode());
      A.SetCurrentDebugLocation(CB->getDebugLoc());
      if (It.W == What::FlushIntr) {
        unsigned S = addSite(SCRY_SITE_FLUSH, CB);
        A.CreateCall(callback(Callback::__scry_flush),
                     {siteId(A, S), toI8Ptr(A, CB->getArgOperand(0)), ConstantInt::get(I32, It.Arg)});
      } else if (It.W == What::FenceIntr) {
        unsigned S = addSite(SCRY_SITE_FENCE, CB);
        A.CreateCall(callback(Callback::__scry_fence), {siteId(A, S), ConstantInt::get(I32, It.Arg)});
      } else {
        unsigned S = addSite(SCRY_SITE_NT_STORE, CB);
        uint64_t Size = storeSize(CB->getArgOperand(1)->getType());
        A.CreateCall(callback(Callback::__scry_nt_store),
                     {siteId(A, S), toI8Ptr(A, CB->getArgOperand(0)), ConstantInt::get(I64, Size)});
      }
      break;
    }
    default: doAccess(It); break;
    }
  }
}

// depSites: what the dependence analysis needs to know of each instruction that becomes a site:
// whether its result is a value other sites may depend on (loads, atomics, calls), the pointer it
// accesses and the value it uses.
std::vector<DepSite> Instrumenter::depSites(const std::vector<Item> &Items) {
  std::vector<DepSite> Out;
  Out.reserve(Items.size());
  for (const Item &It : Items) {
    DepSite S;
    S.I = It.I;
    switch (It.W) {
    case What::Load:
      S.Producer = true;
      S.Addr.push_back(cast<LoadInst>(It.I)->getPointerOperand());
      break;
    case What::Store:
    case What::NTStore: {
      auto *SI = cast<StoreInst>(It.I);
      S.Addr.push_back(SI->getPointerOperand());
      S.Val.push_back(SI->getValueOperand());
      break;
    }
    case What::Rmw:
      if (auto *RI = dyn_cast<AtomicRMWInst>(It.I)) {
        S.Producer = true;
        S.Addr.push_back(RI->getPointerOperand());
        S.Val.push_back(RI->getValOperand());
      } else if (auto *CI = dyn_cast<AtomicCmpXchgInst>(It.I)) {
        S.Producer = true;
        S.Addr.push_back(CI->getPointerOperand());
        S.Val.push_back(CI->getCompareOperand());
        S.Val.push_back(CI->getNewValOperand());
      } else if (auto *SI = dyn_cast<StoreInst>(It.I)) {
        S.Addr.push_back(SI->getPointerOperand());
        S.Val.push_back(SI->getValueOperand());
      }
      break;
    case What::MemOp: {
      auto *MI = cast<CallBase>(It.I);
      S.Addr.push_back(MI->getArgOperand(0));
      if (isa<AnyMemSetInst>(MI))
        S.Val.push_back(MI->getArgOperand(1));
      break;
    }
    case What::MemLoad:
      S.Addr.push_back(cast<CallBase>(It.I)->getArgOperand(1)); // the source; no register result
      break;
    case What::FlushIntr:
      S.Addr.push_back(cast<CallBase>(It.I)->getArgOperand(0));
      break;
    case What::NTIntr:
      S.Addr.push_back(cast<CallBase>(It.I)->getArgOperand(0));
      S.Val.push_back(cast<CallBase>(It.I)->getArgOperand(1));
      break;
    case What::Asm:
      S.Producer = true; // a locked instruction's output
      for (Value *A : cast<CallBase>(It.I)->args())
        if (A->getType()->isPointerTy())
          S.Addr.push_back(A);
      break;
    case What::Call:
    case What::ClientRequest:
      S.Producer = true; // the returned value
      break;
    case What::Ret:
      S.Val.push_back(cast<ReturnInst>(It.I)->getReturnValue());
      returnDefs(cast<ReturnInst>(It.I)->getReturnValue(), S.CtrlBlocks, S.CtrlBranches);
      break;
    case What::Fence:
    case What::FenceIntr:
      break;
    }
    Out.push_back(std::move(S));
  }
  return Out;
}

// addDeps: the facts of one instrumented function as pairs of site indices. An instruction may
// have several sites (an asm statement with a flush and a fence); each fact holds for those of
// its sites that have such a dependence: an address for loads, stores, RMWs, ranges and flushes,
// a value for stores, RMWs, ranges and branches; its target is a branch site (control) or a site
// that produces a value (a load, an RMW, a call).
void Instrumenter::addDeps(const FunctionDeps &FD) {
  auto hasAddr = [](uint32_t K) {
    return K == SCRY_SITE_LOAD || K == SCRY_SITE_STORE || K == SCRY_SITE_NT_STORE || K == SCRY_SITE_RMW ||
           K == SCRY_SITE_RANGE || K == SCRY_SITE_FLUSH;
  };
  auto hasVal = [](uint32_t K) {
    return K == SCRY_SITE_STORE || K == SCRY_SITE_NT_STORE || K == SCRY_SITE_RMW || K == SCRY_SITE_RANGE ||
           K == SCRY_SITE_BRANCH || K == SCRY_SITE_RETURN;
  };
  auto produces = [](uint32_t K) {
    return K == SCRY_SITE_LOAD || K == SCRY_SITE_RMW || K == SCRY_SITE_LIBCALL || K == SCRY_SITE_CALL;
  };
  for (const DepFact &F : FD.Facts) {
    auto FI = SiteOf.find(F.From), TI = SiteOf.find(F.To);
    if (FI == SiteOf.end() || TI == SiteOf.end())
      continue;
    for (unsigned From : FI->second) {
      uint32_t FK = Sites[From].Kind;
      if ((F.Kind == SCRY_DEP_ADDRESS && !hasAddr(FK)) || (F.Kind == SCRY_DEP_VALUE && !hasVal(FK)))
        continue;
      for (unsigned To : TI->second) {
        uint32_t TK = Sites[To].Kind;
        if (F.Kind == SCRY_DEP_CONTROL ? TK != SCRY_SITE_BRANCH : !produces(TK))
          continue;
        Deps.push_back({From, To, F.Kind});
      }
    }
  }
}

// absolutePath: Path made absolute (against the working directory) with "." and ".." removed.
static std::string absolutePath(StringRef Path) {
  SmallString<256> P(Path);
  sys::fs::make_absolute(P);
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P.str());
}

// projectRoot: the root directory of the project a source file in Dir belongs to, which reports
// take as the program's own code (docs/trace-format.md, "unit"). SCRY_PROJECT_ROOT when set
// (`scry cc --project-root`); else the nearest enclosing directory under version control (.git,
// .hg, .svn, .jj, .bzr); else the outermost directory of the run of enclosing directories, from
// Dir or its parent up, that hold a build file (CMakeLists.txt, Makefile, configure, meson.build,
// ...); else Dir itself. The file system is asked only here, at compile time, so a trace
// analysed elsewhere says the same.
static std::string projectRoot(StringRef Dir) {
  const char *E = std::getenv("SCRY_PROJECT_ROOT");
  if (E && *E)
    return absolutePath(E);
  auto has = [](StringRef D, std::initializer_list<const char *> Names) {
    for (const char *N : Names) {
      SmallString<256> P(D);
      sys::path::append(P, N);
      if (sys::fs::exists(P))
        return true;
    }
    return false;
  };
  for (StringRef D = Dir; !D.empty(); D = sys::path::parent_path(D))
    if (has(D, {".git", ".hg", ".svn", ".jj", ".bzr"}))
      return D.str();
  const char *H = std::getenv("HOME");
  StringRef Root = Dir, Home = H ? H : "";
  bool Found = false;
  for (StringRef D = Dir; !D.empty() && D != "/" && D != Home; D = sys::path::parent_path(D)) {
    if (has(D, {"CMakeLists.txt", "Makefile", "makefile", "GNUmakefile", "configure", "configure.ac",
                "meson.build", "SConstruct", "BUILD", "BUILD.bazel"})) {
      Root = D, Found = true;
    } else if (Found || D != Dir) {
      break; // the run of directories with a build file ended (Dir itself may have none)
    }
  }
  return Root.str();
}

// addUnitSite: the module's SCRY_SITE_UNIT site: its main source file (from the debug
// information's compile unit, else the module's source file name) and the root of its project.
void Instrumenter::addUnitSite() {
  std::string File;
  for (const DICompileUnit *CU : M.debug_compile_units()) {
    const DIFile *F = CU->getFile();
    if (!F || F->getFilename().empty())
      continue;
    File = sys::path::is_absolute(F->getFilename()) ? F->getFilename().str()
                                                   : (F->getDirectory() + "/" + F->getFilename()).str();
    break;
  }
  if (File.empty())
    File = M.getSourceFileName();
  if (File.empty() || File == "-" || File == "<stdin>")
    return;
  File = absolutePath(File);
  SiteRec S;
  S.Kind = SCRY_SITE_UNIT;
  S.Line = S.Column = 0;
  S.File = File;
  S.Callee = projectRoot(sys::path::parent_path(File));
  Sites.push_back(S);
}

// emitModuleCtor: the site table (a constant array of struct scry_site), the dependence table
// (struct scry_dep) and a constructor that registers both and keeps the returned base id in
// @__scry_module_base.
void Instrumenter::emitModuleCtor() {
  StructType *SiteTy = StructType::get(Ctx, {I32, I32, I32, I32, I8Ptr, I8Ptr, I8Ptr});
  std::map<std::string, Constant *> Strings;
  auto str = [&](const std::string &S) -> Constant * {
    auto It = Strings.find(S);
    if (It != Strings.end())
      return It->second;
    Constant *Init = ConstantDataArray::getString(Ctx, S);
    auto *GV = new GlobalVariable(M, Init->getType(), true, GlobalValue::PrivateLinkage, Init, ".scry.str");
    GV->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    GV->setAlignment(Align(1));
    Constant *P = ConstantExpr::getPointerCast(GV, I8Ptr);
    Strings[S] = P;
    return P;
  };
  std::vector<Constant *> Elems;
  for (const SiteRec &S : Sites)
    Elems.push_back(ConstantStruct::get(
        SiteTy, {ConstantInt::get(I32, S.Kind | S.Access << SiteAccessShift), ConstantInt::get(I32, S.Line),
                 ConstantInt::get(I32, S.Column),
                 ConstantInt::get(I32, S.InlinedAt), str(S.Function), str(S.File), str(S.Callee)}));
  ArrayType *AT = ArrayType::get(SiteTy, Sites.size());
  auto *Table = new GlobalVariable(M, AT, true, GlobalValue::PrivateLinkage, ConstantArray::get(AT, Elems),
                                   "__scry_sites");
  // The dependence facts (struct scry_dep), module-local site indices.
  StructType *DepTy = StructType::get(Ctx, {I32, I32, I32});
  Constant *DepTable = ConstantPointerNull::get(PointerType::getUnqual(DepTy));
  if (!Deps.empty()) {
    std::vector<Constant *> DElems;
    DElems.reserve(Deps.size());
    for (const DepRec &D : Deps)
      DElems.push_back(ConstantStruct::get(DepTy, {ConstantInt::get(I32, D.From), ConstantInt::get(I32, D.To),
                                                   ConstantInt::get(I32, D.Kind)}));
    ArrayType *DT = ArrayType::get(DepTy, Deps.size());
    auto *GV = new GlobalVariable(M, DT, true, GlobalValue::PrivateLinkage, ConstantArray::get(DT, DElems),
                                  "__scry_deps");
    DepTable = ConstantExpr::getPointerCast(GV, PointerType::getUnqual(DepTy));
  }
  Function *Ctor = Function::Create(FunctionType::get(VoidTy, false), GlobalValue::InternalLinkage,
                                    "__scry_module_ctor", &M);
  IRBuilder<> B(BasicBlock::Create(Ctx, "", Ctor));
  Value *Id = B.CreateCall(
      callback(Callback::__scry_register_module_deps),
      {B.CreatePointerCast(Table, I8Ptr), ConstantInt::get(I32, Sites.size()), B.CreatePointerCast(DepTable, I8Ptr),
       ConstantInt::get(I32, Deps.size())});
  B.CreateStore(Id, Base);
  // The entry addresses of the functions defined here: the runtime opens no protection window
  // around a call into them (their stores are traced already), wherever they are linked.
  if (!Defined.empty()) {
    std::vector<Constant *> Fns;
    for (Function *F : Defined)
      Fns.push_back(ConstantExpr::getPointerCast(F, I8Ptr));
    ArrayType *FT = ArrayType::get(I8Ptr, Fns.size());
    auto *FnTable = new GlobalVariable(M, FT, true, GlobalValue::PrivateLinkage, ConstantArray::get(FT, Fns),
                                       "__scry_functions");
    B.CreateCall(callback(Callback::__scry_register_functions),
                 {B.CreatePointerCast(FnTable, I8Ptr), ConstantInt::get(I32, Fns.size())});
  }
  B.CreateRetVoid();
  // Priority 1 (as ASan's module constructors): sites are registered before any user
  // constructor can run instrumented code.
  appendToGlobalCtors(M, Ctor, 1);
}

bool Instrumenter::run() {
  if (M.getNamedValue("__scry_module_base"))
    return false; // already instrumented (the pass ran twice, e.g. under LTO)
  std::vector<std::pair<Function *, std::vector<Item>>> Work;
  findStackArgs();
  for (Function &F : M) {
    if (F.isDeclaration() || F.hasAvailableExternallyLinkage() || startsWith(F.getName(), "__scry_") ||
        F.hasFnAttribute(Attribute::Naked))
      continue;
    Defined.push_back(&F);
    std::vector<Item> Items;
    collect(F, Items);
    if (!Items.empty())
      Work.emplace_back(&F, std::move(Items));
  }
  if (Work.empty() && Defined.empty())
    return false;
  Base = new GlobalVariable(M, I32, false, GlobalValue::InternalLinkage, ConstantInt::get(I32, 0),
                            "__scry_module_base");
  PmLo = cast<GlobalVariable>(M.getOrInsertGlobal("__scry_pm_lo", IntPtr));
  PmHi = cast<GlobalVariable>(M.getOrInsertGlobal("__scry_pm_hi", IntPtr));
  Unlikely = MDBuilder(Ctx).createBranchWeights(1, 1000);
  for (auto &W : Work) {
    // Dependences are computed on the function as compiled, before instrumentation adds its
    // blocks, branches and calls.
    FunctionDeps FD = computeDeps(*W.first, depSites(W.second));
    instrument(*W.first, W.second);
    for (Instruction *T : FD.Branches)
      addSite(SCRY_SITE_BRANCH, T);
    addDeps(FD);
    SiteOf.clear();
    for (Instruction *I : Dead)
      I->eraseFromParent();
    Dead.clear();
  }
  std::sort(Deps.begin(), Deps.end());
  Deps.erase(std::unique(Deps.begin(), Deps.end()), Deps.end());
  NumDeps += Deps.size();
  NumFunctions += Work.size();
  addUnitSite();
  emitModuleCtor();
  return true;
}

} // namespace

PreservedAnalyses ScryPass::run(Module &M, ModuleAnalysisManager &) {
  bool Changed = Instrumenter(M).run();
  if (PrintStats)
    printStats(M.getSourceFileName());
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace scry

// Plugin entry point: `clang -fpass-plugin=scry-pass.so` runs the pass at the end of the
// optimization pipeline at every -O level (the O0 pipeline calls OptimizerLastEP callbacks too);
// `opt -load-pass-plugin=scry-pass.so -passes=scry` runs it by name.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "scry", "0.1", [](PassBuilder &PB) {
            PB.registerOptimizerLastEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(scry::ScryPass()); });
            PB.registerPipelineParsingCallback(
                [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name != "scry")
                    return false;
                  MPM.addPass(scry::ScryPass());
                  return true;
                });
          }};
}
