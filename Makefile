# SPDX-License-Identifier: GPL-2.0
#
# metaroce top-level Makefile.
#
#   make [KVER=6.1.0-57-amd64]   module + rdma-core provider
#   make module | provider | install | clean | check | demo | bench
#
# KVER defaults to the running kernel if its headers are installed, else
# the newest /usr/src/linux-headers-*-amd64.

ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

ifeq ($(origin KVER),undefined)
KVER := $(shell uname -r)
ifeq ($(wildcard /lib/modules/$(KVER)/build),)
KVER := $(patsubst /usr/src/linux-headers-%,%,$(lastword $(sort \
	$(wildcard /usr/src/linux-headers-*-amd64))))
endif
endif

ifneq ($(wildcard /lib/modules/$(KVER)/build),)
KDIR ?= /lib/modules/$(KVER)/build
else
KDIR ?= /usr/src/linux-headers-$(KVER)
endif

DESTDIR ?=
PROVIDER := $(ROOT)/build/provider/libmetaroce-rdmav34.so
IBV_LIBDIR ?= /usr/lib/x86_64-linux-gnu/libibverbs
IBV_CONFDIR ?= /etc/libibverbs.d

.PHONY: all module provider install install-module install-provider \
	clean clean-module check demo bench kver

all: module provider

module:
	@test -d "$(KDIR)" || { echo "no kernel headers for '$(KVER)' ($(KDIR))" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(ROOT) modules

provider:
	bash $(ROOT)/scripts/build-provider.sh

install: install-module install-provider

install-module: module
	install -D -m 644 $(ROOT)/metaroce.ko \
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
	@if [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(ROOT) clean; fi

check:
	bash $(ROOT)/scripts/test.sh

demo:
	bash $(ROOT)/scripts/demo.sh

bench:
	bash $(ROOT)/scripts/bench.sh $(BENCH_ARGS)

kver:
	@echo $(KVER)
