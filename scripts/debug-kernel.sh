#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the lab's debug kernel: Debian's 6.1 (linux-source-6.1, unpacked by
# scripts/setup.sh in .cache/linux-source) with Debian's own config, trimmed
# to the modules the lab loads (a localmodconfig over the list below) and
# with the debugging the stock kernel lacks: KASAN (generic, inline),
# lockdep (PROVE_LOCKING, PROVE_RCU), DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS
# (timers, work, rcu heads), kmemleak (no automatic scan: the lab scans at
# lab_stop) and fault injection (failslab with the stack trace filter).
#
# Output, laid out like the stock kernel's so the lab boots it as is:
#   .cache/kernel-KVER/boot/vmlinuz-KVER   (KVER is e.g. 6.1.192-debug)
#   .cache/kernel-KVER/lib/modules/KVER/   (modules_install + depmod)
#   .cache/kernel-build-debug/             (the O= build tree: KDIR for
#                                           out-of-tree modules)
#   build/module-debug/metaroce.ko         (metaroce built against it)
# and the last line printed on stdout is KVER. Then:
#   LAB_KVER=KVER LAB_MODULE=$PWD/build/module-debug/metaroce.ko \
#       bash selftests/lab/foundation.sh
# The kernel is rebuilt only when its key changes: a hash of this script's
# config (fragment, module list, the Kconfig patch), Debian's config, the
# linux-source version and the compiler (.cache/kernel-KVER/.key).
#
# usage: scripts/debug-kernel.sh [--kernel-only] [--force]
#   --kernel-only  do not build metaroce.ko
#   --force        rebuild the kernel even if the key matches
# Environment: METAROCE_CACHE (default .cache), DEBUG_KERNEL_JOBS (2).
# From scratch: about an hour on 2 cores (nice 19); after a config change
# the O= tree is kept and make is incremental (adding bridge, stp and llc:
# 5 min 43 s); progress in .cache/kernel-build-debug/build.log.
# nice orders processes only within one autogroup: with the kernel's
# sched_autogroup on (the default), builds and labs started from other
# sessions share the CPU equally whatever their nice value (measured:
# this build ran 34 objects/min beside nice-19 compiles of another
# session, 83/min after `echo 0 > /proc/sys/kernel/sched_autogroup_enabled`).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${METAROCE_CACHE:-$ROOT/.cache}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd -P)	# .cache may be a symlink shared by work trees
LSRC=$CACHE/linux-source
SRC=$CACHE/linux-source-debug	# hard-linked copy with the Kconfig patch
BUILD=$CACHE/kernel-build-debug
JOBS=${DEBUG_KERNEL_JOBS:-2}
LOCALVERSION=-debug
KERNEL_ONLY=
FORCE=

while [ $# -gt 0 ]; do
	case $1 in
	--kernel-only) KERNEL_ONLY=1 ;;
	--force) FORCE=1 ;;
	*) echo "usage: $0 [--kernel-only] [--force]" >&2; exit 2 ;;
	esac
	shift
done

log() { printf '[debug-kernel] %s\n' "$*" >&2; }
die() { printf '[debug-kernel] error: %s\n' "$*" >&2; exit 1; }

[ -f "$LSRC/Makefile" ] || die "no linux-source at $LSRC (run scripts/setup.sh)"
BASE_KVER=$(cat "$CACHE/kver" 2>/dev/null) || die "no $CACHE/kver (run scripts/setup.sh)"
BASE_CONFIG=$CACHE/kernel-$BASE_KVER/boot/config-$BASE_KVER
BASE_MODDIR=$CACHE/kernel-$BASE_KVER/lib/modules/$BASE_KVER
[ -f "$BASE_CONFIG" ] || die "no $BASE_CONFIG (run scripts/setup.sh)"
case $BASE_KVER in 6.1.*) ;; *) die "the lab kernel $BASE_KVER is not 6.1" ;; esac

SRCVER=$(sed -n 's/^VERSION = //p; s/^PATCHLEVEL = //p; s/^SUBLEVEL = //p' \
	"$LSRC/Makefile" | paste -sd.)
KVER=$SRCVER$LOCALVERSION
KDIR=$CACHE/kernel-$KVER

# The modules the lab loads (modprobe, tc, iptables-nft, rdma link add,
# nvme connect, the initramfs): every module of the stock kernel not in
# this list (or a dependency of one) is configured out.
MODULES=(
	virtio_pci virtio_net 9p 9pnet_virtio netfs fscache
	ib_core ib_uverbs ib_umad rdma_cm ib_cm iw_cm rdma_ucm rdma_rxe
	nvme_core nvme_fabrics nvme_rdma nvmet nvmet_rdma brd null_blk
	t10_pi crc_t10dif crct10dif_generic crct10dif_pclmul crc64_rocksoft
	crc64_rocksoft_generic
	veth dummy bridge stp llc 8021q udp_tunnel ip6_udp_tunnel libcrc32c crc32c_generic
	crc32c_intel crc32_pclmul configfs loop tun overlay
	sch_netem sch_htb sch_fq sch_ingress sch_prio sch_tbf
	cls_u32 cls_matchall cls_bpf cls_flower act_gact act_mirred act_bpf
	nfnetlink nf_tables nft_compat x_tables xt_tcpudp xt_multiport
	xt_comment xt_u32 ip_tables iptable_filter ip6_tables ip6table_filter
	nf_conntrack nf_defrag_ipv4 nf_defrag_ipv6 nft_ct
)

# Debug and trimming options set over the trimmed Debian config; the ones
# marked "!" must come out as set, or the build stops. No debug info (the
# reports symbolize through kallsyms), no MODVERSIONS, no Xen, SELinux or
# TOMOYO (Debian builds them in, the lab uses none); module signing stays
# (the lockdown LSM selects it) with a key generated at build time, and
# metaroce.ko loads unsigned as on the stock kernel. Speed under TCG:
# - the frame pointer unwinder, not ORC: KASAN and kmemleak save a stack
#   trace on every allocation and free, and ORC's table lookups made that
#   most of the debug kernel's cost;
# - acpi=noirq (built into the command line): PCI interrupt routing from
#   the BIOS table instead of the ACPI interpreter, whose allocations under
#   KASAN + kmemleak took ~25 s per virtio device at boot.
read -r -d '' FRAGMENT <<'CFG' || true
!CONFIG_LOCALVERSION="-debug"
!# CONFIG_LOCALVERSION_AUTO is not set
!CONFIG_KASAN=y
!CONFIG_KASAN_GENERIC=y
!CONFIG_KASAN_INLINE=y
CONFIG_KASAN_VMALLOC=y
!CONFIG_PROVE_LOCKING=y
!CONFIG_PROVE_RCU=y
!CONFIG_DEBUG_ATOMIC_SLEEP=y
!CONFIG_DEBUG_OBJECTS=y
!CONFIG_DEBUG_OBJECTS_TIMERS=y
!CONFIG_DEBUG_OBJECTS_WORK=y
CONFIG_DEBUG_OBJECTS_FREE=y
CONFIG_DEBUG_OBJECTS_RCU_HEAD=y
CONFIG_DEBUG_OBJECTS_PERCPU_COUNTER=y
!CONFIG_DEBUG_KMEMLEAK=y
!# CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF is not set
!# CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN is not set
CONFIG_DEBUG_KMEMLEAK_MEM_POOL_SIZE=32000
!CONFIG_FAULT_INJECTION=y
!CONFIG_FAILSLAB=y
!CONFIG_FAULT_INJECTION_DEBUG_FS=y
!CONFIG_FAULT_INJECTION_STACKTRACE_FILTER=y
CONFIG_DEBUG_LIST=y
CONFIG_DEBUG_SG=y
!CONFIG_DEBUG_INFO_NONE=y
!CONFIG_UNWINDER_FRAME_POINTER=y
# CONFIG_UNWINDER_ORC is not set
!CONFIG_CMDLINE_BOOL=y
!CONFIG_CMDLINE="acpi=noirq"
# CONFIG_MODVERSIONS is not set
CONFIG_SYSTEM_TRUSTED_KEYS=""
!CONFIG_MODULE_COMPRESS_NONE=y
# CONFIG_XEN is not set
# CONFIG_SECURITY_SELINUX is not set
# CONFIG_SECURITY_TOMOYO is not set
CFG

# 6.1 keeps the failslab stack trace filter (the only way to fail the
# allocations of one module) off x86_64, from when its unwinder was not
# reliable; upstream allowed it again (ORC). The copy of the source tree
# the debug kernel builds from drops that line.
KCONFIG_PATCH='/^config FAULT_INJECTION_STACKTRACE_FILTER$/,/^$/{/depends on !X86_64/d}'

KEY=$( {
	echo "src $SRCVER $(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null)"
	echo "cc $(gcc --version | head -1)"
	echo "modules ${MODULES[*]}"
	echo "patch $KCONFIG_PATCH"
	printf '%s\n' "$FRAGMENT"
	cat "$BASE_CONFIG"
} | sha256sum | cut -c1-16)

# One build at a time (.cache is shared by every work tree).
mkdir -p "$CACHE"
exec 9>"$CACHE/.debug-kernel.lock"
if ! flock -n 9; then
	log "another debug-kernel.sh holds the lock; waiting"
	flock 9
fi

build_kernel() {
	local t0=$SECONDS m d cfg want line
	log "building $KVER (key $KEY) in $BUILD"

	# A private tree of hard links, so the patch (and scripts/kunit.sh's
	# glue in the shared tree) stay where they belong; files are replaced,
	# never written through a link.
	if [ ! -f "$SRC/.metaroce-src" ] || [ "$(cat "$SRC/.metaroce-src")" != "$SRCVER" ]; then
		log "hard-linking $LSRC to $SRC"
		rm -rf "$SRC"
		cp -al "$LSRC" "$SRC"
		rm -rf "$SRC/drivers/metaroce_kunit"
		echo "$SRCVER" >"$SRC/.metaroce-src"
	fi
	for f in drivers/Kconfig drivers/Makefile; do
		grep -v metaroce_kunit "$LSRC/$f" >"$SRC/$f.new"
		if cmp -s "$SRC/$f.new" "$SRC/$f"; then rm "$SRC/$f.new"; else mv "$SRC/$f.new" "$SRC/$f"; fi
	done
	sed "$KCONFIG_PATCH" "$LSRC/lib/Kconfig.debug" >"$SRC/lib/Kconfig.debug.new"
	if cmp -s "$SRC/lib/Kconfig.debug.new" "$SRC/lib/Kconfig.debug"; then
		rm "$SRC/lib/Kconfig.debug.new"
	else
		mv "$SRC/lib/Kconfig.debug.new" "$SRC/lib/Kconfig.debug"
	fi
	grep -A3 '^config FAULT_INJECTION_STACKTRACE_FILTER$' "$SRC/lib/Kconfig.debug" |
		grep -q '!X86_64' && die "Kconfig patch did not apply"

	# The module list with the stock modules' dependencies, as lsmod output
	# for localmodconfig.
	mkdir -p "$BUILD"
	declare -A dep seen
	while IFS=: read -r p rest; do
		m=${p##*/}; m=${m%%.ko*}; m=${m//-/_}
		dep[$m]=$rest
	done <"$BASE_MODDIR/modules.dep"
	visit() {
		local n=${1//-/_} x
		[ -n "${seen[$n]:-}" ] && return
		seen[$n]=1
		for x in ${dep[$n]:-}; do
			x=${x##*/}; x=${x%%.ko*}
			visit "$x"
		done
	}
	for m in "${MODULES[@]}"; do
		[ -n "${dep[$m]+x}" ] || log "note: $m is not a module of $BASE_KVER"
		visit "$m"
	done
	{
		echo "Module                  Size  Used by"
		for m in "${!seen[@]}"; do echo "$m 0 0"; done | sort
	} >"$BUILD/lab.lsmod"

	cp "$BASE_CONFIG" "$BUILD/.config"
	make -s -C "$SRC" O="$BUILD" olddefconfig >/dev/null
	LSMOD=$BUILD/lab.lsmod make -s -C "$SRC" O="$BUILD" localmodconfig \
		</dev/null >"$BUILD/localmodconfig.log" 2>&1 ||
		die "localmodconfig failed: see $BUILD/localmodconfig.log"
	printf '%s\n' "$FRAGMENT" | sed 's/^!//' >"$BUILD/debug.fragment"
	(cd "$SRC" && scripts/kconfig/merge_config.sh -m -O "$BUILD" \
		"$BUILD/.config" "$BUILD/debug.fragment" >/dev/null)
	make -s -C "$SRC" O="$BUILD" olddefconfig >/dev/null
	cfg=$BUILD/.config
	while IFS= read -r line; do
		case $line in '!'*) ;; *) continue ;; esac
		want=${line#!}
		grep -qxF "$want" "$cfg" || die "config: '$want' did not stick"
	done <<<"$FRAGMENT"
	while IFS= read -r line; do
		line=${line#!}
		grep -qxF "$line" "$cfg" || log "note: config: '$line' did not stick"
	done <<<"$FRAGMENT"
	log "config: $(grep -c '=y$' "$cfg") =y, $(grep -c '=m$' "$cfg") =m"

	log "make -j$JOBS (nice 19; log $BUILD/build.log)"
	if ! nice -n 19 make -C "$SRC" O="$BUILD" -j"$JOBS" bzImage modules \
		>"$BUILD/build.log" 2>&1; then
		tail -n 30 "$BUILD/build.log" >&2
		die "kernel build failed: see $BUILD/build.log"
	fi
	m=$(cat "$BUILD/include/config/kernel.release")
	[ "$m" = "$KVER" ] || die "built $m, expected $KVER"

	rm -rf "$KDIR.new"
	mkdir -p "$KDIR.new/boot"
	make -s -C "$SRC" O="$BUILD" INSTALL_MOD_PATH="$KDIR.new" \
		INSTALL_MOD_STRIP=1 DEPMOD=/bin/true modules_install >/dev/null
	cp "$BUILD/arch/x86/boot/bzImage" "$KDIR.new/boot/vmlinuz-$KVER"
	cp "$BUILD/System.map" "$KDIR.new/boot/System.map-$KVER"
	cp "$cfg" "$KDIR.new/boot/config-$KVER"
	d=$KDIR.new/lib/modules/$KVER
	rm -f "$d/build" "$d/source"
	ln -s "$BUILD" "$d/build"
	depmod -b "$KDIR.new" "$KVER"
	echo "$KEY" >"$KDIR.new/.key"
	rm -rf "$KDIR"
	mv "$KDIR.new" "$KDIR"
	d=$KDIR/lib/modules/$KVER
	log "built $KVER in $(( (SECONDS - t0) / 60 )) min $(( (SECONDS - t0) % 60 )) s:" \
		"$(find "$d" -name '*.ko' | wc -l) modules," \
		"vmlinuz $(du -h "$KDIR/boot/vmlinuz-$KVER" | cut -f1)"
}

if [ -n "$FORCE" ] || [ "$(cat "$KDIR/.key" 2>/dev/null)" != "$KEY" ] ||
	[ ! -f "$KDIR/boot/vmlinuz-$KVER" ] || [ ! -f "$BUILD/Module.symvers" ]; then
	build_kernel
else
	log "$KVER is up to date (key $KEY)"
fi

if [ -z "$KERNEL_ONLY" ]; then
	log "building metaroce.ko for $KVER in build/module-debug"
	make -C "$ROOT" -j"$JOBS" KVER="$KVER" KDIR="$BUILD" MODOUT=build/module-debug \
		module >&2 || die "metaroce.ko build failed"
fi
echo "$KVER"
