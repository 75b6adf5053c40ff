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
