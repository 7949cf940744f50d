#!/bin/bash
# Run the metaroce transport core's KUnit suites on UML (ARCH=um).
#
# Debian's kernel has no CONFIG_KUNIT, so the suites run in a User-Mode
# Linux kernel built from the unpacked linux-source-6.1 in
# .cache/linux-source (fetched by scripts/setup.sh). The out-of-tree code
# is glued into that throwaway tree as drivers/metaroce_kunit/ (Kconfig and
# Makefile from selftests/kunit/, plus copies of the sources refreshed on
# every run), so edits in the repository are picked up on every rerun.
# Failure messages name drivers/metaroce_kunit/{core,tests}/FILE: that is
# kernel/core/FILE and selftests/core/FILE here. That tree is shared by
# every worktree: a run holds .cache/.linux-source-kunit.lock from syncing
# its sources until kunit.py exits, and a second run (any worktree) waits
# for it, saying so (selftests/kunit/lock-test.sh checks this).
#
# Usage: scripts/kunit.sh [kunit.py run options] [suite filter glob]
#   e.g. scripts/kunit.sh 'metaroce_core_seq*'     scripts/kunit.sh --raw_output
# Environment:
#   METAROCE_KUNIT_CORE_DIR   core sources   (default: kernel/core)
#   METAROCE_KUNIT_TEST_DIR   test sources   (default: selftests/core)
#   METAROCE_KUNIT_INC_DIR    include dir    (default: include)
#   METAROCE_KUNIT_BUILD_DIR  UML build dir  (default: build/kunit)
#   METAROCE_KUNIT_JOBS       make jobs      (default: 2)
# The first build takes ~3 min on 2 cores; reruns take seconds.
# Exits non-zero on any failed/crashed test, on build errors, or if no
# test ran. The last line is always "N passed, N failed".
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${METAROCE_CACHE:-$ROOT/.cache}
LSRC=$CACHE/linux-source
CORE_DIR=${METAROCE_KUNIT_CORE_DIR:-$ROOT/kernel/core}
TEST_DIR=${METAROCE_KUNIT_TEST_DIR:-$ROOT/selftests/core}
INC_DIR=${METAROCE_KUNIT_INC_DIR:-$ROOT/include}
BUILD_DIR=${METAROCE_KUNIT_BUILD_DIR:-$ROOT/build/kunit}
JOBS=${METAROCE_KUNIT_JOBS:-2}
GLUE_SRC=$ROOT/selftests/kunit
GLUE=$LSRC/drivers/metaroce_kunit

log() { printf '[kunit] %s\n' "$*"; }
die() {
	printf '[kunit] error: %s\n' "$*" >&2
	echo "0 passed, 0 failed"
	exit 2
}

if [ ! -f "$LSRC/Makefile" ] || [ ! -x "$LSRC/tools/testing/kunit/kunit.py" ]; then
	die "no linux-source tree at $LSRC: run scripts/setup.sh first"
fi
for t in flex bison bc make gcc python3; do
	command -v "$t" >/dev/null || die "'$t' not found: run scripts/setup.sh"
done
for f in kunitconfig Kconfig Makefile; do
	[ -f "$GLUE_SRC/$f" ] || die "missing $GLUE_SRC/$f"
done
for d in "$CORE_DIR" "$TEST_DIR" "$INC_DIR"; do
	[ -d "$d" ] || die "no directory $d"
done
CORE_DIR=$(cd "$CORE_DIR" && pwd)
TEST_DIR=$(cd "$TEST_DIR" && pwd)
INC_DIR=$(cd "$INC_DIR" && pwd)
compgen -G "$CORE_DIR/*.c" >/dev/null || die "no core sources in $CORE_DIR"
compgen -G "$TEST_DIR/*_kunit.c" >/dev/null ||
	die "no *_kunit.c suite file in $TEST_DIR"

# One run at a time per build directory (fd 9), and one run at a time over
# the kernel source (fd 8): $LSRC is shared by every worktree (.cache is a
# symlink to the main one), and its glue directory holds the sources of
# whichever run synced last, so a second run syncing its own sources while
# the first builds would have the first build the second's. The source
# lock is held from the sync until kunit.py has exited (the build reads
# the glue) and names its holder. Always in this order (build dir, then
# source), so two runs cannot wait for each other. Not
# /tmp/metaroce-kunit.lock: callers may hold that one around this script.
mkdir -p "$BUILD_DIR"
exec 9>"$BUILD_DIR/.metaroce-kunit.lock"
if ! flock -n 9; then
	log "another kunit.sh run holds $BUILD_DIR; waiting"
	flock 9
fi
SRC_LOCK=$CACHE/.linux-source-kunit.lock
exec 8<>"$SRC_LOCK" || die "cannot open $SRC_LOCK"
if ! flock -n 8; then
	waited=$(date +%s)
	log "another kunit.sh run is using the shared kernel source $LSRC" \
		"($(head -c 300 "$SRC_LOCK" 2>/dev/null || echo unknown)); waiting"
	flock 8
	log "shared kernel source free after $(($(date +%s) - waited)) s"
fi
printf 'pid %d from %s since %s\n' $$ "$ROOT" "$(date -u +%H:%M:%SZ)" \
	>"$SRC_LOCK"

# --- glue into the throwaway kernel tree (idempotent) ---------------------
mkdir -p "$GLUE"
# Copy only when changed, so the Makefile's timestamp stays put on reruns.
for f in Kconfig Makefile; do
	cmp -s "$GLUE_SRC/$f" "$GLUE/$f" || cp "$GLUE_SRC/$f" "$GLUE/$f"
done
# Mirror the sources (only *.c and *.h) into the glue directory: copy a file
# only when it differs, so make rebuilds exactly what changed, and drop
# files that went away. Symlinks would not do: kernel/core also holds the
# module build's own *.o, which make's VPATH search into the source tree
# could pick up instead of building UML objects.
sync_dir() {
	local src=$1 dst=$2 depth=$3 rel
	[ -L "$dst" ] && rm -f "$dst"
	mkdir -p "$dst"
	while IFS= read -r -d '' rel; do
		cmp -s "$src/$rel" "$dst/$rel" && continue
		mkdir -p "$(dirname "$dst/$rel")"
		cp "$src/$rel" "$dst/$rel"
	done < <(cd "$src" && find . -maxdepth "$depth" -type f \
			\( -name '*.c' -o -name '*.h' \) -print0)
	while IFS= read -r -d '' rel; do
		[ -f "$src/$rel" ] || rm -f "$dst/$rel"
	done < <(cd "$dst" && find . -type f -print0)
}
sync_dir "$CORE_DIR" "$GLUE/core" 1
sync_dir "$TEST_DIR" "$GLUE/tests" 1
sync_dir "$INC_DIR" "$GLUE/include" 8
grep -q '^source "drivers/metaroce_kunit/Kconfig"' "$LSRC/drivers/Kconfig" ||
	printf '\nsource "drivers/metaroce_kunit/Kconfig"\n' >>"$LSRC/drivers/Kconfig"
# shellcheck disable=SC2016 # a literal make variable
grep -q 'metaroce_kunit/' "$LSRC/drivers/Makefile" ||
	printf 'obj-$(CONFIG_METAROCE_CORE_KUNIT_TEST)\t+= metaroce_kunit/\n' \
		>>"$LSRC/drivers/Makefile"

# --- build and run ---------------------------------------------------------
JSON=$BUILD_DIR/metaroce-results.json
LOG=$BUILD_DIR/metaroce-kunit.log
rm -f "$JSON"
log "UML build dir $BUILD_DIR (core: $CORE_DIR, tests: $TEST_DIR)"
# Known-benign noise: kunit.py's "stty sane" without a tty, and binutils
# 2.40's executable-stack/RWX notes on every UML vmlinux link.
NOISE="^stty: 'standard input'|^/usr/bin/ld: (warning: .*(GNU-stack|RWX)|NOTE: This behaviour)"
start=$(date +%s)
(cd "$LSRC" && python3 tools/testing/kunit/kunit.py run --arch=um \
	--build_dir "$BUILD_DIR" --kunitconfig "$GLUE_SRC/kunitconfig" \
	--jobs "$JOBS" --json="$JSON" "$@") 2>&1 |
	grep --line-buffered -v -E "$NOISE" | tee "$LOG"
rc=${PIPESTATUS[0]}
log "kunit.py exited $rc after $(($(date +%s) - start)) s"
exec 8>&-	# the shared source is free for the next run

# --- summary from the parsed results ----------------------------------------
counts=""
if [ -s "$JSON" ]; then
	counts=$(python3 - "$JSON" <<'PY'
import json, sys

passed = failed = skipped = 0
def walk(g):
    global passed, failed, skipped
    for c in g.get("test_cases", []):
        s = c.get("status")
        if s == "PASS":
            passed += 1
        elif s == "SKIP":
            skipped += 1
        else:                   # FAIL, ERROR (crashed)
            failed += 1
    for sg in g.get("sub_groups", []):
        walk(sg)
walk(json.load(open(sys.argv[1])))
print(passed, failed, skipped)
PY
)
fi
if [ -z "$counts" ]; then
	log "no parsed results (build or boot failure?); see $LOG"
	[ -f "$BUILD_DIR/test.log" ] && log "raw kernel output: $BUILD_DIR/test.log"
	echo "0 passed, 0 failed"
	exit 1
fi
read -r passed failed skipped <<<"$counts"
status=0
if [ "$rc" -ne 0 ]; then
	log "kunit.py reported failure (exit $rc)"
	status=1
	# A crash/timeout may leave no failed test case behind: count it.
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ] && failed=1
fi
if [ $((passed + failed)) -eq 0 ]; then
	log "no test ran (filter too narrow, or suites not registered?)"
	status=1
fi
[ "$failed" -ne 0 ] && status=1
[ "$skipped" -ne 0 ] && log "$skipped test(s) skipped"
echo "$passed passed, $failed failed"
exit $status
