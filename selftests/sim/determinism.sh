#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A seed must replay the same run in every build of the simulator: a
# failure found by scripts/sim.sh (-O2, no sanitizers) is replayed with
# the ASan/UBSan binary, and the seeds the plants are "found at"
# (smoke.sh) were found by CI's build. This builds the simulator several
# ways -- CI's (make -C selftests/sim: cc -O1, ASan/UBSan), -O2 without
# sanitizers (make fast, scripts/sim.sh's), and with clang -O2 if clang
# is installed -- runs each over the same seeds of every fault mix and
# scenario (scripts/sim.sh's mixes, smoke.sh's "all", "uc" and "close")
# with --digest, and compares the runs' trace digests (every draw, event
# and packet, sim_digest()) with CI's build. A mismatch is a run the
# builds played differently: usually C's unspecified evaluation order of
# two random draws in one expression (f(rnd(), rnd()), rnd() - rnd()).
#
#   selftests/sim/determinism.sh [--seeds N] [--builds "ci fast clang"]
#
# --seeds: seeds per mix (default 12). Prints each mismatching seed with
# both digests and its replay line; ends with "N passed, N failed" over
# the runs compared (a run = one seed of one mix in one non-CI build).
set -uo pipefail
shopt -s extglob

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=selftests/sim/smoke.env
. "$here/smoke.env"
seeds=12
builds="ci fast"
command -v clang >/dev/null && builds="$builds clang"
while [ $# -gt 0 ]; do
	case $1 in
	--seeds) seeds=$2; shift 2 ;;
	--builds) builds=$2; shift 2 ;;
	*) echo "usage: $0 [--seeds N] [--builds \"ci fast clang\"]" >&2
	   exit 2 ;;
	esac
done
# every build is compared with CI's
[[ " $builds " == *" ci "* ]] || builds="ci $builds"

# name=sim options: the smoke's runs (smoke.sh), the mixes of scripts/sim.sh
# (mixes.env) from their first seeds, and two more mixes with faults that
# draw at their start (dereg, qperr, stale)
# shellcheck source=selftests/sim/mixes.env
. "$here/mixes.env"
runs=(
	smoke-all="--seed 1 --faults all"
	smoke-uc="--seed 1 --faults all --scenario uc"
	smoke-close="$SIM_SMOKE_CLOSE_ARGS"
)
for i in "${!SIM_MIXES[@]}"; do
	m=${SIM_MIXES[$i]}
	runs+=("${m%%=*}=--seed $((1000000 + i * 1000)) --faults ${m#*=}")
done
runs+=(
	dereg="--seed 1 --faults loss,reorder,dup,dereg"
	qperr="--seed 1 --faults qperr,reset,stale,reorder,dup,loss --scenario rc"
)

out=$(mktemp -d /tmp/sim-determinism.XXXXXX)
trap 'rm -rf "$out"' EXIT
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# build NAME: the binary's path on stdout
build() {
	case $1 in
	ci)	make -s -C "$here" >&2 && echo "$root/build/sim/sim" ;;
	fast)	make -s -C "$here" fast >&2 &&
		echo "$root/build/sim/sim-fast" ;;
	clang)	make -s -C "$here" fast CC=clang OUT="$root/build/sim-clang" >&2 &&
		echo "$root/build/sim-clang/sim-fast" ;;
	*)	echo "unknown build $1" >&2; return 1 ;;
	esac
}

pass=0 fail=0
declare -A bin
# every build first: none mixes an edit of the tree made while it runs
for b in $builds; do
	bin[$b]=$(build "$b") || { echo "determinism: 0 passed, 1 failed (build $b failed)"; exit 1; }
done
for b in $builds; do
	for r in "${runs[@]}"; do
		name=${r%%=*} args=${r#*=}
		# shellcheck disable=SC2086 # args carries options
		"${bin[$b]}" $args --seeds "$seeds" --digest --quiet 2>&1 |
			grep '^digest seed' >"$out/$b.$name"
	done
done
for b in $builds; do
	[ "$b" != ci ] || continue
	for r in "${runs[@]}"; do
		name=${r%%=*} args=${r#*=}
		n=$(wc -l <"$out/ci.$name")
		if [ "$n" -ne "$seeds" ] || [ "$(wc -l <"$out/$b.$name")" -ne "$seeds" ]; then
			echo "determinism: $name: ci ran $n seeds, $b $(wc -l <"$out/$b.$name") of $seeds"
			fail=$((fail + seeds))
			continue
		fi
		bad=$(paste -d'|' "$out/ci.$name" "$out/$b.$name" |
		      awk -F'|' '$1 != $2')
		k=0
		[ -z "$bad" ] || k=$(wc -l <<<"$bad")
		pass=$((pass + seeds - k)) fail=$((fail + k))
		[ "$k" -gt 0 ] || continue
		echo "determinism: $name: $k of $seeds seeds differ between ci and $b, e.g.:"
		head -3 <<<"$bad" | while IFS='|' read -r x y; do
			s=$(awk '{print $3}' <<<"$x")
			echo "  ci:   $x"
			echo "  $b: ${y#digest seed "$s" }"
			echo "  replay: selftests/sim/sim ${args/--seed +([0-9])/--seed ${s%:}} -v --digest"
		done
	done
done
echo "determinism: $pass passed, $fail failed ($builds, $seeds seeds x ${#runs[@]} runs)"
[ "$fail" -eq 0 ]
