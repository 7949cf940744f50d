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

# name=sim options: the smoke's runs (smoke.sh), scripts/sim.sh's mixes
# (keep in step) from their first seeds, and two more mixes with faults
# that draw at their start (dereg, qperr, stale)
runs=(
	smoke-all="--seed 1 --faults all"
	smoke-uc="--seed 1 --faults all --scenario uc"
	smoke-close="$SIM_SMOKE_CLOSE_ARGS"
	all="--seed 1000000 --faults all"
	none="--seed 1001000 --faults none"
	loss="--seed 1002000 --faults loss,burst"
	reorder="--seed 1003000 --faults reorder,dup"
	corrupt="--seed 1004000 --faults corrupt,loss,reorder"
	paths="--seed 1005000 --faults blackhole,flap,spike,reorder"
	rnr="--seed 1006000 --faults rnr,reorder,loss"
	errors="--seed 1007000 --faults dereg,qperr,access,reorder,loss"
	reset="--seed 1008000 --faults reset,stale,reorder,dup,loss"
	adversary="--seed 1009000 --faults spurious,dup,reorder,corrupt"
	engines="--seed 1010000 --faults loss,burst,reorder,dup,corrupt,rnr,reset,spurious,invread --scenario rc --requester engines"
	completer="--seed 1011000 --faults loss,reorder,dup,blackhole,flap,spike,rnr --scenario rc --requester core"
	badwqe="--seed 1012000 --faults badwqe2,invread,loss,reorder,dup --scenario rc --requester engines"
	pair="--seed 1013000 --faults loss,burst,reorder,dup,corrupt,rnr,reset,stale,badwqe2,invread --scenario rc --requester engines --pair"
	close="--seed 1014000 --faults close,reorder,dup,rnr,spike,reset --scenario rc --requester engines"
	rnr-access="--seed 1015000 --faults access,rnr,loss,reorder --scenario rc"
	rnr-dereg="--seed 1016000 --faults dereg,rnr,reorder,dup --scenario rc"
	rnr-badwqe="--seed 1017000 --faults badwqe,rnr,access,loss --scenario rc"
	rnr-vanish="--seed 1018000 --faults vanish,rnr,reorder,loss --scenario rc"
	rnr-qperr="--seed 1019000 --faults qperr,access,rnr,reorder --scenario rc"
	pair-errors="--seed 1020000 --faults access,dereg,qperr,rnr,reorder,loss --scenario rc --requester engines --pair"
	pair-vanish="--seed 1021000 --faults vanish,rnrx,reorder,dup --scenario rc --requester engines --pair"
	pair-reset="--seed 1022000 --faults reset,access,rnr,dereg,reorder --scenario rc --requester engines --pair"
	rnrx-errors="--seed 1023000 --faults rnrx,access,qperr,reorder,loss --scenario rc"
	engines-errors="--seed 1024000 --faults access,dereg,vanish,rnr,reorder,dup,stale --scenario rc --requester engines"
	completer-errors="--seed 1025000 --faults access,rnrx,loss,reorder,spurious --scenario rc --requester core"
	close-errors="--seed 1026000 --faults close,access,dereg,rnr,reorder --scenario rc --requester engines"
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
