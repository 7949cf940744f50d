#!/bin/bash
# scripts/kunit.sh's lock over the shared kernel source: two runs from
# different worktrees (their own sources and build directories, one
# .cache/linux-source) started at once must not use the shared glue
# directory at the same time -- the second waits, saying so, and each
# run builds its own sources.
#
# No kernel is built: METAROCE_CACHE points at a fake linux-source whose
# tools/testing/kunit/kunit.py is a stub. The stub checks that the glue
# directory holds its own run's test file when it starts and still after
# a pause (another run syncing its sources in between would replace it),
# logs when it started and ended, and reports one passing test.
#
# Usage: selftests/kunit/lock-test.sh      (a few seconds; no KUnit build)
# Last line: "N passed, N failed".
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
p=0 f=0
check() {	# DESC CONDITION...
	local desc=$1; shift
	if "$@"; then
		echo "ok    $desc"; p=$((p + 1))
	else
		echo "FAIL  $desc"; f=$((f + 1))
	fi
}

# --- a fake shared kernel source --------------------------------------------
lsrc=$t/cache/linux-source
mkdir -p "$lsrc/drivers" "$lsrc/tools/testing/kunit"
: >"$lsrc/Makefile"
: >"$lsrc/drivers/Kconfig"
: >"$lsrc/drivers/Makefile"
cat >"$lsrc/tools/testing/kunit/kunit.py" <<'PY'
#!/usr/bin/env python3
# Stub of kunit.py run: the last argument names the run (A or B).
import json, os, sys, time

args = sys.argv[1:]
tag = args[-1]
out = [a.split("=", 1)[1] for a in args if a.startswith("--json=")][0]
glue = os.path.join(os.getcwd(), "drivers/metaroce_kunit/tests/t_kunit.c")
events = os.environ["LOCKTEST_EVENTS"]

def mine():
    with open(glue) as fh:
        return fh.read().strip() == tag

def log(what):
    with open(events, "a") as fh:
        fh.write("%s %s %d\n" % (what, tag, time.monotonic_ns()))

log("start")
ok = mine()
time.sleep(float(os.environ.get("LOCKTEST_HOLD", "3")))
ok = ok and mine()
log("end")
print("stub %s: glue %s" % (tag, "was ours throughout" if ok else
                            "CHANGED under us (another run's sources)"))
with open(out, "w") as fh:
    json.dump({"test_cases": [{"status": "PASS" if ok else "FAIL"}]}, fh)
sys.exit(0 if ok else 1)
PY
chmod +x "$lsrc/tools/testing/kunit/kunit.py"

# --- two worktrees: own sources, own build directories ----------------------
for w in A B; do
	mkdir -p "$t/$w/core" "$t/$w/tests" "$t/$w/inc"
	echo "int x;" >"$t/$w/core/c.c"
	echo "$w" >"$t/$w/tests/t_kunit.c"
done
run() {	# TAG
	METAROCE_CACHE=$t/cache LOCKTEST_EVENTS=$t/events \
	METAROCE_KUNIT_CORE_DIR=$t/$1/core METAROCE_KUNIT_TEST_DIR=$t/$1/tests \
	METAROCE_KUNIT_INC_DIR=$t/$1/inc METAROCE_KUNIT_BUILD_DIR=$t/$1/build \
		bash "$ROOT/scripts/kunit.sh" "$1" >"$t/$1.out" 2>&1
}
run A & pa=$!
sleep 0.5
run B & pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
for w in A B; do sed "s/^/  $w| /" "$t/$w.out"; done
sed 's/^/  events| /' "$t/events"

check "run A passed (rc $ra)" [ "$ra" -eq 0 ]
check "run B passed (rc $rb)" [ "$rb" -eq 0 ]
# start X, end X, start Y, end Y: no overlap
order=$(awk '{printf "%s%s ", $1, $2}' "$t/events")
check "the runs used the shared source one after the other ($order)" \
	grep -Eq '^startA endA startB endB $|^startB endB startA endA $' <<<"$order"
check "the waiting run said why it waited" \
	grep -q 'shared kernel source.*waiting' "$t/A.out" "$t/B.out"
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
