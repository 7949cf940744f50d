#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sched-trace.sh: who runs on each guest's vCPU(s) while perftest moves
# data, and how long network receive waits for it. For metaroce (mrc0)
# and rxe (rxe0) side by side, in one lab sitting.
#
#   scripts/sched-trace.sh [-D SECS] [-W SECS] [-t TEST] [VARIANT...]  (default mrc0 rxe0)
#   scripts/sched-trace.sh --summarize RUNDIR                (again, no lab)
#
# TEST is ib_write_bw (default), ib_read_bw or ib_send_bw, 64 KiB, for
# SECS (10) s; VARIANT as in scripts/perf-stages.sh (mrc0, rxe0 or
# NAME=SHELL run on both nodes first). Both guests record ftrace's
# sched_switch, sched_wakeup and softirq_entry/exit for a window of W (2)
# seconds in the middle of the run (tracing costs some throughput: the
# MiB/s printed are of the traced run). For each node the summary gives:
#   - CPU time per task (perftest, ksoftirqd, kworkers, idle, other), the
#     softirq time run inside it taken out and shown per softirq instead;
#   - NET_RX softirq time split by where it ran: inside ksoftirqd (receive
#     was deferred to a thread that competes with perftest's busy poll)
#     or on an interrupt's exit / bh enable in another task;
#   - how long ksoftirqd waited from its wakeup to running, and from being
#     preempted while still runnable (work pending) to running again (p50,
#     p99, max, and the total): the receive delay the deferral cost.
# With LAB_SMP > 1 the shares are of all the node's vCPUs' time.
# (benchmarks.md: this is how transmission was moved out of the ACK's
# softirq in full-0830; here it is a committed tool.)
#
# Output: build/sched-trace/<stamp>/ (NAME-NODE.trace.gz, summary.md)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DUR=10
WIN=2
TEST=ib_write_bw
summarize_only=

summarize() {
	python3 - "$@" <<'EOF'
import gzip, os, re, sys

out = sys.argv[1]
meta = dict(l.rstrip('\n').split('=', 1) for l in open(os.path.join(out, 'meta.txt')) if '=' in l)
LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')
SWITCH = re.compile(r'prev_comm=(.+?) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.+?) next_pid=(\d+)')
WAKE = re.compile(r'comm=(.+?) pid=(\d+)')
VEC = re.compile(r'vec=(\d+) \[action=(\w+)\]')


def group(comm):
    if comm.startswith('swapper') or comm == '<idle>':
        return 'idle'
    if comm.startswith('ksoftirqd'):
        return 'ksoftirqd'
    if comm.startswith('kworker'):
        return 'kworker'
    if comm.startswith('ib_') or comm.startswith('perftest'):
        return 'perftest'
    return 'other'


def pct(v, q):
    if not v:
        return 0.0
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def one(path):
    """Shares are of all the CPUs' time (span x CPUs seen); state per CPU."""
    task = {}		# group -> seconds on a CPU (softirq time inside excluded)
    sirq = {}		# (action, group it ran inside) -> seconds
    nsirq = {}
    waits = []		# ksoftirqd wakeup -> running, seconds
    preempt = []	# ksoftirqd preempted while runnable -> running again
    cur, since, in_sirq = {}, {}, {}	# per CPU: group, since when; (action, group, start)
    woke, out_r = {}, {}	# per ksoftirqd: woken at; switched out still runnable at
    first, last = None, None
    lost = 0
    for line in gzip.open(path, 'rt', errors='replace'):
        m = LINE.match(line)
        if not m:
            lost += 'LOST' in line
            continue
        comm, cpu, ts, ev, rest = m.group(1), m.group(3), float(m.group(4)), m.group(5), m.group(6)
        if first is None:
            first = ts
        last = ts
        if cpu not in cur:
            cur[cpu], since[cpu] = group(comm), ts
        if ev == 'sched_switch':
            s = SWITCH.search(rest)
            if not s:
                continue
            task[cur[cpu]] = task.get(cur[cpu], 0.0) + ts - since[cpu]
            cur[cpu], since[cpu] = group(s.group(4)), ts
            if s.group(1).startswith('ksoftirqd') and s.group(3).startswith('R'):
                out_r[s.group(1)] = ts
            k = s.group(4)
            if k.startswith('ksoftirqd'):
                if k in woke:
                    waits.append(ts - woke.pop(k))
                if k in out_r:
                    preempt.append(ts - out_r.pop(k))
        elif ev == 'sched_wakeup':
            w = WAKE.search(rest)
            if w and w.group(1).startswith('ksoftirqd') and w.group(1) not in woke:
                woke[w.group(1)] = ts
        elif ev == 'softirq_entry':
            v = VEC.search(rest)
            if v:
                in_sirq[cpu] = (v.group(2), group(comm), ts)
        elif ev == 'softirq_exit' and cpu in in_sirq:
            a, g, t0 = in_sirq.pop(cpu)
            sirq[(a, g)] = sirq.get((a, g), 0.0) + ts - t0
            nsirq[(a, g)] = nsirq.get((a, g), 0) + 1
            task[g] = task.get(g, 0.0) - (ts - t0)
    for c in cur:
        task[cur[c]] = task.get(cur[c], 0.0) + last - since[c]
    span = (last - first) * max(len(cur), 1) if first is not None else 0.0
    return span, task, sirq, nsirq, waits, preempt, lost, len(cur)

res = ['%s 64 KiB, ftrace window of %s s per node (sched_switch, sched_wakeup, '
       'softirq_entry/exit).\n' % (meta.get('test', '?'), meta.get('win', '?'))]
for run in meta.get('runs', '').split():
    name, node = run.rsplit('-', 1)
    path = os.path.join(out, run + '.trace.gz')
    if not os.path.exists(path):
        res.append('- %s: no trace\n' % run)
        continue
    span, task, sirq, nsirq, waits, preempt, lost, ncpu = one(path)
    if span <= 0:
        res.append('- %s: empty trace\n' % run)
        continue
    res.append('### %s on %s: %s MiB/s (traced run), window %.2f s%s%s\n' %
               (name, node, meta.get(name + '.bw', '?'), span / ncpu,
                ' x %d CPUs (shares of all their time)' % ncpu if ncpu > 1 else '',
                ' (ftrace lost events %d times: shares are not exact)' % lost if lost else ''))
    res.append('| on the CPU | share |')
    res.append('|---|---|')
    for g in ('perftest', 'kworker', 'ksoftirqd', 'other', 'idle'):
        res.append('| %s (without softirqs) | %.1f%% |' % (g, 100 * task.get(g, 0.0) / span))
    for (a, g), t in sorted(sirq.items(), key=lambda x: -x[1]):
        res.append('| softirq %s inside %s (%d runs) | %.1f%% |' % (a, g, nsirq[(a, g)], 100 * t / span))
    rx = sum(t for (a, g), t in sirq.items() if a == 'NET_RX')
    rxk = sirq.get(('NET_RX', 'ksoftirqd'), 0.0)
    res.append('')
    res.append('- NET_RX: %.1f%% of the window, %.0f%% of it deferred to ksoftirqd' %
               (100 * rx / span, 100 * rxk / rx if rx else 0))
    for what, v in (('wakeup -> running', waits),
                    ('preempted while runnable -> running again', preempt)):
        res.append('- ksoftirqd %s: %d waits, p50 %.2f ms, p99 %.2f ms, max %.2f ms, '
                   'total %.1f%% of the window' %
                   (what, len(v), pct(v, 0.5) * 1e3, pct(v, 0.99) * 1e3,
                    max(v, default=0) * 1e3, 100 * sum(v) / span))
    res.append('')
txt = '\n'.join(res) + '\n'
open(os.path.join(out, 'summary.md'), 'w').write(txt)
print(txt)
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--summarize) summarize_only=$2; shift 2 ;;
	-D) DUR=$2; shift 2 ;;
	-W) WIN=$2; shift 2 ;;
	-t) TEST=$2; shift 2 ;;
	-h|--help) sed -n '3,28p' "$0"; exit 0 ;;
	*) break ;;
	esac
done
if [ -n "$summarize_only" ]; then
	summarize "$summarize_only"
	exit
fi
case $TEST in
ib_write_bw|ib_send_bw|ib_read_bw) ;;
*) echo "sched-trace: -t takes ib_write_bw, ib_send_bw or ib_read_bw" >&2; exit 2 ;;
esac
[ "$WIN" -lt "$DUR" ] || { echo "sched-trace: -W must be shorter than -D" >&2; exit 2; }
DEVS=("$@")
[ ${#DEVS[@]} -gt 0 ] || DEVS=(mrc0 rxe0)

OUT=$ROOT/build/sched-trace/$(date -u +%m%d-%H%M%S)
mkdir -p "$OUT"
ln -sfn "$OUT" "$ROOT/build/sched-trace/last"

LAB_NAME=schedtrace
# shellcheck source=scripts/lab/lab.sh
. "$ROOT/scripts/lab/lab.sh"

T=/sys/kernel/tracing
{
	echo "test=$TEST"
	echo "dur=$DUR"
	echo "win=$WIN"
	echo "runs=$(for d in "${DEVS[@]}"; do printf '%s-n1 %s-n2 ' "${d%%=*}" "${d%%=*}"; done)"
} >"$OUT/meta.txt"

lab_start
lab_load_contenders

name='' dev=''	# set by lab_variant
for spec in "${DEVS[@]}"; do
	lab_variant "$spec"	# sets name and dev
	for n in n1 n2; do
		lab_run $n "mountpoint -q $T || mount -t tracefs tracefs $T
echo 0 >$T/tracing_on; echo >$T/trace; echo 16384 >$T/buffer_size_kb
for e in sched/sched_switch sched/sched_wakeup irq/softirq_entry irq/softirq_exit; do echo 1 >$T/events/\$e/enable; done" ||
			lab_fatal "$n: cannot set up ftrace"
	done
	lab_bg n2 srv "$TEST" -d "$dev" -x 1 -F -s 65536 -D "$DUR"
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || lab_fatal "no server"
	lab_bg n1 cli "$TEST" -d "$dev" -x 1 -F -s 65536 -D "$DUR" 192.0.2.2
	# the window: from a third into the run, on both nodes at once
	sleep $((DUR / 3 + 2))
	lab_bg n2 tr2 "echo 1 >$T/tracing_on; sleep $WIN; echo 0 >$T/tracing_on"
	n1 "echo 1 >$T/tracing_on; sleep $WIN; echo 0 >$T/tracing_on"
	lab_wait tr2 >/dev/null
	out=$(lab_wait cli)
	lab_wait srv >/dev/null
	bw=$(awk '$1 == 65536 { print $4 * 1000000 / 1048576 }' <<<"$out")
	echo "$name ($dev): $bw MiB/s"
	echo "$name.bw=$bw" >>"$OUT/meta.txt"
	for n in n1 n2; do
		lab_run $n "cat $T/trace | gzip -1 >/tmp/lab/$name-$n.trace.gz
for e in sched/sched_switch sched/sched_wakeup irq/softirq_entry irq/softirq_exit; do echo 0 >$T/events/\$e/enable; done
echo >$T/trace"
		mv "$LAB_RUN/$name-$n.trace.gz" "$OUT/" 2>/dev/null
	done
done
lab_summary
summarize "$OUT"
echo "output: $OUT"
