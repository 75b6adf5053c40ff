// scry_pass.h: the scry instrumentation pass (see scry_pass.cpp for what it instruments and why).
#ifndef SCRY_PASS_H
#define SCRY_PASS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/PassManager.h"

#include <vector>

namespace scry {

// ScryPass instruments a module for the scry runtime (native/include/scry_abi.h). It is a module
// pass because it adds one site table and one constructor per module. Required: it runs at -O0,
// where clang marks functions optnone.
struct ScryPass : llvm::PassInfoMixin<ScryPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &AM);
  static bool isRequired() { return true; }
};

// One PM operation found in an inline-assembly string.
struct AsmOp {
  enum KindT { Flush, Fence, Locked, NTStore } Kind = Flush;
  unsigned Arg = 0;     // flush kind (SCRY_FLUSH_*) or fence kind (SCRY_FENCE_*)
  int OperandRef = -1;  // asm operand the instruction names ($N), -1 if none
};

// parseAsm returns the flushes, fences, locked and non-temporal instructions of an LLVM inline
// asm string (operands spelled $N), in textual order.
std::vector<AsmOp> parseAsm(llvm::StringRef AsmStr);

// isClientRequestAsm: an inline asm string and constraint string are Valgrind's client request
// on amd64 (valgrind.h's VALGRIND_DO_CLIENT_REQUEST_EXPR).
bool isClientRequestAsm(llvm::StringRef AsmStr, llvm::StringRef Constraints);

// isReadOnlyLibc: a libc function that never writes PM, left uninstrumented.
bool isReadOnlyLibc(llvm::StringRef Name);

} // namespace scry

#endif // SCRY_PASS_H
