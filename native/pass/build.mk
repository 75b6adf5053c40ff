# native/pass/build.mk: builds the scry pass plugin, one per LLVM major version in
# LLVM_VERSIONS, into $(BUILD)/lib/scry/llvm-<v>/scry-pass.so. Each plugin is compiled with its own
# version's headers (llvm-config-<v> --cxxflags) and links no LLVM library: it is loaded into
# clang-<v> (`clang-<v> -fpass-plugin=.../scry-pass.so`), whose LLVM symbols it uses.
#
# Included by the top Makefile, which defines BUILD and LLVM_VERSIONS.

SCRY_PASS_DIR := native/pass
SCRY_PASS_SRCS := $(wildcard $(SCRY_PASS_DIR)/*.cpp)
SCRY_PASS_HDRS := $(wildcard $(SCRY_PASS_DIR)/*.h) native/include/scry_hooks.def native/include/scry_abi.def \
	native/include/scry_trace_format.h
SCRY_PASS_LIBS := $(foreach v,$(LLVM_VERSIONS),$(BUILD)/lib/scry/llvm-$(v)/scry-pass.so)

.PHONY: pass
pass: $(SCRY_PASS_LIBS)

# One rule per version: the recipe must call that version's clang++ and llvm-config.
define SCRY_PASS_RULE
$(BUILD)/lib/scry/llvm-$(1)/scry-pass.so: $(SCRY_PASS_SRCS) $(SCRY_PASS_HDRS) $(SCRY_PASS_DIR)/build.mk
	@mkdir -p $$(@D)
	clang++-$(1) -shared -fPIC -O2 -Wall -Wno-unused-parameter $$$$(llvm-config-$(1) --cxxflags) \
		-Inative/include -o $$@.tmp $(SCRY_PASS_SRCS) && mv $$@.tmp $$@
endef
$(foreach v,$(LLVM_VERSIONS),$(eval $(call SCRY_PASS_RULE,$(v))))
