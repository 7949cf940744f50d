#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lat-trace.sh: where one iteration of a perftest latency test spends its
# time, for metaroce (mrc0) and rxe (rxe0) side by side in one lab sitting.
#
#   scripts/lat-trace.sh [-t TEST] [-s SIZE] [-n ITERS] [VARIANT...]  (default mrc0 rxe0)
#   scripts/lat-trace.sh --summarize RUNDIR                 (again, no lab)
#
# TEST is ib_read_lat (default), ib_write_lat or ib_send_lat, SIZE bytes
# (2), ITERS iterations (2000); VARIANT as in scripts/perf-stages.sh (mrc0,
# rxe0 or NAME=SHELL run on both nodes first). Both guests record ftrace's
# sys_enter_write (the doorbell: a POST_SEND command, for both providers),
# net_dev_xmit, netif_receive_skb and softirq_entry/exit for the whole
# run. Per iteration of the client (n1), medians over all iterations:
#
#   post      doorbell -> the request leaves eth0 (post_send, build, IP/UDP)
#   round     request out -> the answer is in eth0's receive path
#             (wire both ways and the server's turnaround)
#   receive   answer in -> the end of that receive softirq (ICRC,
#             placement, completion; for READ the response's processing)
#   app       softirq end -> the next doorbell (perftest's poll and loop)
#   server    on n2: a packet received -> the next packet sent
#             (for READ the responder's turnaround)
#
# The two guests' clocks are not compared: each stage is timed on one
# node. Tracing costs emulated CPU: compare the stages across devices,
# not with the untraced latencies of scripts/bench.sh. The split is
# clean for ib_read_lat (one request, one response, the sum of the n1
# stages is perftest's t_typical). ib_write_lat and ib_send_lat report
# half the round trip (the sum is twice t_typical), their server's
# turnaround includes its application, and the first packet back may be
# an ACK rather than the peer's message (rxe ACKs each one), which moves
# time from "round" into "app": compare their sums, not their stages.
#
# Output: build/lat-trace/<stamp>/ (NAME-NODE.trace.gz, summary.md)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TEST=ib_read_lat
SIZE=2
ITERS=2000
summarize_only=

summarize() {
	python3 - "$@" <<'EOF'
import gzip, os, re, statistics, sys

out = sys.argv[1]
meta = dict(l.rstrip('\n').split('=', 1)
            for l in open(os.path.join(out, 'meta.txt')) if '=' in l)
EV = re.compile(r'\s*(.+?)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+)[:(] ?(.*)')


def events(path):
    for line in gzip.open(path, 'rt'):
        if line.startswith('#'):
            continue
        m = EV.match(line)
        if m:
            yield m.group(1), float(m.group(3)) * 1e6, m.group(4), m.group(5)


def med(x):
    return '%.0f' % statistics.median(x) if x else '-'


rows = []
for name in meta['runs'].split():
    post, rnd, rx, app, srv = [], [], [], [], []
    tw = tx = trx = tex = None
    for comm, t, ev, rest in events(os.path.join(out, name + '-n1.trace.gz')):
        # the doorbell: perftest's write of a 20-byte POST_SEND header
        if ev == 'sys_write' and comm.startswith('ib_') and 'count: 20)' in rest:
            if tex is not None:
                app.append(t - tex)
            tw, tx, trx, tex = t, None, None, None
        elif ev == 'net_dev_xmit' and tw is not None and tx is None:
            tx = t
            post.append(t - tw)
        elif ev == 'netif_receive_skb' and tx is not None and trx is None:
            trx = t
            rnd.append(t - tx)
        elif (ev == 'softirq_exit' and 'NET_RX' in rest and
              trx is not None and tex is None):
            tex = t
            rx.append(t - trx)
    tr = None
    for comm, t, ev, rest in events(os.path.join(out, name + '-n2.trace.gz')):
        if ev == 'netif_receive_skb':
            tr = t
        elif ev == 'net_dev_xmit' and tr is not None:
            srv.append(t - tr)
            tr = None
    tot = [sum(x) for x in zip(post, rnd, rx, app)]
    rows.append((name, meta.get(name + '.lat', '?'), post, rnd, rx, app, srv, tot))

txt = ['%s %s B, traced: medians in usec of guest time per iteration '
       '(%s iterations)\n' % (meta['test'], meta['size'], meta['iters'])]
txt.append('| stage | ' + ' | '.join(r[0] for r in rows) + ' |')
txt.append('|---|' + '---|' * len(rows))
for i, st in enumerate(['post (n1: doorbell -> request out)',
                        'round (n1: request out -> answer in)',
                        'receive (n1: answer in -> softirq end)',
                        'app (n1: softirq end -> next doorbell)',
                        'server (n2: packet in -> packet out)',
                        'sum of n1 stages']):
    txt.append('| %s | %s |' % (st, ' | '.join(med(r[2 + i]) for r in rows)))
txt.append('| perftest t_typical (traced; write/send: half the round trip) | %s |'
           % ' | '.join(r[1] for r in rows))
txt.append('| iterations matched | %s |' % ' | '.join(str(len(r[3])) for r in rows))
s = '\n'.join(txt) + '\n'
open(os.path.join(out, 'summary.md'), 'w').write(s)
print(s)
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--summarize) summarize_only=$2; shift 2 ;;
	-t) TEST=$2; shift 2 ;;
	-s) SIZE=$2; shift 2 ;;
	-n) ITERS=$2; shift 2 ;;
	-h|--help) sed -n '3,30p' "$0"; exit 0 ;;
	*) break ;;
	esac
done
if [ -n "$summarize_only" ]; then
	summarize "$summarize_only"
	exit
fi
case $TEST in
ib_read_lat|ib_write_lat|ib_send_lat) ;;
*) echo "lat-trace: -t takes ib_read_lat, ib_write_lat or ib_send_lat" >&2; exit 2 ;;
esac
DEVS=("$@")
[ ${#DEVS[@]} -gt 0 ] || DEVS=(mrc0 rxe0)

OUT=$ROOT/build/lat-trace/$(date -u +%m%d-%H%M%S)
mkdir -p "$OUT"
ln -sfn "$OUT" "$ROOT/build/lat-trace/last"

LAB_NAME=lattrace
# shellcheck source=scripts/lab/lab.sh
. "$ROOT/scripts/lab/lab.sh"

T=/sys/kernel/tracing
EV="syscalls/sys_enter_write net/net_dev_xmit net/netif_receive_skb irq/softirq_entry irq/softirq_exit"
{
	echo "test=$TEST"
	echo "size=$SIZE"
	echo "iters=$ITERS"
	echo "runs=$(for d in "${DEVS[@]}"; do printf '%s ' "${d%%=*}"; done)"
} >"$OUT/meta.txt"

lab_start
lab_load_contenders
for n in n1 n2; do
	lab_run $n "mountpoint -q $T || mount -t tracefs tracefs $T
echo 0 >$T/tracing_on; echo 32768 >$T/buffer_size_kb
for e in $EV; do echo 1 >$T/events/\$e/enable; done" ||
		lab_fatal "$n: cannot set up ftrace"
done

name='' dev=''	# set by lab_variant
for spec in "${DEVS[@]}"; do
	lab_variant "$spec"	# sets name and dev
	for n in n1 n2; do
		lab_run $n "echo >$T/trace; echo 1 >$T/tracing_on" >/dev/null
	done
	lab_bg n2 srv "$TEST" -d "$dev" -x 1 -F -s "$SIZE" -n "$ITERS"
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || lab_fatal "no server"
	res=$(n1 "$TEST" -d "$dev" -x 1 -F -s "$SIZE" -n "$ITERS" 192.0.2.2)
	lab_wait srv >/dev/null || lab_fatal "$name: the server failed"
	lat=$(awk -v s="$SIZE" '$1 == s && NF >= 5 { print $5 }' <<<"$res")
	[ -n "$lat" ] || lab_fatal "$name: no result from $TEST"
	echo "$name ($dev): t_typical $lat usec (traced)"
	echo "$name.lat=$lat" >>"$OUT/meta.txt"
	for n in n1 n2; do
		lab_run $n "echo 0 >$T/tracing_on; cat $T/trace | gzip -1 >/tmp/lab/$name-$n.trace.gz"
		mv "$LAB_RUN/$name-$n.trace.gz" "$OUT/" ||
			lab_fatal "$name: no trace from $n"
	done
done
lab_summary
summarize "$OUT"
echo "output: $OUT"
