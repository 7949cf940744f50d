#!/bin/bash
# Install everything metaroce needs on a fresh Debian 12 machine, and fetch
# the pieces of Debian we build and boot against:
#   - the stock Debian 6.1 kernel image (booted by the qemu lab),
#   - rdma-core source (trixie, 56.1) for the provider build,
#   - linux-source-6.1 for KUnit on UML and checkpatch.
# Idempotent: re-running it skips what is already there.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${METAROCE_CACHE:-$ROOT/.cache}
mkdir -p "$CACHE"

log() { printf '[setup] %s\n' "$*"; }

PKGS=(
	build-essential kmod cpio bc flex bison libelf-dev libssl-dev dwarves
	linux-headers-amd64 linux-source-6.1
	qemu-system-x86 busybox-static
	rdma-core libibverbs-dev librdmacm-dev ibverbs-utils rdmacm-utils
	ibverbs-providers perftest iperf3 iproute2 iptables ethtool
	cmake ninja-build pkg-config libnl-3-dev libnl-route-3-dev
	libudev-dev python3-docutils dpkg-dev clang libclang-rt-14-dev
	gnuplot-nox python3 iputils-ping tcpdump linux-perf
)

SRC_LIST=/etc/apt/sources.list.d/metaroce-trixie-src.sources
if [ ! -f "$SRC_LIST" ]; then
	log "adding trixie deb-src entry (for rdma-core provider headers)"
	cat >"$SRC_LIST" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	rm -f "$CACHE/.apt-updated"
fi

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] || [ ! -f "$CACHE/.apt-updated" ]; then
	log "apt-get update"
	apt-get update -qq
	touch "$CACHE/.apt-updated"
fi
if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The kernel version the installed headers are for; the lab boots the same.
KVER=$(cd /usr/src && ls -d linux-headers-*-amd64 | sort -V | tail -1 | sed 's/^linux-headers-//')
echo "$KVER" >"$CACHE/kver"
log "kernel: $KVER"

KDIR="$CACHE/kernel-$KVER"
if [ ! -f "$KDIR/boot/vmlinuz-$KVER" ]; then
	log "fetching linux-image-$KVER"
	rm -rf "$KDIR" && mkdir -p "$KDIR"
	(cd "$CACHE" && apt-get download -qq "linux-image-$KVER" 2>&1 | grep -v unsandboxed || true)
	dpkg -x "$CACHE"/linux-image-"$KVER"_*.deb "$KDIR"
	depmod -b "$KDIR" "$KVER"
fi

RDMA_SRC="$CACHE/rdma-core"
if [ ! -f "$RDMA_SRC/libibverbs/driver.h" ]; then
	log "fetching rdma-core source"
	rm -rf "$CACHE/rdma-core-dl" "$RDMA_SRC" && mkdir -p "$CACHE/rdma-core-dl"
	# Only the orig tarball is needed (and is what the mirror serves
	# reliably); take its URI and checksum from the deb-src index.
	read -r uri name _size sum < <(apt-get source --print-uris -qq rdma-core |
		grep "orig.tar" | head -1)
	uri=${uri//\'/}
	curl -fsSL -o "$CACHE/rdma-core-dl/$name" "$uri"
	echo "${sum#SHA256:}  $CACHE/rdma-core-dl/$name" | sha256sum -c --quiet
	tarball="$CACHE/rdma-core-dl/$name"
	mkdir -p "$RDMA_SRC"
	tar -xzf "$tarball" -C "$RDMA_SRC" --strip-components=1
fi
log "rdma-core: $(ls "$CACHE"/rdma-core-dl/*.orig.tar.gz | xargs -n1 basename)"

LSRC="$CACHE/linux-source"
if [ ! -f "$LSRC/Makefile" ]; then
	log "unpacking linux-source-6.1"
	rm -rf "$LSRC" && mkdir -p "$LSRC"
	tar -xf /usr/src/linux-source-6.1.tar.xz -C "$LSRC" --strip-components=1
fi
log "done"
