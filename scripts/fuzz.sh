#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build and run the libFuzzer target of the metaroce transport core
# (selftests/fuzz/fuzz_rx: packet parser, receiver SACK window, sender
# scoreboard) for a while.
#
# Usage: scripts/fuzz.sh [SECONDS]        default 600; `scripts/fuzz.sh 60`
# Environment:
#   FUZZ_OUT     working directory (default build/fuzz): the corpus grows
#                in FUZZ_OUT/corpus across runs, seeds are regenerated in
#                FUZZ_OUT/seeds, crash artifacts land in FUZZ_OUT/crash-*
#   FUZZ_NICE    nice level of the fuzzer (default 10; the machine is shared)
#   FUZZ_JOBS    parallel fuzzing processes (default 1)
#
# Exits non-zero when the build fails, when the fuzzer finds a crash (the
# artifact path is printed) or when it did not run. The last line is
# always "fuzz: N execs in S s, corpus C, crashes K".
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${1:-600}
OUT=${FUZZ_OUT:-$ROOT/build/fuzz}
NICE=${FUZZ_NICE:-10}
JOBS=${FUZZ_JOBS:-1}

case $SECS in
''|*[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac

summary() {
	echo "fuzz: ${1:-0} execs in ${SECS} s, corpus ${2:-0}, crashes ${3:-0}"
}

if ! make -s -C "$ROOT/selftests/fuzz" OUT="$OUT" all; then
	echo "fuzz: build failed" >&2
	summary 0 0 0
	exit 1
fi

mkdir -p "$OUT/corpus"

# Extra seeds: the hostile packets of selftests/tools/mrc_forge.py (the
# lab's packet forger) in the fuzzer's record format, split into inputs
# of at most 8 KiB. Regenerated on every run; skipped without python3.
FORGE=$ROOT/selftests/tools/mrc_forge.py
rm -rf "$OUT/seeds-forge"
if command -v python3 >/dev/null && [ -f "$FORGE" ]; then
	mkdir -p "$OUT/seeds-forge"
	printf '%s\n' 'nqp 2' 'qpn.0 17' 'qpn.1 18' 'rkey 4660' \
		'va 140737488355328' 'mrlen 1048576' >"$OUT/seeds-forge/.info"
	printf '%s\n' 'psn.0 4294967000' 'psn.1 100' >"$OUT/seeds-forge/.peer"
	for c in samples trunc version opcode flags path qpn icrc lengths \
		write_rkey write_wrap write_bounds read_2g atomic send_junk ack \
		ack_npaths255 unsolicited ud dup random; do
		python3 "$FORGE" "$c" --info "$OUT/seeds-forge/.info" \
			--peer-info "$OUT/seeds-forge/.peer" --qp 1 --count 300 \
			--out "$OUT/seeds-forge/.$c" >/dev/null 2>&1 || continue
		python3 - "$OUT/seeds-forge/.$c" "$OUT/seeds-forge/$c" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
out, i, n, cur = sys.argv[2], 0, 0, b""
while i + 2 <= len(data):
    ln = data[i] << 8 | data[i + 1]
    rec = data[i:i + 2 + ln]
    i += 2 + ln
    if cur and len(cur) + len(rec) > 8192:
        open("%s-%04d" % (out, n), "wb").write(cur)
        n, cur = n + 1, b""
    cur += rec
if cur:
    open("%s-%04d" % (out, n), "wb").write(cur)
PY
	done
	rm -f "$OUT"/seeds-forge/.??*
fi
# Crash artifacts of an earlier run would be counted again: move them away.
shopt -s nullglob
old=("$OUT"/crash-* "$OUT"/leak-* "$OUT"/timeout-* "$OUT"/oom-*)
if [ ${#old[@]} -gt 0 ]; then
	mkdir -p "$OUT/old-artifacts"
	mv "${old[@]}" "$OUT/old-artifacts/"
fi

FORGE_SEEDS=
[ -d "$OUT/seeds-forge" ] && FORGE_SEEDS=1
LOG=$OUT/fuzz-$(date +%Y%m%d-%H%M%S).log
echo "fuzz: running $OUT/fuzz_rx for $SECS s (log $LOG)"
extra=()
[ "$JOBS" -gt 1 ] && extra=(-fork="$JOBS")
(cd "$OUT" && nice -n "$NICE" ./fuzz_rx -max_total_time="$SECS" \
	-max_len=8192 -print_final_stats=1 -artifact_prefix="$OUT/" \
	"${extra[@]}" corpus seeds ${FORGE_SEEDS:+seeds-forge}) >"$LOG" 2>&1
rc=$?

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG" | tail -1)
if [ -z "$execs" ]; then
	# -fork mode prints no final stats; take the last status line
	execs=$(grep -o 'exec/s\|#[0-9]*' "$LOG" | grep '^#' | tail -1 |
		tr -d '#')
fi
corpus=$(find "$OUT/corpus" -type f | wc -l)
crashes=("$OUT"/crash-* "$OUT"/leak-* "$OUT"/timeout-* "$OUT"/oom-*)
tail -n 8 "$LOG"
for c in "${crashes[@]}"; do
	echo "fuzz: ARTIFACT $c (reproduce: $OUT/fuzz_rx $c)"
done
summary "${execs:-0}" "$corpus" "${#crashes[@]}"
if [ $rc -ne 0 ] || [ ${#crashes[@]} -ne 0 ] || [ -z "$execs" ]; then
	exit 1
fi
exit 0
