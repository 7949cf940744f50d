#!/bin/bash
# Kernel coding-style check of metaroce's kernel-side C with the kernel's
# own checkpatch.pl (from .cache/linux-source, see scripts/setup.sh).
#
# Usage: scripts/checkpatch.sh [FILE...]
#   Default files: kernel/*.c kernel/*.h kernel/core/*.[ch] selftests/kmod/*.c
#   include/metaroce/*.h
# Prints every finding (terse), a per-file and a total summary, and exits
# non-zero if any ERROR was found. WARNINGs and CHECKs are listed but allowed.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${METAROCE_CACHE:-$ROOT/.cache}
CHECKPATCH=$CACHE/linux-source/scripts/checkpatch.pl

# Ignored message types, each for a reason:
#  FILE_PATH_CHANGES   "added, moved or deleted file(s), does MAINTAINERS
#                      need updating?" -- about patches to the kernel tree;
#                      meaningless for an out-of-tree module checked with -f.
#  LINUX_VERSION_CODE  an out-of-tree module built against several kernels
#                      must test the version (confined to kernel/compat.h).
IGNORE=FILE_PATH_CHANGES,LINUX_VERSION_CODE

if [ ! -f "$CHECKPATCH" ]; then
	echo "[checkpatch] error: $CHECKPATCH missing: run scripts/setup.sh" >&2
	exit 2
fi

cd "$ROOT" || exit 2
if [ $# -gt 0 ]; then
	files=("$@")
else
	shopt -s nullglob
	files=(kernel/*.c kernel/*.h kernel/core/*.c kernel/core/*.h
	       include/metaroce/*.h selftests/kmod/*.c)
	shopt -u nullglob
fi
if [ ${#files[@]} -eq 0 ]; then
	echo "[checkpatch] error: no files to check" >&2
	exit 2
fi

total_e=0 total_w=0 total_c=0 bad=0
summary=()
for f in "${files[@]}"; do
	out=$(perl "$CHECKPATCH" --no-tree --terse --show-types --no-summary \
		--ignore "$IGNORE" -f "$f" 2>&1)
	[ -n "$out" ] && printf '%s\n' "$out"
	e=$(grep -c ': ERROR:' <<<"$out")
	w=$(grep -c ': WARNING:' <<<"$out")
	c=$(grep -c ': CHECK:' <<<"$out")
	total_e=$((total_e + e)) total_w=$((total_w + w)) total_c=$((total_c + c))
	[ "$e" -gt 0 ] && bad=$((bad + 1))
	summary+=("$(printf '  %-40s %3d errors, %3d warnings' "$f" "$e" "$w")")
done

echo "checkpatch summary (ignored types: $IGNORE):"
printf '%s\n' "${summary[@]}"
echo "${#files[@]} files: $total_e errors, $total_w warnings, $total_c checks"
if [ "$total_e" -gt 0 ]; then
	echo "FAIL: $bad file(s) with errors"
	exit 1
fi
echo "OK (no errors)"
exit 0
