# native/runtime/build.mk: the scry C runtime, linked into every instrumented program (included by the
# top-level Makefile; BUILD is the build directory). `make runtime` builds
# $(BUILD)/lib/scry/libscry_rt.a and scry_rt.dynlist. Programs link it with
#   -Wl,--whole-archive libscry_rt.a -Wl,--no-whole-archive -Wl,--dynamic-list=scry_rt.dynlist -lpthread -ldl
# (the dynamic list exports the runtime's symbols to instrumented shared libraries).
# The runtime never links libpmem/libpmemobj: it finds the PMDK functions it calls with dlsym.
RT_CC ?= $(shell command -v gcc >/dev/null 2>&1 && echo gcc || echo clang)
RT_CFLAGS ?= -O2 -g -fPIC -Wall -Wextra -pthread -fno-strict-aliasing
RT_SRCS := $(wildcard native/runtime/*.c)
RT_HDRS := $(wildcard native/runtime/*.h) $(wildcard native/include/*.h) $(wildcard native/include/*.def)
RT_OBJS := $(patsubst native/runtime/%.c,$(BUILD)/obj/runtime/%.o,$(RT_SRCS))
RT_LIB := $(BUILD)/lib/scry/libscry_rt.a
# The linker's dynamic list of the runtime's symbols, which `scry cc` exports from executables.
RT_DYNLIST := $(BUILD)/lib/scry/scry_rt.dynlist

.PHONY: runtime
runtime: $(RT_LIB) $(RT_DYNLIST)

$(RT_DYNLIST): native/runtime/scry_rt.dynlist
	@mkdir -p $(dir $@)
	cp $< $@

$(RT_LIB): $(RT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/obj/runtime/%.o: native/runtime/%.c $(RT_HDRS)
	@mkdir -p $(dir $@)
	$(RT_CC) $(RT_CFLAGS) -I native/include -I native/runtime -c -o $@ $<

# The runtime of aarch64 programs (`scry cc --target=aarch64-linux-gnu`, run under qemu-aarch64:
# docs/persistency-profiles.md), cross-built with clang when Debian's aarch64 libc
# (libc6-dev-arm64-cross) and cross binutils are installed; skipped, with a note, otherwise.
RT_AARCH64_CC ?= $(shell for v in 16 14; do command -v clang-$$v >/dev/null 2>&1 && { echo clang-$$v; break; }; done)
RT_AARCH64_OK := $(and $(RT_AARCH64_CC),$(wildcard /usr/aarch64-linux-gnu/include/stdio.h),$(shell command -v aarch64-linux-gnu-ld 2>/dev/null))
RT_AARCH64_OBJS := $(patsubst native/runtime/%.c,$(BUILD)/obj/runtime-aarch64/%.o,$(RT_SRCS))
RT_AARCH64_LIB := $(BUILD)/lib/scry/aarch64/libscry_rt.a

.PHONY: runtime-aarch64
ifneq ($(RT_AARCH64_OK),)
runtime-aarch64: $(RT_AARCH64_LIB)
else
runtime-aarch64:
	@echo "note: no aarch64 cross toolchain (make deps installs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross): aarch64 runtime not built"
endif

$(RT_AARCH64_LIB): $(RT_AARCH64_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	llvm-ar-$(patsubst clang-%,%,$(RT_AARCH64_CC)) rcs $@ $^

$(BUILD)/obj/runtime-aarch64/%.o: native/runtime/%.c $(RT_HDRS)
	@mkdir -p $(dir $@)
	$(RT_AARCH64_CC) --target=aarch64-linux-gnu $(RT_CFLAGS) -I native/include -I native/runtime -c -o $@ $<
