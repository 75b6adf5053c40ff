# test/mapcli/build.mk: builds PMDK's `mapcli` example (a key-value shell over eight persistent
# maps: btree, ctree, rbtree, rtree, hashmap_tx, hashmap_atomic, hashmap_rp, skiplist) from the
# sources Debian ships in libpmemobj-dev, twice:
#   $(BUILD)/mapcli/mapcli         instrumented, compiled with `scry cc` (MAPCLI_CC)
#   $(BUILD)/mapcli/mapcli.native  plain clang-14 (MAPCLI_NATIVE_CC, -gdwarf-4), for benchmarks and
#                                  black-box mode
# Included by the top Makefile, which defines BUILD and SCRY. Usage:
#   make mapcli                              # both builds (builds scry and the runtime first)
#   make mapcli-native                       # the plain build only
#   make mapcli MAPCLI_CC=clang-14 MAPCLI_DEPS=   # instrumented build with another compiler
#   make mapcli-injected                     # $(BUILD)/mapcli/mapcli-injected: instrumented, with
#                                            # the injected bug of test/mapcli/patches-injected/
# Run: PMEM_IS_PMEM_FORCE=1 build/mapcli/mapcli.native btree /tmp/p.pool [seed] < workload
# (mapcli creates a 160 MiB pool when the file does not exist, and opens it otherwise).

SCRY ?= $(BUILD)/bin/scry
PMDK_EXAMPLES ?= /usr/share/doc/libpmemobj-dev/examples
PMDK_SRC := $(BUILD)/pmdk-src
MAPCLI_DIR := $(BUILD)/mapcli
MAPCLI_CC ?= $(SCRY) cc
MAPCLI_NATIVE_CC ?= clang-14
# What the instrumented build needs first (the wrapper, the runtime, the pass plugin).
MAPCLI_DEPS ?= scry native
MAPCLI_CFLAGS ?= -O2 -g -fno-omit-frame-pointer
# The plain build's debug information is DWARF 4, which Valgrind 3.19 reads (black-box mode,
# docs/black-box.md); the code is the same.
MAPCLI_NATIVE_CFLAGS ?= $(MAPCLI_CFLAGS) -gdwarf-4
MAPCLI_LIBS := -lpmemobj -lpmem -lpthread
MAPCLI_INCLUDES := -I$(CURDIR)/test/mapcli/include -I$(PMDK_SRC) -I$(PMDK_SRC)/map \
	-I$(PMDK_SRC)/hashmap -I$(PMDK_SRC)/tree_map -I$(PMDK_SRC)/list_map

# The sources of mapcli, as PMDK's map/Makefile assembles them (mapcli.o + libmap.a).
MAPCLI_SRCS := map/mapcli.c map/map.c \
	map/map_btree.c map/map_ctree.c map/map_rbtree.c map/map_rtree.c \
	map/map_hashmap_tx.c map/map_hashmap_atomic.c map/map_hashmap_rp.c map/map_skiplist.c \
	tree_map/btree_map.c tree_map/ctree_map.c tree_map/rbtree_map.c tree_map/rtree_map.c \
	hashmap/hashmap_tx.c hashmap/hashmap_atomic.c hashmap/hashmap_rp.c \
	list_map/skiplist_map.c
MAPCLI_PATCHES := $(wildcard $(CURDIR)/test/mapcli/patches/*.patch)
MAPCLI_OBJS := $(MAPCLI_SRCS:%.c=$(MAPCLI_DIR)/obj/%.o)
MAPCLI_NATIVE_OBJS := $(MAPCLI_SRCS:%.c=$(MAPCLI_DIR)/obj-native/%.o)

.PHONY: mapcli mapcli-native mapcli-scry pmdk-src

mapcli: mapcli-scry mapcli-native
mapcli-scry: $(MAPCLI_DEPS)
	@$(MAKE) --no-print-directory $(MAPCLI_DIR)/mapcli
mapcli-native: $(MAPCLI_DIR)/mapcli.native
pmdk-src: $(PMDK_SRC)/.stamp

# Copies the examples (gunzipping any compressed source) and applies scry's patches.
$(PMDK_SRC)/.stamp: $(MAPCLI_PATCHES) $(CURDIR)/test/mapcli/build.mk
	@test -d $(PMDK_EXAMPLES) || { echo "error: $(PMDK_EXAMPLES) missing: install libpmemobj-dev" >&2; exit 1; }
	rm -rf $(PMDK_SRC) && mkdir -p $(PMDK_SRC)
	cp -R $(PMDK_EXAMPLES)/. $(PMDK_SRC)/
	find $(PMDK_SRC) -name '*.gz' -exec gunzip -f {} +
	chmod -R u+w $(PMDK_SRC)
	for p in $(MAPCLI_PATCHES); do patch -s -p1 -d $(PMDK_SRC) < $$p || exit 1; done
	touch $@

$(MAPCLI_DIR)/obj/%.o: $(PMDK_SRC)/.stamp $(CURDIR)/test/mapcli/include/ex_common.h
	@mkdir -p $(dir $@)
	$(MAPCLI_CC) $(MAPCLI_CFLAGS) $(MAPCLI_INCLUDES) -c $(PMDK_SRC)/$*.c -o $@

$(MAPCLI_DIR)/obj-native/%.o: $(PMDK_SRC)/.stamp $(CURDIR)/test/mapcli/include/ex_common.h
	@mkdir -p $(dir $@)
	$(MAPCLI_NATIVE_CC) $(MAPCLI_NATIVE_CFLAGS) $(MAPCLI_INCLUDES) -c $(PMDK_SRC)/$*.c -o $@

# The instrumented build is redone when scry's pass plugins or runtime change (the sub-make
# started by mapcli-scry runs after they are built, so the wildcards see them).
MAPCLI_PASS_DEPS := $(wildcard $(BUILD)/lib/scry/llvm-*/scry-pass.so)
MAPCLI_RT_DEPS := $(wildcard $(BUILD)/lib/scry/libscry_rt.a)
$(MAPCLI_OBJS): $(MAPCLI_PASS_DEPS)

$(MAPCLI_DIR)/mapcli: $(MAPCLI_OBJS) $(MAPCLI_RT_DEPS)
	$(MAPCLI_CC) $(MAPCLI_CFLAGS) -o $@ $(MAPCLI_OBJS) $(MAPCLI_LIBS)

$(MAPCLI_DIR)/mapcli.native: $(MAPCLI_NATIVE_OBJS)
	$(MAPCLI_NATIVE_CC) $(MAPCLI_NATIVE_CFLAGS) -o $@ $^ $(MAPCLI_LIBS)

# mapcli with an injected bug (docs/pmdk-examples.md, "An injected bug"): a separate copy of the
# sources, $(PMDK_SRC_INJECTED), gets scry's patches and then test/mapcli/patches-injected/*.patch,
# and is built with MAPCLI_CC into $(MAPCLI_DIR)/mapcli-injected. It is a test input for scry
# (a bug it must find), never a build to use.
PMDK_SRC_INJECTED := $(BUILD)/pmdk-src-injected
MAPCLI_INJECTED_PATCHES := $(wildcard $(CURDIR)/test/mapcli/patches-injected/*.patch)
MAPCLI_INJECTED_OBJS := $(MAPCLI_SRCS:%.c=$(MAPCLI_DIR)/obj-injected/%.o)
MAPCLI_INJECTED_INCLUDES := $(subst -I$(PMDK_SRC),-I$(PMDK_SRC_INJECTED),$(MAPCLI_INCLUDES))

.PHONY: mapcli-injected
mapcli-injected: $(MAPCLI_DEPS)
	@$(MAKE) --no-print-directory $(MAPCLI_DIR)/mapcli-injected

$(PMDK_SRC_INJECTED)/.stamp: $(MAPCLI_PATCHES) $(MAPCLI_INJECTED_PATCHES) $(CURDIR)/test/mapcli/build.mk
	@test -d $(PMDK_EXAMPLES) || { echo "error: $(PMDK_EXAMPLES) missing: install libpmemobj-dev" >&2; exit 1; }
	rm -rf $(PMDK_SRC_INJECTED) && mkdir -p $(PMDK_SRC_INJECTED)
	cp -R $(PMDK_EXAMPLES)/. $(PMDK_SRC_INJECTED)/
	find $(PMDK_SRC_INJECTED) -name '*.gz' -exec gunzip -f {} +
	chmod -R u+w $(PMDK_SRC_INJECTED)
	for p in $(MAPCLI_PATCHES) $(MAPCLI_INJECTED_PATCHES); do patch -s -p1 -d $(PMDK_SRC_INJECTED) < $$p || exit 1; done
	touch $@

$(MAPCLI_DIR)/obj-injected/%.o: $(PMDK_SRC_INJECTED)/.stamp $(CURDIR)/test/mapcli/include/ex_common.h
	@mkdir -p $(dir $@)
	$(MAPCLI_CC) $(MAPCLI_CFLAGS) $(MAPCLI_INJECTED_INCLUDES) -c $(PMDK_SRC_INJECTED)/$*.c -o $@

$(MAPCLI_INJECTED_OBJS): $(MAPCLI_PASS_DEPS)

$(MAPCLI_DIR)/mapcli-injected: $(MAPCLI_INJECTED_OBJS) $(MAPCLI_RT_DEPS)
	$(MAPCLI_CC) $(MAPCLI_CFLAGS) -o $@ $(MAPCLI_INJECTED_OBJS) $(MAPCLI_LIBS)
