#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# CI layer "sim" (scripts/test.sh sim): the simulator's smoke -- the fixed
# seeds of smoke.env under ASan/UBSan, every fault mix, with the coverage
# report -- then every plant (plants.sh) must be found by that smoke.
# Ends with "N passed, N failed" (smoke runs + plants found).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/sim/smoke.env
. "$here/smoke.env"
log=$(mktemp /tmp/sim-smoke.XXXXXX)
trap 'rm -f "$log"' EXIT

pass=0 fail=0 rc=0
# smoke_run CMD...: run one simulator command, add its "N passed, N
# failed" to the totals (a run that fails without that line counts 1)
smoke_run() {
	local r line p f

	"$@" 2>&1 | tee "$log"
	r=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	p=${line%% *}
	f=$(awk '{print $3}' <<<"$line")
	[ "$r" -eq 0 ] || [ "${f:-0}" -gt 0 ] || f=1
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-1}))
	[ "$r" -eq 0 ] || rc=1
}

smoke_run "$here/sim" --seeds "$SIM_SMOKE_SEEDS" --coverage
# the UC scenario (not part of "all", whose seeds the plants rely on)
smoke_run "$here/sim" --seeds "${SIM_SMOKE_UC_SEEDS:-300}" --scenario uc
# "close" (not part of "all" either): the receiver closes its QP right
# after its last message; every WR must still complete (stop 14)
# shellcheck disable=SC2086
smoke_run "$here/sim" --seeds "${SIM_SMOKE_CLOSE_SEEDS:-60}" $SIM_SMOKE_CLOSE_ARGS
# "rnrhold" (not part of "all" either): responses go through RNR waits
# longer than a timeout, while the peer posts its receive only once its
# READ completed (stop 35)
# shellcheck disable=SC2086
smoke_run "$here/sim" --seeds "${SIM_SMOKE_RNRHOLD_SEEDS:-200}" \
	$SIM_SMOKE_RNRHOLD_ARGS
# "rnrdep": the same without the bounds that keep the PSN window from
# filling -- version 2 deadlocked there (stop 36, protocol.rst "RNR and
# the request epoch"); every requester
# shellcheck disable=SC2086
smoke_run "$here/sim" --seeds "${SIM_SMOKE_RNRDEP_SEEDS:-200}" \
	$SIM_SMOKE_RNRDEP_ARGS
# then every plant must be found by those runs
smoke_run "$here/plants.sh"

echo "sim: $pass passed, $fail failed"
[ "$rc" -eq 0 ]
