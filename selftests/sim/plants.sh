#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Break it on purpose: apply each plant (selftests/sim/plants/*.patch, a
# defect reintroduced into kernel/core) to a temporary copy of the core,
# build the simulator against the copy and run the CI smoke on it (the
# runs of smoke.sh: "all", "uc", "close", "rnrhold", "rnrdep"; a plant
# whose first line says "(first: uc)", "(first: close)", "(first:
# rnrhold)" or "(first: rnrdep)" starts
# with that run, to save time).
# Every plant must be found (a failing seed); prints the seed, the replay
# line and the time it took. The real tree is never modified.
#
#   selftests/sim/plants.sh [--core DIR] [--seeds N] [PLANT...]
#
# --core: the kernel/core to plant into (default: this tree's).
# Ends with "N passed, N failed" (passed = plant found).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=selftests/sim/smoke.env
. "$here/smoke.env"
core=$root/kernel/core
seeds=$SIM_SMOKE_SEEDS
while [ $# -gt 0 ]; do
	case $1 in
	--core) core=$(cd "$2" && pwd); shift 2 ;;
	--seeds) seeds=$2; shift 2 ;;
	*) break ;;
	esac
done
plants=("$@")
[ ${#plants[@]} -gt 0 ] || plants=("$here"/plants/*.patch)

pass=0 fail=0 skip=0
tmp=$(mktemp -d /tmp/sim-plants.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# the simulator's own objects, from the unplanted core's headers
mkdir -p "$tmp/simobj"
for f in "$here"/*.c; do
	o=$(basename "$f" .c)
	echo "$tmp/simobj/$o.o"
done | xargs make -s -C "$here" CORE="$core" SIMOBJ="$tmp/simobj" -j2 ||
	exit 1
for p in "${plants[@]}"; do
	name=$(basename "$p" .patch)
	w=$tmp/$name
	mkdir -p "$w/kernel"
	cp -r "$core" "$w/kernel/core"
	target=$(sed -n 's|^+++ b/||p' "$p" | head -1)
	need=$(sed -n 's|.*(needs: \([^)]*\)).*|\1|p' "$p" | head -1)
	for f in $target $need; do
		[ -f "$w/$f" ] || break
	done
	if [ ! -f "$w/$f" ]; then
		echo "plant $name: skipped ($f not in this core)"
		skip=$((skip + 1))
		continue
	fi
	if ! patch -s -d "$w" -p1 <"$p"; then
		echo "plant $name: FAILED to apply"
		fail=$((fail + 1))
		continue
	fi
	# the simulator's objects are shared unless the plant changes a header
	obj=("SIMOBJ=$tmp/simobj")
	! grep -q '^+++ b/.*\.h' "$p" || obj=()
	if ! make -s -C "$here" CORE="$w/kernel/core" OUT="$w/build" \
		"${obj[@]}" >"$w/build.log" 2>&1; then
		echo "plant $name: FAILED to build"; cat "$w/build.log"
		fail=$((fail + 1))
		continue
	fi
	start=$(date +%s.%N)
	# the smoke's runs in turn (smoke.sh): "all", "uc", "close",
	# "rnrhold", "rnrdep"; the one a plant names with "(first: ...)"
	# first
	runs=("--seeds $seeds"
	      "--seeds ${SIM_SMOKE_UC_SEEDS:-300} --scenario uc"
	      "--seeds ${SIM_SMOKE_CLOSE_SEEDS:-60} $SIM_SMOKE_CLOSE_ARGS"
	      "--seeds ${SIM_SMOKE_RNRHOLD_SEEDS:-200} $SIM_SMOKE_RNRHOLD_ARGS"
	      "--seeds ${SIM_SMOKE_RNRDEP_SEEDS:-200} $SIM_SMOKE_RNRDEP_ARGS")
	first=
	case $(sed -n 's|.*(first: \([a-z]*\)).*|\1|p' "$p" | head -1) in
	uc) first=1 ;;
	close) first=2 ;;
	rnrhold) first=3 ;;
	rnrdep) first=4 ;;
	esac
	if [ -n "$first" ]; then
		runs=("${runs[$first]}" "${runs[@]:0:$first}" \
		      "${runs[@]:$((first + 1))}")
	fi
	rc=0
	for args in "${runs[@]}"; do
		# shellcheck disable=SC2086
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$w/build/sim" $args --first-fail >"$w/run.log" 2>&1
		rc=$?
		[ $rc -eq 0 ] || break
	done
	t=$(echo "$(date +%s.%N) - $start" | bc)
	if [ $rc -ne 0 ] && grep -q '^FAIL seed' "$w/run.log"; then
		printf 'plant %s: found in %.2f s, %s\n' "$name" "$t" \
			"$(grep -m1 '^FAIL seed' "$w/run.log" | cut -d: -f1)"
		grep -m1 '^  t=' "$w/run.log"
		grep -m1 '^  replay:' "$w/run.log"
		echo "  replay: selftests/sim/plants.sh ${p#"$root"/} (then the seed's replay line)"
		pass=$((pass + 1))
	else
		printf 'plant %s: NOT FOUND in %s seeds (%.1f s)\n' "$name" "$seeds" "$t"
		tail -3 "$w/run.log"
		fail=$((fail + 1))
	fi
done
[ $skip -eq 0 ] || echo "($skip plants skipped: their file is not in this core yet)"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
