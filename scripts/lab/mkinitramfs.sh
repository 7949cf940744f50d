#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the lab's busybox-static initramfs for the cached Debian kernel:
# /bin/busybox, the virtio-pci and 9p modules in dependency order and a tiny
# /init that mounts the host root over 9p and switch_roots into it (the guest
# agent, scripts/lab/guest-agent.sh, takes over from there).
#
# usage: mkinitramfs.sh [OUTPUT]   (default build/lab/initramfs-<kver>.cpio.gz)
# Prints the path of the image. Rebuilt only when an input is newer.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# The lab's LAB_KVER/LAB_KDIR (e.g. LAB_KVER=$(cat .cache/kver-6.12)) win.
KVER=${LAB_KVER:-${KVER:-$(cat "$ROOT/.cache/kver")}}
KDIR=${LAB_KDIR:-${KDIR:-$ROOT/.cache/kernel-$KVER}}
MODDIR=$KDIR/lib/modules/$KVER
OUT=${1:-$ROOT/build/lab/initramfs-$KVER.cpio.gz}
BUSYBOX=${BUSYBOX:-/bin/busybox}
# Modules the initramfs needs; their dependencies are added in load order.
TARGETS=(virtio_pci 9pnet_virtio 9p)

[ -f "$MODDIR/modules.dep" ] || {
	echo "mkinitramfs: $MODDIR/modules.dep missing (run scripts/setup.sh)" >&2
	exit 1
}
file "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' || {
	echo "mkinitramfs: $BUSYBOX is not a static busybox (apt-get install busybox-static)" >&2
	exit 1
}

if [ -f "$OUT" ] && [ "$OUT" -nt "$0" ] && [ "$OUT" -nt "$MODDIR/modules.dep" ] &&
	[ "$OUT" -nt "$BUSYBOX" ]; then
	echo "$OUT"
	exit 0
fi

# name -> relative path, from modules.dep ("kernel/x/y.ko: deps...")
declare -A path
while IFS=: read -r p _; do
	n=${p##*/}; n=${n%%.ko*}; n=${n//-/_}
	path[$n]=$p
done <"$MODDIR/modules.dep"

declare -A seen
order=()
visit() {
	local m=${1//-/_} d
	[ -n "${seen[$m]:-}" ] && return
	seen[$m]=1
	[ -n "${path[$m]:-}" ] || return 0	# built in
	for d in $(modinfo -F depends "$MODDIR/${path[$m]}" | tr , ' '); do
		visit "$d"
	done
	order+=("$m")
}
for t in "${TARGETS[@]}"; do visit "$t"; done

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE"/{bin,dev,proc,sys,newroot,lib/modules}
cp "$BUSYBOX" "$STAGE/bin/busybox"
# The kernel opens /dev/console for init before devtmpfs is mounted.
mknod -m 600 "$STAGE/dev/console" c 5 1
for m in "${order[@]}"; do
	src=$MODDIR/${path[$m]}
	case $src in
	*.ko.xz) xz -dc "$src" >"$STAGE/lib/modules/$m.ko" ;;
	*.ko.zst) zstd -qdc "$src" >"$STAGE/lib/modules/$m.ko" ;;
	*.ko.gz) gzip -dc "$src" >"$STAGE/lib/modules/$m.ko" ;;
	*) cp "$src" "$STAGE/lib/modules/$m.ko" ;;
	esac
	echo "$m" >>"$STAGE/lib/modules/order"
done

cat >"$STAGE/init" <<'INIT'
#!/bin/busybox sh
# metaroce lab initramfs: load virtio/9p, mount the host root read-only over
# 9p, put the cached kernel's modules over /usr/lib/modules, switch_root.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
die() {
	echo "lab-init: $*"
	echo o >/proc/sysrq-trigger
	sleep 10
}
for m in $(cat /lib/modules/order); do
	insmod /lib/modules/$m.ko || die "insmod $m failed"
done
root=/work/main
for a in $(cat /proc/cmdline); do
	case $a in mrc.root=*) root=${a#mrc.root=} ;; esac
done
o=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o $o,ro hostroot /newroot || die "mount hostroot failed"
mount -t 9p -o $o,ro modules /newroot/usr/lib/modules || die "mount modules failed"
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp || die "tmpfs /tmp failed"
mount -t tmpfs -o mode=755 tmpfs /newroot/run || die "tmpfs /run failed"
# The repo gets its own share: it may live under a path the guest hides
# (a CI clone in /tmp, say, now under the guest's tmpfs).
mkdir -p /newroot$root 2>/dev/null
mount -t 9p -o $o,ro repo /newroot$root || die "mount repo at $root failed"
for d in proc sys dev; do
	mount --move /$d /newroot/$d || die "move /$d failed"
done
[ -f /newroot$root/scripts/lab/guest-agent.sh ] ||
	die "no guest agent at $root/scripts/lab/guest-agent.sh"
exec switch_root /newroot /bin/bash $root/scripts/lab/guest-agent.sh
INIT
chmod +x "$STAGE/init"

mkdir -p "$(dirname "$OUT")"
(cd "$STAGE" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -9) >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "$OUT"
