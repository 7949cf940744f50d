#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Long runs of the deterministic simulator (selftests/sim/, -O2 build
# without sanitizers): N seeds for each fault mix below, the mixes run two
# at a time. Any failure prints its seed and one-line replay command (the
# replay builds the ASan/UBSan binary). Ends with "N passed, N failed"
# over all runs and the total of simulated operations.
#
#   scripts/sim.sh --seeds N [--base S] [--jobs J] [extra sim options]
#
# e.g. scripts/sim.sh --seeds 1200   (about 10 million operations)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
seeds=1000 base=1000000 jobs=2
extra=()
while [ $# -gt 0 ]; do
	case $1 in
	--seeds) seeds=$2; shift 2 ;;
	--base) base=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	*) extra+=("$1"); shift ;;
	esac
done

# the fault mixes: SIM_MIXES, name=spec [more sim options]
# shellcheck source=selftests/sim/mixes.env
. "$ROOT/selftests/sim/mixes.env"
mixes=("${SIM_MIXES[@]}")

make -s -C "$ROOT/selftests/sim" fast || exit 1
bin=$ROOT/build/sim/sim-fast
out=$(mktemp -d /tmp/sim-long.XXXXXX)
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
i=0
for m in "${mixes[@]}"; do
	name=${m%%=*} spec=${m#*=}
	# each mix its own seed range, so that mixes do not repeat runs
	# shellcheck disable=SC2086 # spec carries options
	"$bin" --seeds "$seeds" --seed $((base + i * seeds)) --faults $spec \
		"${extra[@]}" >"$out/$name.log" 2>&1 &
	i=$((i + 1))
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
done
wait

pass=0 fail=0 ops=0
printf '%-16s %8s %8s %12s %10s\n' mix runs failed operations sim-s
for m in "${mixes[@]}"; do
	name=${m%%=*}
	log=$out/$name.log
	grep -A2 '^FAIL' "$log" | sed 's|selftests/sim/sim |selftests/sim/sim |'
	line=$(grep -E '^sim: ' "$log")
	p=$(grep -E '^[0-9]+ passed' "$log" | awk '{print $1}')
	f=$(grep -E '^[0-9]+ passed' "$log" | awk '{print $3}')
	o=$(sed -E 's/.* ([0-9]+) operations.*/\1/' <<<"$line")
	s=$(sed -E 's/.* ([0-9.]+) simulated s.*/\1/' <<<"$line")
	printf '%-16s %8s %8s %12s %10s\n' "$name" "$((p + f))" "$f" "$o" "$s"
	pass=$((pass + ${p:-0})) fail=$((fail + ${f:-1})) ops=$((ops + ${o:-0}))
done
echo "sim.sh: $ops operations in $(( $(date +%s) - start )) s"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
