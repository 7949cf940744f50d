#!/bin/bash
# Run every metaroce test, from a fresh Debian 12 machine:
#   setup -> build -> unit (ASan/UBSan) -> sim (simulator smoke + plants)
#   -> determinism (3 seeds per mix: every simulator build replays alike) -> wire (dissector) -> provider -> fuzz (60 s smoke)
#   -> kunit (UML) -> checkpatch -> debug-checker (the debug layer's report
#   checker and guest probe, on fake logs: seconds, no debug kernel)
#   -> lab (two qemu nodes)
# `scripts/test.sh unit kunit` runs only the named layers (setup and build
# always run first, they are incremental). Lab scenarios that carry a
# "# lab: long" line (measurements under impairments, hostile traffic:
# minutes each under emulation) run only in the `lab-long` layer:
# `scripts/test.sh lab-long`. `scripts/test.sh kernel612` builds the module
# for Debian's 6.12 kernel and runs foundation + quick datapath on it
# (not in the default set: ~4 min, ~8 the first time, which downloads it).
# Ends with one line
# "N passed, N failed" over all test cases, and exits non-zero on any failure.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
LOGS=$ROOT/build/test-logs
mkdir -p "$LOGS"

ALL_LAYERS=(unit sim determinism wire provider fuzz kunit checkpatch debug-checker lab)
layers=("$@")
[ ${#layers[@]} -gt 0 ] || layers=("${ALL_LAYERS[@]}")

total_pass=0
total_fail=0
failed_layers=()

banner() { printf '\n=== %s ===\n' "$*"; }

# run_layer NAME CMD...: runs CMD, logs it, and adds the last
# "N passed, N failed" line it printed to the totals. A layer that fails
# without such a line counts as one failure; one that passes without it
# counts as one pass.
run_layer() {
	local name=$1; shift
	local log=$LOGS/$name.log start rc line p f
	banner "$name"
	start=$(date +%s)
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	if [ -n "$line" ]; then
		p=$(sed -E 's/^([A-Za-z]+: )?([0-9]+) passed.*/\2/' <<<"$line")
		f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	elif [ "$rc" -eq 0 ]; then
		p=1 f=0
	else
		p=0 f=1
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	[ "$rc" -eq 0 ] && [ "$f" -eq 0 ] || failed_layers+=("$name")
	printf -- '--- %s: rc=%d, %d passed, %d failed, %ds (log: %s)\n' \
		"$name" "$rc" "$p" "$f" $(( $(date +%s) - start )) "${log#"$ROOT"/}"
}

# lab_all short|long: the scenarios without / with a "# lab: long" line
# (one with a "# lab: part of NAME.sh" line runs inside NAME.sh only).
# Each scenario's wall time is printed after it and, with every other,
# at the end ("lab times: ..."), to keep CI's budget in view.
lab_all() {
	local s rc=0 r long t0 times=()
	for s in selftests/lab/*.sh; do
		long=short
		grep -q '^# lab: long' "$s" && long=long
		grep -q '^# lab: part of' "$s" && continue	# run by the scenario it names
		[ "$long" = "$1" ] || continue
		banner "lab: $s"
		t0=$(date +%s)
		r=0
		bash "$s" || r=1	# every scenario, executable bit or not
		[ $r -eq 0 ] || rc=1
		times+=("$(basename "$s" .sh)=$(( $(date +%s) - t0 ))s")
		printf -- '--- lab: %s: rc=%d, %ds\n' "$s" "$r" $(( $(date +%s) - t0 ))
	done
	echo "lab times: ${times[*]}"
	return $rc
}

# Sums the per-scenario summary lines of the lab layer into one.
lab_layer() {
	local log=$LOGS/lab-scenarios-$1.log rc p f
	lab_all "$1" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	p=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | awk '{s+=$1} END {print s+0}')
	f=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | awk '{s+=$3} END {print s+0}')
	echo "lab: $p passed, $f failed"
	return $rc
}

# kernel_layer SERIES: the module on a second Debian kernel series (6.12):
# fetch it (setup.sh --kernel SERIES: headers installed, image unpacked;
# ~4 min the first time), build metaroce.ko for it in build/module-SERIES
# (the tree's 6.1 build is left alone), boot it in the lab and run the
# foundation scenario and the quick (clean) data path on it (~4 min).
kernel_layer() {
	local series=$1 kver out log=$LOGS/kernel-$1-scenarios.log rc p f
	scripts/setup.sh --kernel "$series" || return 1
	kver=$(cat ".cache/kver-$series")
	out=build/module-$series
	if ! make -j2 KVER="$kver" MODOUT="$out" module; then
		echo "kernel: 0 passed, 1 failed (build for $kver)"
		return 1
	fi
	(
		export LAB_KVER=$kver LAB_MODULE=$ROOT/$out/metaroce.ko
		rc=0
		selftests/lab/foundation.sh || rc=1
		DP_QUICK=1 selftests/lab/datapath.sh || rc=1
		exit $rc
	) 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	p=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | awk '{s+=$1} END {print s+0}')
	f=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | awk '{s+=$3} END {print s+0}')
	echo "kernel: $p passed, $f failed"
	return $rc
}

# debug_layer: the lab on the debug kernel (scripts/debug-kernel.sh: 6.1
# with KASAN, lockdep, DEBUG_OBJECTS, kmemleak, failslab; built and cached
# under .cache the first time, about an hour), metaroce.ko built for it in
# build/module-debug: every scenario of the lab layer (no "# lab: long"
# line: ordering, teardown and failslab included), 3-10x slower than on
# the stock kernel (KASAN + lockdep under TCG: ~2 h). Scenarios with time
# limits scale them when LAB_KVER is the debug kernel (their headers say
# how). Any KASAN/lockdep/ODEBUG/kmemleak report fails the scenario
# (lab.sh's LAB_DMESG_BAD; lab_stop scans for leaks). DEBUG_SCENARIOS
# overrides the list (names under selftests/lab/, e.g. "foundation
# datapath verbs failslab"; DP_QUICK=1 in the environment shortens
# datapath).
# debug_checker KVER: the debug layer's own check that a kernel report fails a
# run (also a layer of its own, debug-checker, in the default set: it needs
# no debug kernel, only its name): lab.sh's checker (lab_dmesg_bad) must flag a kmemleak report (as
# the debug kernel printed it in a lab run with a deliberately leaking
# module), a lockdep report and a scan that could not run, and pass a
# clean log; the debug kernel's guest command must print
# "kmemleak: no scan" where kmemleak is absent (it is on this host); and
# lab_start's probe that the booted guest is a debug kernel must pass a
# (fake) guest with KASAN, PROVE_LOCKING, kmemleak, failslab and
# DEBUG_OBJECTS, fail one without any one of them (or with lockdep off),
# and fail on this host.
debug_checker() {
	(
		LAB_KVER=$1 . scripts/lab/lab.sh
		t=$(mktemp -d)
		trap 'rm -rf "$t"' EXIT
		p=0 f=0
		expect() {	# WANT(bad|clean) DESC FILE
			local got=clean
			lab_dmesg_bad "$3" >/dev/null && got=bad
			if [ "$got" = "$1" ]; then
				echo "ok    $2"; p=$((p + 1))
			else
				echo "FAIL  $2 (checker says $got)"; f=$((f + 1))
			fi
		}
		printf '%s\n' '[    0.000000] Linux version 6.1.192-debug' \
			'[    0.512000] kmemleak: Kernel memory leak detector initialized (mem pool available: 15727)' \
			'[   12.100000] metaroce: loaded (udp port 19791)' >"$t/clean"
		expect clean "a clean log with kmemleak's boot line passes" "$t/clean"
		cat "$t/clean" - >"$t/leak" <<-'LEAK'
		unreferenced object 0xffff8880061fc000 (size 4096):
		  comm "insmod", pid 134, jiffies 4294908062
		  hex dump (first 32 bytes):
		    5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a  ZZZZZZZZZZZZZZZZ
		    5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a  ZZZZZZZZZZZZZZZZ
		  backtrace:
		    [<0000000097a802d6>] __kmem_cache_alloc_node+0x1fc/0x300
		    [<000000003b659f12>] kmalloc_trace+0x2a/0xd0
		    [<00000000591e3900>] 0xffffffffc071f045
		    [<0000000080dd7d10>] do_one_initcall+0xed/0x400
		LEAK
		expect bad "a kmemleak report fails" "$t/leak"
		{ cat "$t/clean"; echo '[  939.524017] WARNING: possible circular locking dependency detected'; } >"$t/lockdep"
		expect bad "a lockdep report fails" "$t/lockdep"
		bash -c "$LAB_DMESG_CMD" 2>/dev/null | grep 'kmemleak: no scan' >"$t/noscan"
		expect bad "no kmemleak to scan: the guest command says so, and it fails" "$t/noscan"
		# lab_start's probe that the booted kernel is a debug one, on
		# fake /proc, /sys/kernel/debug and dmesg trees (MRC_PROBE_ROOT)
		probe() {	# WANT(pass|fail) DESC ROOT [MISSING-WORD]
			local out got=pass
			out=$(MRC_PROBE_ROOT=$3 bash -c "$LAB_DEBUG_PROBE" 2>&1) || got=fail
			if [ "$got" = "$1" ] && { [ -z "${4:-}" ] || [[ $out == *"missing"*" $4"* ]]; }; then
				echo "ok    $2"; p=$((p + 1))
			else
				echo "FAIL  $2 (probe: $got: $out)"; f=$((f + 1))
			fi
		}
		if [ "$LAB_DEBUG_EXPECT" = 1 ]; then
			echo "ok    LAB_KVER=$1: lab_start probes the guests (LAB_DEBUG_EXPECT=1)"; p=$((p + 1))
		else
			echo "FAIL  LAB_KVER=$1: lab_start would not probe the guests (LAB_DEBUG_EXPECT=$LAB_DEBUG_EXPECT)"; f=$((f + 1))
		fi
		full() {	# DIR: every feature present
			mkdir -p "$1/proc" "$1/sys/kernel/debug/failslab" "$1/sys/kernel/debug/debug_objects"
			{ echo '[    0.000000] kasan: KernelAddressSanitizer initialized'; cat "$t/clean"; } >"$1/dmesg"
			: >"$1/proc/lockdep_chains"
			printf ' debug_locks:                   %11u\n' 1 >"$1/proc/lockdep_stats"
			: >"$1/sys/kernel/debug/kmemleak"
		}
		full "$t/ok"
		probe pass "a guest with every debug feature passes the probe" "$t/ok"
		for x in KASAN PROVE_LOCKING lockdep-on KMEMLEAK kmemleak-line FAILSLAB DEBUG_OBJECTS; do
			rm -rf "$t/no"
			full "$t/no"
			w=$x
			case $x in
			KASAN) sed -i '/KernelAddressSanitizer/d' "$t/no/dmesg" ;;
			PROVE_LOCKING) rm "$t/no/proc/lockdep_chains" ;;
			lockdep-on) printf ' debug_locks:                   %11u\n' 0 >"$t/no/proc/lockdep_stats" ;;
			KMEMLEAK) rm "$t/no/sys/kernel/debug/kmemleak" ;;
			kmemleak-line) sed -i '/kmemleak/d' "$t/no/dmesg"; w=KMEMLEAK ;;
			FAILSLAB) rmdir "$t/no/sys/kernel/debug/failslab" ;;
			DEBUG_OBJECTS) rmdir "$t/no/sys/kernel/debug/debug_objects" ;;
			esac
			probe fail "a guest without $x fails the probe, naming it" "$t/no" "$w"
		done
		probe fail "this host (no debug kernel) fails the probe" ""
		echo "$p passed, $f failed"
		[ "$f" -eq 0 ]
	)
}

debug_layer() {
	local kver log=$LOGS/debug-scenarios.log rc p f
	kver=$(scripts/debug-kernel.sh | tail -n 1)
	if [ -z "$kver" ] || [ ! -f build/module-debug/metaroce.ko ]; then
		echo "debug: 0 passed, 1 failed (debug kernel or module build)"
		return 1
	fi
	(
		export LAB_KVER=$kver LAB_MODULE=$ROOT/build/module-debug/metaroce.ko
		# KASAN + lockdep under TCG: boots and commands take ~2x longer
		export LAB_BOOT_TIMEOUT=${LAB_BOOT_TIMEOUT:-360}
		rc=0
		banner "debug: checker"
		debug_checker "$kver" || rc=1
		list=${DEBUG_SCENARIOS:-}
		if [ -z "$list" ]; then
			for s in selftests/lab/*.sh; do
				grep -q '^# lab: long' "$s" && continue
				grep -q '^# lab: part of' "$s" && continue
				s=${s##*/}
				list+=" ${s%.sh}"
			done
		fi
		for s in $list; do
			banner "debug: $s"
			bash "selftests/lab/$s.sh" || rc=1
		done
		exit $rc
	) 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	p=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | awk '{s+=$1} END {print s+0}')
	f=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | awk '{s+=$3} END {print s+0}')
	echo "debug: $p passed, $f failed"
	return $rc
}

banner setup
scripts/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }
KVER=$(cat .cache/kver)

run_layer build make -j2 KVER="$KVER" all
if [[ " ${failed_layers[*]} " == *" build "* ]]; then
	echo "build failed: skipping the other layers"
	echo "$total_pass passed, $total_fail failed"
	exit 1
fi

for layer in "${layers[@]}"; do
	case $layer in
	unit)		run_layer unit make -C selftests/unit ;;
	sim)		run_layer sim selftests/sim/smoke.sh ;;
	determinism)	run_layer determinism selftests/sim/determinism.sh --seeds 3 ;;
	wire)		run_layer wire selftests/wire/test_dissector.py ;;
	provider)	run_layer provider providers/metaroce/tests/run-tests.sh ;;
	kunit)		run_layer kunit-lock selftests/kunit/lock-test.sh
			run_layer kunit scripts/kunit.sh ;;
	checkpatch)	run_layer checkpatch scripts/checkpatch.sh ;;
	fuzz)		run_layer fuzz scripts/fuzz.sh 60 ;;
	lab)		run_layer lab lab_layer short ;;
	lab-long)	run_layer lab-long lab_layer long ;;
	kernel612)	run_layer kernel612 kernel_layer 6.12 ;;
	debug)		run_layer debug debug_layer ;;
	debug-checker)	run_layer debug-checker debug_checker 6.1.192-debug ;;
	*)		echo "unknown layer: $layer"; exit 2 ;;
	esac
done

banner summary
if [ ${#failed_layers[@]} -gt 0 ]; then
	echo "failed layers: ${failed_layers[*]}"
fi
echo "$total_pass passed, $total_fail failed"
[ ${#failed_layers[@]} -eq 0 ]
