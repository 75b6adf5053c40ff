# native/fsshim/build.mk: scry's mapping shim for file-system mode (included by the top-level
# Makefile; BUILD is the build directory). `make fsshim` builds $(BUILD)/lib/scry/libscry_fsshim.so,
# which `scry fs check` puts in LD_PRELOAD of the recorded program (fs/strace/mmap.go) so that
# writes through shared writable mappings of files show in strace's output.
SHIM_CC ?= $(shell command -v gcc >/dev/null 2>&1 && echo gcc || echo clang)
SHIM_CFLAGS ?= -O2 -g -fPIC -Wall -Wextra -pthread
SHIM_LIB := $(BUILD)/lib/scry/libscry_fsshim.so

.PHONY: fsshim
fsshim: $(SHIM_LIB)

$(SHIM_LIB): native/fsshim/fsshim.c native/fsshim/build.mk
	@mkdir -p $(dir $@)
	$(SHIM_CC) $(SHIM_CFLAGS) -shared -o $@ $< -ldl
