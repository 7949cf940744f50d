#!/bin/bash
# Install everything metaroce needs on a fresh Debian 12 machine, and fetch
# the pieces of Debian we build and boot against:
#   - the stock Debian 6.1 kernel image (booted by the qemu lab),
#   - rdma-core source (trixie, 56.1) for the provider build,
#   - linux-source-6.1 for KUnit on UML and checkpatch.
# Idempotent: re-running it skips what is already there.
#
# usage: scripts/setup.sh [--kernel SERIES]
#   --kernel 6.12 (or METAROCE_KERNEL=6.12) also fetches a second Debian
#   kernel series for the lab and the module build: its headers are
#   installed (from bookworm-security, else bookworm-backports, whose apt
#   source is added only then), its image is unpacked into
#   .cache/kernel-<kver> and <kver> is written to .cache/kver-SERIES.
#   .cache/kver (the default lab kernel, 6.1) is left as it is.
set -euo pipefail

EXTRA_SERIES=${METAROCE_KERNEL:-}
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) EXTRA_SERIES=${2:?--kernel needs a series, e.g. 6.12}; shift 2 ;;
	--kernel=*) EXTRA_SERIES=${1#--kernel=}; shift ;;
	*) echo "usage: $0 [--kernel SERIES]" >&2; exit 2 ;;
	esac
done

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
	gnuplot-nox python3 iputils-ping tcpdump linux-perf nvme-cli
	tshark	# selftests/wire: the Wireshark dissector (scripts/wireshark)
	debhelper dh-dkms dkms lintian chrpath fakeroot	# make deb (scripts/deb.sh)
	# selftests/lab/consumers-*.sh: the RDMA stacks people run
	nfs-kernel-server qperf fio libfabric-bin openmpi-bin libopenmpi-dev
	ucx-utils open-iscsi targetcli-fb
	python3-pyverbs	# selftests/lab/pyverbs.sh: rdma-core's test suite
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

# fetch_image KVER: unpack Debian's linux-image-KVER into .cache/kernel-KVER
# (booted by the lab, its lib/modules mounted in the guests).
fetch_image() {
	local kver=$1 kdir="$CACHE/kernel-$1"
	[ -f "$kdir/boot/vmlinuz-$kver" ] && return 0
	log "fetching linux-image-$kver"
	rm -rf "$kdir" && mkdir -p "$kdir"
	# apt's own cache has it if --kernel just installed it
	cp /var/cache/apt/archives/linux-image-"$kver"_*.deb "$CACHE"/ 2>/dev/null ||
		(cd "$CACHE" && apt-get download -qq "linux-image-$kver" 2>&1 | grep -v unsandboxed || true)
	dpkg -x "$CACHE"/linux-image-"$kver"_*.deb "$kdir"
	depmod -b "$kdir" "$kver"
}

# The kernel the lab boots by default: the one linux-headers-amd64 (6.1 on
# Debian 12) pulls in, not merely the newest headers (--kernel installs
# newer ones next to it).
KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 |
	grep -o 'linux-headers-[^ ,]*-amd64' | head -1 | sed 's/^linux-headers-//')
[ -n "$KVER" ] ||
	KVER=$(cd /usr/src && ls -d linux-headers-*-amd64 | sort -V | tail -1 | sed 's/^linux-headers-//')
echo "$KVER" >"$CACHE/kver"
log "kernel: $KVER"
fetch_image "$KVER"

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

# --kernel SERIES: the newest linux-headers-SERIES.N+debNN-amd64 (or +bpo)
# apt knows, installed; its image unpacked like the default one's.
if [ -n "$EXTRA_SERIES" ]; then
	KFILE="$CACHE/kver-$EXTRA_SERIES"
	XKVER=$(cat "$KFILE" 2>/dev/null || true)
	if [ -z "$XKVER" ] || [ ! -d "/usr/src/linux-headers-$XKVER" ]; then
		re="^linux-headers-${EXTRA_SERIES//./\\.}\\.[0-9]+\\+(deb|bpo)[0-9]*-amd64\$"
		pick() {
			apt-cache pkgnames "linux-headers-$EXTRA_SERIES." |
				grep -E "$re" | sort -V | tail -1 || true
		}
		hdr=$(pick)
		BPO_LIST=/etc/apt/sources.list.d/metaroce-bookworm-backports.sources
		if [ -z "$hdr" ] && [ ! -f "$BPO_LIST" ]; then
			log "no linux-headers-$EXTRA_SERIES.*: adding bookworm-backports"
			cat >"$BPO_LIST" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
			apt-get update -qq
			hdr=$(pick)
		fi
		[ -n "$hdr" ] || { log "no linux-headers for kernel $EXTRA_SERIES"; exit 1; }
		XKVER=${hdr#linux-headers-}
		if [ ! -d "/usr/src/linux-headers-$XKVER" ]; then
			# The headers depend on the image: apt installs it too.
			log "installing $hdr"
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends "$hdr" >/dev/null
		fi
		echo "$XKVER" >"$KFILE"
	fi
	log "kernel $EXTRA_SERIES: $XKVER"
	fetch_image "$XKVER"
fi
log "done"
