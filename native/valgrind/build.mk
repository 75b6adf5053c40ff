# native/valgrind/build.mk: scry's Valgrind tool, the recorder of `scry check --black-box`
# (docs/black-box.md), built from Debian's valgrind package (its pub_tool_*.h headers and the
# static libcoregrind and libvex it ships) and included by the top-level Makefile. `make valgrind`
# builds $(BUILD)/lib/scry/valgrind/, the directory VALGRIND_LIB names when scry runs
# `valgrind --tool=scry`: the tool executable scry-amd64-linux (linked as Valgrind links its own
# tools: static, no libc, its text at valt_load_address), the preload vgpreload_scry-amd64-linux.so
# (function wrappers, client requests to the tool) and links to Debian's core files (the core's
# preload, the default suppressions, the gdbserver descriptions).
VG_INC ?= /usr/include/valgrind
VG_LIBDIR ?= /usr/lib/x86_64-linux-gnu/valgrind
VG_CORE ?= /usr/libexec/valgrind
VG_CC ?= gcc
VG_DIR := $(BUILD)/lib/scry/valgrind
VG_TOOL := $(VG_DIR)/scry-amd64-linux
VG_PRELOAD := $(VG_DIR)/vgpreload_scry-amd64-linux.so
VG_DEFS := -DVGA_amd64=1 -DVGO_linux=1 -DVGP_amd64_linux=1 -DVGPV_amd64_linux_vanilla=1
VG_HDRS := $(wildcard native/valgrind/*.h) native/include/scry_trace_format.h
VG_TOOL_CFLAGS := -m64 -O2 -g -Wall -fno-strict-aliasing -fno-builtin -fno-stack-protector -fno-pie \
	-fno-omit-frame-pointer $(VG_DEFS) -I$(VG_INC) -I native/include -I native/valgrind
VG_TOOL_LDFLAGS := -m64 -static -nodefaultlibs -nostartfiles -no-pie -u _start -Wl,--build-id=none \
	-Wl,-Ttext-segment=0x58000000
VG_PRELOAD_CFLAGS := -m64 -O2 -g -Wall -fPIC -fno-omit-frame-pointer -fno-stack-protector $(VG_DEFS) \
	-I$(VG_INC) -I native/include -I native/valgrind

.PHONY: valgrind
valgrind: $(VG_TOOL) $(VG_PRELOAD) $(VG_DIR)/.core

$(VG_TOOL): native/valgrind/scry_main.c $(VG_HDRS)
	@mkdir -p $(dir $@) $(BUILD)/obj/valgrind
	$(VG_CC) $(VG_TOOL_CFLAGS) -c -o $(BUILD)/obj/valgrind/scry_main.o $<
	$(VG_CC) $(VG_TOOL_LDFLAGS) -o $@ $(BUILD)/obj/valgrind/scry_main.o \
		$(VG_LIBDIR)/libcoregrind-amd64-linux.a $(VG_LIBDIR)/libvex-amd64-linux.a \
		$(VG_LIBDIR)/libgcc-sup-amd64-linux.a -lgcc

$(VG_PRELOAD): native/valgrind/scry_preload.c $(VG_HDRS)
	@mkdir -p $(dir $@)
	$(VG_CC) $(VG_PRELOAD_CFLAGS) -shared -nodefaultlibs -Wl,-z,interpose,-z,initfirst -o $@ $<

# Debian's core files, linked into the tool's directory (Valgrind looks for all of them there).
$(VG_DIR)/.core: $(VG_TOOL)
	@mkdir -p $(VG_DIR)
	for f in $(VG_CORE)/vgpreload_core-amd64-linux.so $(VG_CORE)/default.supp $(VG_CORE)/64bit-*.xml $(VG_CORE)/amd64-*.xml; do \
		test -e "$$f" && ln -sf "$$f" $(VG_DIR)/; done; true
	touch $@
