# SPDX-License-Identifier: GPL-2.0
#
# metaroce top-level Makefile.
#
#   make [KVER=6.1.0-57-amd64]   module + rdma-core provider
#   make module | provider | install | clean | check | demo | bench
#   make deb      Debian packages into build/deb (scripts/deb.sh)
#
# KVER defaults to the running kernel if its headers are installed, else
# the lab's kernel (.cache/kver, scripts/setup.sh), else the newest
# /usr/src/linux-headers-*-amd64.
#
# MODOUT=DIR builds the module in DIR (a tree of symlinks to the sources)
# instead of in place, so one checkout holds builds for several kernels:
#   make KVER=6.12.117+deb12-amd64 MODOUT=build/module-6.12 module

ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

ifeq ($(origin KVER),undefined)
KVER := $(shell uname -r)
ifeq ($(wildcard /lib/modules/$(KVER)/build),)
KVER := $(shell cat $(ROOT)/.cache/kver 2>/dev/null)
endif
ifeq ($(KVER),)
KVER := $(patsubst /usr/src/linux-headers-%,%,$(lastword $(sort \
	$(wildcard /usr/src/linux-headers-*-amd64))))
endif
endif

ifneq ($(wildcard /lib/modules/$(KVER)/build),)
KDIR ?= /lib/modules/$(KVER)/build
else ifneq ($(wildcard $(ROOT)/.cache/kernel-$(KVER)/lib/modules/$(KVER)/build/Makefile),)
# a kernel built under .cache (scripts/debug-kernel.sh): its build tree
KDIR ?= $(ROOT)/.cache/kernel-$(KVER)/lib/modules/$(KVER)/build
else
KDIR ?= /usr/src/linux-headers-$(KVER)
endif

ifneq ($(MODOUT),)
MODDIR := $(abspath $(MODOUT))
else
MODDIR := $(ROOT)
endif

DESTDIR ?=
PROVIDER := $(ROOT)/build/provider/libmetaroce-rdmav34.so
IBV_LIBDIR ?= /usr/lib/x86_64-linux-gnu/libibverbs
IBV_CONFDIR ?= /etc/libibverbs.d

.PHONY: all module provider install install-module install-provider \
	clean clean-module check demo bench kver deb

all: module provider

module:
	@test -d "$(KDIR)" || { echo "no kernel headers for '$(KVER)' ($(KDIR))" >&2; exit 1; }
ifneq ($(MODOUT),)
	@mkdir -p $(MODDIR) && find $(MODDIR) -xtype l -delete
	@cd $(ROOT) && for f in Kbuild $$(find include kernel -name '*.[ch]'); do \
		mkdir -p $(MODDIR)/$$(dirname $$f) && \
		ln -sfn $(ROOT)/$$f $(MODDIR)/$$f || exit 1; done
endif
	$(MAKE) -C $(KDIR) M=$(MODDIR) modules

provider:
	bash $(ROOT)/scripts/build-provider.sh

install: install-module install-provider

install-module: module
	install -D -m 644 $(MODDIR)/metaroce.ko \
		$(DESTDIR)/lib/modules/$(KVER)/updates/metaroce.ko
	test -n "$(DESTDIR)" || depmod -a $(KVER)

install-provider: provider
	install -D -m 644 $(PROVIDER) \
		$(DESTDIR)$(IBV_LIBDIR)/libmetaroce-rdmav34.so
	install -d $(DESTDIR)$(IBV_CONFDIR)
	echo "driver metaroce" > $(DESTDIR)$(IBV_CONFDIR)/metaroce.driver

clean: clean-module
	rm -rf $(ROOT)/build

clean-module:
	@if [ -d "$(KDIR)" ] && [ -d "$(MODDIR)" ]; then $(MAKE) -C $(KDIR) M=$(MODDIR) clean; fi

check:
	bash $(ROOT)/scripts/test.sh

demo:
	bash $(ROOT)/scripts/demo.sh

bench:
	bash $(ROOT)/scripts/bench.sh $(BENCH_ARGS)

kver:
	@echo $(KVER)

deb:
	bash $(ROOT)/scripts/deb.sh
