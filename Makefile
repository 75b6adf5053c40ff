# scry: top-level build. `make` builds everything into build/ (bin/scry, the pass plugins, the
# runtime); `make test` runs the whole test suite; `make demo` installs what is missing from
# Debian's packages and shows scry on a bundled example and on PMDK's btree.
SHELL := /bin/bash
BUILD ?= $(CURDIR)/build
GO ?= go
export GOFLAGS ?= -mod=mod

# LLVM major versions to build a pass plugin for: every one whose llvm-config is installed.
LLVM_VERSIONS ?= $(sort $(foreach v,14 15 16 17 18 19,$(if $(shell command -v llvm-config-$(v) 2>/dev/null),$(v))))

DEBIAN_PACKAGES := clang-14 llvm-14-dev clang-16 llvm-16-dev libpmemobj-dev libpmem-dev

.PHONY: all deps scry native test demo bench clean fuzz

all: scry native

# Installs the Debian packages scry needs (as root; skipped when all are present).
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" != 0 ]; then echo "error: need root to apt-get install$$missing" >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

scry:
	@mkdir -p $(BUILD)/bin
	$(GO) build -o $(BUILD)/bin/scry ./cmd/scry

native: runtime pass headers

SCRY := $(BUILD)/bin/scry

include runtime/build.mk
include instrument/llvm/build.mk
include pmdk-examples/build.mk

headers:
	@mkdir -p $(BUILD)/include/scry
	cp runtime/include/scry.h $(BUILD)/include/scry/scry.h

# The README's test command. Tests that need the build fail (not skip) when it is missing.
test: deps all mapcli
	$(GO) vet ./...
	SCRY_REQUIRE_BUILD=1 SCRY_EXAMPLES_STRICT=1 BUILD=$(BUILD) $(GO) test -count=1 ./... 2>&1

clean:
	rm -rf $(BUILD)
