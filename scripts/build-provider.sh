#!/bin/bash
# Build the metaroce rdma-core provider (libmetaroce-rdmav34.so) inside the
# rdma-core source tree fetched by scripts/setup.sh (.cache/rdma-core).
#
# That tree is a throwaway build tree: this script links providers/metaroce
# into it, registers the provider and our ABI header with its cmake files,
# configures once into build/rdma-core and then builds only the provider's
# target. Re-runs are incremental.
#
# Result: build/provider/libmetaroce-rdmav34.so (+ metaroce.driver). Load it
# without installing: RDMAV_DRIVERS=$ROOT/build/provider/libmetaroce
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${METAROCE_CACHE:-$ROOT/.cache}
RDMA=$CACHE/rdma-core
BUILD=$ROOT/build/rdma-core
OUT=$ROOT/build/provider
PABI=34
TARGET=metaroce-rdmav$PABI
LIB=lib$TARGET.so

log() { printf '[build-provider] %s\n' "$*"; }
die() { printf '[build-provider] error: %s\n' "$*" >&2; exit 1; }

[ -f "$RDMA/libibverbs/driver.h" ] ||
	die "$RDMA is missing: run scripts/setup.sh first"
for t in cmake ninja pkg-config; do
	command -v "$t" >/dev/null || die "$t not found: run scripts/setup.sh"
done

# 1. The provider sources, linked so edits are seen without copying.
link=$RDMA/providers/metaroce
if [ "$(readlink "$link" 2>/dev/null)" != "$ROOT/providers/metaroce" ]; then
	rm -rf "$link"
	ln -s "$ROOT/providers/metaroce" "$link"
fi
grep -qx 'add_subdirectory(providers/metaroce)' "$RDMA/CMakeLists.txt" ||
	sed -i 's|^add_subdirectory(providers/rxe)$|&\nadd_subdirectory(providers/metaroce)|' \
		"$RDMA/CMakeLists.txt"
grep -qx 'add_subdirectory(providers/metaroce)' "$RDMA/CMakeLists.txt" ||
	die "could not register the provider in $RDMA/CMakeLists.txt"

# 2. The ABI header, copied only when it changed (keeps rebuilds minimal).
# Registered both as a published header and as a provider ABI, which
# generates kernel-abi/metaroce-abi.h for DECLARE_DRV_CMD.
hdr=$RDMA/kernel-headers/rdma/metaroce-abi.h
cmp -s "$ROOT/include/uapi/rdma/metaroce-abi.h" "$hdr" ||
	cp "$ROOT/include/uapi/rdma/metaroce-abi.h" "$hdr"
khdrs=$RDMA/kernel-headers/CMakeLists.txt
grep -q 'rdma/metaroce-abi.h' "$khdrs" ||
	sed -i 's|^  rdma/mana-abi.h$|&\n  rdma/metaroce-abi.h|' "$khdrs"
[ "$(grep -c 'rdma/metaroce-abi.h' "$khdrs")" -eq 2 ] ||
	die "could not register metaroce-abi.h in $khdrs"

# 3. Configure once; ninja re-runs cmake by itself when a CMakeLists changes.
if [ ! -f "$BUILD/build.ninja" ]; then
	log "configuring rdma-core in $BUILD"
	mkdir -p "$BUILD"
	cmake -S "$RDMA" -B "$BUILD" -GNinja -DNO_PYVERBS=1 -DNO_MAN_PAGES=1 \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >"$BUILD/configure.log" 2>&1 ||
		{ tail -30 "$BUILD/configure.log" >&2; die "cmake failed (see $BUILD/configure.log)"; }
fi

# 4. Build only the provider (and what it links: libibverbs, ccan, util).
ninja -C "$BUILD" -j"${JOBS:-2}" "$TARGET"

# 5. The provider is built against rdma-core 56.1 but loaded by the
# distribution's libibverbs: every versioned libibverbs symbol it imports
# must exist there (e.g. ibv_cmd_create_cq_ex2 does not in Debian 12's 44).
SYS_VERBS=${SYS_VERBS:-$(ldconfig -p | awk '/libibverbs\.so\.1 .*x86-64/ {p = p ? p : $NF} END {print p}')}
[ -f "$SYS_VERBS" ] || die "system libibverbs.so.1 not found (ibverbs-providers/libibverbs1)"
syms() { objdump -T "$1" | awk -v und="$2" '
	NF > 2 && ($0 ~ /\*UND\*/) == und && $(NF-1) ~ /IBVERBS_/ {
		v = $(NF-1); gsub(/[()]/, "", v); print v, $NF }' | sort -u; }
missing=$(comm -23 <(syms "$BUILD/lib/$LIB" 1) <(syms "$SYS_VERBS" 0))
[ -z "$missing" ] ||
	die "imports missing from $SYS_VERBS: $(echo $missing)"

mkdir -p "$OUT"
# copy, then rename: a program that has the old library mapped (a lab
# running perftest) keeps its inode instead of seeing it rewritten
if ! cmp -s "$BUILD/lib/$LIB" "$OUT/$LIB"; then
	cp "$BUILD/lib/$LIB" "$OUT/$LIB.tmp" && mv -f "$OUT/$LIB.tmp" "$OUT/$LIB"
fi
cmp -s "$ROOT/providers/metaroce/metaroce.driver" "$OUT/metaroce.driver" ||
	cp "$ROOT/providers/metaroce/metaroce.driver" "$OUT/metaroce.driver"
log "built $OUT/$LIB"
