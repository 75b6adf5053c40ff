// scry_abi.h (pass side): the runtime's callbacks and library hooks as the pass sees them. Their
// signatures are written once, in C, in native/include/scry_abi.def (callbacks) and
// native/include/scry_hooks.def (hooked library functions); the runtime's prototypes are
// generated from the same tables. Here they are lowered to LLVM types as clang lowers them for
// x86-64 (pointers, i32, i64; a by-value PMEMoid is two i64, a returned one {i64, i64}).
#ifndef SCRY_PASS_ABI_H
#define SCRY_PASS_ABI_H

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Module.h"

#include <string>
#include <vector>

namespace scry {

// A C type of the ABI tables as the x86-64 calling convention passes it.
enum class CType { Void, Ptr, I32, I64, Oid };

// lowerCType parses one C declaration of the ABI tables ("const void *addr", "size_t len",
// "SCRY_PMEMOID oid"; a result type has no name) into how it is passed. It returns false for a
// type the tables must not use.
bool lowerCType(llvm::StringRef Decl, bool Named, CType &Out);

// One function of an ABI table: its name, result and fixed parameters.
struct CSignature {
  std::string Name;
  CType Ret = CType::Void;
  std::vector<CType> Params;
  bool VarArg = false; // the row's parameters end with "..."
  int Format = -1;     // index of a parameter named `format` (a printf format), -1 none
};

// The callbacks of native/include/scry_abi.def, in table order.
enum class Callback {
#define SCRY_CALLBACK(ret, name, ...) name,
#include "scry_abi.def"
#undef SCRY_CALLBACK
  Count
};

// callbackSignature: the lowered signature of a callback. The tables are checked when the
// plugin first uses them: a type lowerCType does not know is a fatal error naming the entry.
const CSignature &callbackSignature(Callback C);

// hookSignature: the lowered signature of library function Name in scry_hooks.def, or null when
// it is not hooked.
const CSignature *hookSignature(llvm::StringRef Name);

// hookMatches: the call's function type is the lowering of the hook's signature (same result,
// same fixed parameters in number and kind; variadic parts are not compared), so the call's
// arguments can be passed to the hooks unchanged. OidArray: the target passes and returns a
// PMEMoid as one [2 x i64] (AArch64's lowering of a 16-byte struct), not as two i64 / {i64, i64}
// (x86-64's).
bool hookMatches(const CSignature &S, llvm::FunctionType *FT, bool OidArray = false);

// llvmParams appends to Out the LLVM types of T passed as a parameter (a PMEMoid is two i64, or
// one [2 x i64] with OidArray; nothing for Void). I8Ptr is the pointer type to use.
void llvmParams(CType T, llvm::LLVMContext &Ctx, llvm::Type *I8Ptr, std::vector<llvm::Type *> &Out,
                bool OidArray = false);

// llvmResult is the LLVM type of T returned by a function.
llvm::Type *llvmResult(CType T, llvm::LLVMContext &Ctx, llvm::Type *I8Ptr);

// declare returns the declaration of a runtime function in M, created once with the attributes
// every runtime entry point has (nounwind: the runtime never unwinds into the program); VarArg
// for a variadic one.
llvm::FunctionCallee declare(llvm::Module &M, llvm::StringRef Name, llvm::Type *Ret,
                             llvm::ArrayRef<llvm::Type *> Params, bool VarArg = false);

} // namespace scry

#endif // SCRY_PASS_ABI_H
