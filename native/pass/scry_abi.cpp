//go:build ignore

// (The constraint above keeps `go build`/`go test` from treating this directory's C++ as cgo
// sources; the plugin is built by build.mk.)
//
// scry_abi.cpp: the ABI tables of the runtime (scry_abi.def, scry_hooks.def) lowered to LLVM
// types for the pass; see scry_abi.h.

#include "scry_abi.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ErrorHandling.h"

using namespace llvm;

namespace scry {

namespace {

// One row of a table as written: C text.
struct CRow {
  const char *Name, *Ret, *Params;
};

const CRow CallbackRows[] = {
#define SCRY_CALLBACK(ret, name, ...) {#name, #ret, #__VA_ARGS__},
#include "scry_abi.def"
#undef SCRY_CALLBACK
};

#define SCRY_STR_(x) #x
#define SCRY_STR(x) SCRY_STR_(x)
#define SCRY_RET(type) type
#define SCRY_NORET void
#define SCRY_OIDRET SCRY_PMEMOID
const CRow HookRows[] = {
#define SCRY_HOOK(name, result, ...) {#name, SCRY_STR(result), #__VA_ARGS__},
#include "scry_hooks.def"
#undef SCRY_HOOK
};
#undef SCRY_RET
#undef SCRY_NORET
#undef SCRY_OIDRET

CSignature parseRow(const CRow &R) {
  CSignature S;
  S.Name = R.Name;
  if (!lowerCType(R.Ret, false, S.Ret))
    report_fatal_error(Twine("scry: ABI table entry ") + R.Name + ": unknown result type '" + R.Ret + "'");
  StringRef Ps = StringRef(R.Params).trim();
  if (Ps.empty() || Ps == "void")
    return S;
  SmallVector<StringRef, 8> Parts;
  Ps.split(Parts, ',');
  for (StringRef P : Parts) {
    if (P.trim() == "...") {
      S.VarArg = true;
      break;
    }
    if (P.trim().endswith(" format") || P.trim().endswith("*format"))
      S.Format = static_cast<int>(S.Params.size());
    CType T;
    if (!lowerCType(P, true, T) || T == CType::Void)
      report_fatal_error(Twine("scry: ABI table entry ") + R.Name + ": unknown parameter type '" + P.trim() + "'");
    S.Params.push_back(T);
  }
  return S;
}

struct Tables {
  std::vector<CSignature> Callbacks;
  StringMap<CSignature> Hooks;
  Tables() {
    for (const CRow &R : CallbackRows)
      Callbacks.push_back(parseRow(R));
    for (const CRow &R : HookRows)
      Hooks[R.Name] = parseRow(R);
  }
};

const Tables &tables() {
  static const Tables T;
  return T;
}

} // namespace

bool lowerCType(StringRef Decl, bool Named, CType &Out) {
  Decl = Decl.trim();
  if (Decl.contains('*')) {
    Out = CType::Ptr;
    return true;
  }
  SmallVector<StringRef, 4> Words;
  Decl.split(Words, ' ', -1, false);
  SmallVector<StringRef, 4> Type;
  for (StringRef W : Words)
    if (W != "const" && W != "volatile" && W != "struct")
      Type.push_back(W);
  if (Named) {
    if (Type.size() < 2)
      return false; // every parameter of the tables is named
    Type.pop_back();
  }
  std::string T;
  for (StringRef W : Type)
    T += (T.empty() ? "" : " ") + W.str();
  static const StringMap<CType> Known = {
      {"void", CType::Void},         {"int", CType::I32},      {"unsigned", CType::I32},
      {"unsigned int", CType::I32},  {"uint32_t", CType::I32}, {"mode_t", CType::I32},
      {"size_t", CType::I64},        {"ssize_t", CType::I64},  {"off_t", CType::I64},
      {"uint64_t", CType::I64},      {"jmp_buf", CType::Ptr},  {"scry_pmemobj_constr", CType::Ptr},
      {"SCRY_PMEMOID", CType::Oid},
  };
  auto It = Known.find(T);
  if (It == Known.end())
    return false;
  Out = It->second;
  return true;
}

const CSignature &callbackSignature(Callback C) { return tables().Callbacks[static_cast<size_t>(C)]; }

const CSignature *hookSignature(StringRef Name) {
  auto It = tables().Hooks.find(Name);
  return It == tables().Hooks.end() ? nullptr : &It->second;
}

void llvmParams(CType T, LLVMContext &Ctx, Type *I8Ptr, std::vector<Type *> &Out, bool OidArray) {
  switch (T) {
  case CType::Void: break;
  case CType::Ptr: Out.push_back(I8Ptr); break;
  case CType::I32: Out.push_back(Type::getInt32Ty(Ctx)); break;
  case CType::I64: Out.push_back(Type::getInt64Ty(Ctx)); break;
  case CType::Oid:
    if (OidArray) {
      Out.push_back(ArrayType::get(Type::getInt64Ty(Ctx), 2));
      break;
    }
    Out.push_back(Type::getInt64Ty(Ctx));
    Out.push_back(Type::getInt64Ty(Ctx));
    break;
  }
}

Type *llvmResult(CType T, LLVMContext &Ctx, Type *I8Ptr) {
  switch (T) {
  case CType::Void: return Type::getVoidTy(Ctx);
  case CType::Ptr: return I8Ptr;
  case CType::I32: return Type::getInt32Ty(Ctx);
  case CType::I64: return Type::getInt64Ty(Ctx);
  case CType::Oid: return StructType::get(Type::getInt64Ty(Ctx), Type::getInt64Ty(Ctx));
  }
  return nullptr;
}

// kindMatches: an LLVM type is how T is passed (pointers of any pointee, before opaque pointers).
static bool kindMatches(Type *Ty, CType T) {
  switch (T) {
  case CType::Ptr: return Ty->isPointerTy();
  case CType::I32: return Ty->isIntegerTy(32);
  case CType::I64: return Ty->isIntegerTy(64);
  default: return false;
  }
}

// isOidArray: T is [2 x i64], AArch64's lowering of a PMEMoid.
static bool isOidArray(Type *T) {
  auto *AT = dyn_cast<ArrayType>(T);
  return AT && AT->getNumElements() == 2 && AT->getElementType()->isIntegerTy(64);
}

bool hookMatches(const CSignature &S, FunctionType *FT, bool OidArray) {
  Type *R = FT->getReturnType();
  switch (S.Ret) {
  case CType::Void:
    if (!R->isVoidTy())
      return false;
    break;
  case CType::Oid: {
    if (OidArray) {
      if (!isOidArray(R))
        return false;
      break;
    }
    auto *ST = dyn_cast<StructType>(R);
    if (!ST || ST->getNumElements() != 2 || !ST->getElementType(0)->isIntegerTy(64) ||
        !ST->getElementType(1)->isIntegerTy(64))
      return false;
    break;
  }
  default:
    if (!kindMatches(R, S.Ret))
      return false;
  }
  unsigned K = 0;
  for (CType P : S.Params) {
    if (P == CType::Oid && OidArray) {
      if (K >= FT->getNumParams() || !isOidArray(FT->getParamType(K)))
        return false;
      ++K;
      continue;
    }
    unsigned N = P == CType::Oid ? 2 : 1;
    for (unsigned J = 0; J < N; ++J, ++K)
      if (K >= FT->getNumParams() || !kindMatches(FT->getParamType(K), P == CType::Oid ? CType::I64 : P))
        return false;
  }
  return K == FT->getNumParams();
}

FunctionCallee declare(Module &M, StringRef Name, Type *Ret, ArrayRef<Type *> Params, bool VarArg) {
  FunctionCallee C = M.getOrInsertFunction(Name, FunctionType::get(Ret, Params, VarArg));
  if (auto *F = dyn_cast<Function>(C.getCallee()))
    if (F->isDeclaration())
      F->addFnAttr(Attribute::NoUnwind);
  return C;
}

} // namespace scry
