#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab: long
# pyverbs: rdma-core's own Python test suite (python3-pyverbs, its tests in
# /usr/share/doc/rdma-core/tests, gzipped: unpacked into build/pyverbs-tests
# on the host) against mrc0 on n1 and, on the same lab, against the stock
# rdma_rxe (rxe0) on n2, one device each, loopback traffic. Prints both
# counts (run / failures / errors / skipped) and the failing tests.
#
#   n1: mrc0 on eth0: run_tests.py --dev mrc0 --gid G
#   n2: rxe0 on eth0: run_tests.py --dev rxe0 --gid G   (reference)
#
# Fails on any failure or error on mrc0, if mrc0 passes fewer tests than
# rxe0 (passed = run - failures - errors - skipped), if a UC QP test skips
# on mrc0 (metaroce has UC QPs since issue 14's second stop), or on any
# kernel warning. Before UC (issue 14): mrc0 ran 273, passed 81, skipped
# 192 (5 of them UC), no failure; rxe0 ran 273, passed 86, 1 error
# (test_qp_ex_rc_atomic_write), skipped 186. Both skip the rdma_cm tests
# ("doesn't have net interface") and the mlx5/efa ones. PYVERBS_TESTS narrows both
# runs to unittest names (e.g. "tests.test_mr tests.test_qpex").
# LAB_MODULE may point at another metaroce.ko.
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=/usr/share/doc/rdma-core/tests
T=$ROOT/build/pyverbs-tests/tests
[ -f "$SRC/run_tests.py" ] ||
	lab_fatal "$SRC missing: apt-get install python3-pyverbs (scripts/setup.sh)"
rm -rf "$T" && mkdir -p "$T" && cp "$SRC"/* "$T"/ && gunzip -f "$T"/*.gz ||
	lab_fatal "cannot unpack $SRC"

# run NODE DEV: the suite on NODE's DEV; the log in the lab run dir.
run() {
	local node=$1 dev=$2
	LAB_CMD_TIMEOUT=3000 lab_run "$node" "cd $T/.. &&
gid=\$(for g in /sys/class/infiniband/$dev/ports/1/gids/*; do
	grep -q '^0000:0000:0000:0000:0000:ffff' \$g && basename \$g && break
done)
PYTHONDONTWRITEBYTECODE=1 timeout 2700 /usr/bin/python3 tests/run_tests.py --dev $dev --gid \$gid -v ${PYVERBS_TESTS:-} 2>&1" \
		>"$LAB_RUN/pyverbs-$dev.log" 2>&1
	true
}

# counts DEV: "run failures errors skipped" of its log
counts() {
	local log=$LAB_RUN/pyverbs-$1.log r f e s
	r=$(sed -n 's/^Ran \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	f=$(grep -o 'failures=[0-9]*' "$log" | tail -1 | cut -d= -f2)
	e=$(grep -o 'errors=[0-9]*' "$log" | tail -1 | cut -d= -f2)
	s=$(grep -o 'skipped=[0-9]*' "$log" | tail -1 | cut -d= -f2)
	echo "${r:-0} ${f:-0} ${e:-0} ${s:-0}"
}

lab_start
check "n1: metaroce loaded, mrc0 on eth0" lab_add_dev n1 mrc0
check "n2: rxe0 on eth0" lab_add_dev n2 rxe0
run n1 mrc0 &
p1=$!
run n2 rxe0 &
p2=$!
wait "$p1" "$p2"	# not a bare wait: the qemus are children too
for dev in mrc0 rxe0; do
	read -r r f e s < <(counts $dev)
	echo "# pyverbs $dev: ran $r, passed $((r - f - e - s)), failed $f, errors $e, skipped $s"
	grep -E '^(FAIL|ERROR): ' "$LAB_RUN/pyverbs-$dev.log" | sort | sed "s/^/#   $dev: /"
done
read -r r1 f1 e1 s1 < <(counts mrc0)
read -r r2 f2 e2 s2 < <(counts rxe0)
# UC QPs (protocol.rst "Unreliable connected (UC)"): none may skip.
uc=$(grep -c "skipped 'Create UC QP" "$LAB_RUN/pyverbs-mrc0.log")
echo "# mrc0 skips $uc UC QP tests"
check "pyverbs ran on mrc0" test "$r1" -gt 0
check "mrc0: no failures or errors ($f1, $e1)" test $((f1 + e1)) -eq 0
check "mrc0: no UC QP test skipped ($uc)" test "$uc" -eq 0
check "mrc0 passes at least as many as rxe0 ($((r1 - f1 - e1 - s1)) vs $((r2 - f2 - e2 - s2)))" \
	test $((r1 - f1 - e1 - s1)) -ge $((r2 - f2 - e2 - s2))
check "n1: rdma link delete mrc0" n1 rdma link delete mrc0
check "n2: rdma link delete rxe0" n2 rdma link delete rxe0
lab_summary
