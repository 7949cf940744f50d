#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# perf-stages.sh: per-packet cost breakdown of ib_write_bw (or -t ib_read_bw,
# ib_send_bw) 64 KiB by stage
# (build, integrity, IP/UDP output, driver, receive, placement, ACK, ...)
# for metaroce (mrc0) and rxe (rxe0) side by side, in one lab sitting.
#
#   scripts/perf-stages.sh [-D SECS] [-F HZ] [-t TEST] [VARIANT...]  (default mrc0 rxe0)
#   scripts/perf-stages.sh --classify RUNDIR               (again, no lab)
#
# A VARIANT is a device (mrc0, rxe0) or NAME=SHELL as in scripts/ab.sh:
# SHELL runs on both nodes first, NAME starting with "rxe" means rxe0, any
# other mrc0 (e.g. old='rdma link del mrc0; rmmod metaroce; insmod A.ko &&
# rdma link add mrc0 type metaroce netdev eth0'). NAME has no "-".
#
# Both guests run `perf record -e cpu-clock -a -g` (TCG has no PMU, so
# software sampling at F Hz: a sample is 1/F s of guest CPU) for the whole
# client run; `perf script` output goes to the run directory, and each
# sample is given to the stage of the innermost call-chain frame that
# names one (table below, scripts/perf-stages.sh: classify()). The packet
# counts are eth0's tx/rx counters of both nodes over the same window, so
# a stage's cost per data packet is samples / F / data packets.
#
# It also times crc32c per byte (SSE4.2 crc32 instruction, the kernel's
# crc32c-intel path) on the host and in a guest: TCG emulates that
# instruction in software, so the guests' integrity share is an artefact.
#
# Output: build/perf-stages/<stamp>/ (stages.md, NAME-NODE.script.gz, crc.txt)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DUR=10
HZ=250
TEST=ib_write_bw
classify_only=

classify() {
	python3 - "$@" <<'EOF'
import gzip, re, sys, os

out = sys.argv[1]
HZ = float(sys.argv[2])
# (stage, regex over a frame's symbol), tried frame by frame from the
# leaf towards the root; the first frame that matches one decides.
RULES = [
    ('integrity', r'crc32|icrc|crc_t10|^crc'),
    ('driver', r'^(virtnet_|virtqueue_|vring_|vp_notify|start_xmit|skb_recv_done|receive_buf|page_to_skb|free_old_xmit|add_recvbuf|try_fill_recv|xmit_skb|detach_buf|virtio_|vm_notify|iowrite16)'),
    ('placement', r'^(resp_place_|tp_env_mr_write|tp_env_rq_copy|metaroce_mr_copy_from_skb|resp_write_prefix_done|write_data_in|send_data_in|rxe_resp_.*(write|send)|execute$)'),
    ('ack', r'^(mrc_rx_build_ack|mrc_resp_send_ack|metaroce_tp_send_ack|tp_ack_fn|metaroce_tp_comp_ack|mrc_comp_ack|mrc_sb_apply_ack|mrc_paths_on_ack|mrc_cc_on_ack|mrc_rtt_|mrc_reo_on_ack|mrc_rx_ack|mrc_rx_sack|tp_env_trace_ack|send_ack|send_common_ack|prepare_ack_packet|acknowledge|rxe_completer|rxe_comp_|check_ack|check_psn|do_read)'),
    ('completion', r'^(metaroce_poll_cq|metaroce_cq_post|tp_env_post_|metaroce_tp_post_scqe|mrc_comp_complete|rxe_poll_cq|rxe_cq_post|do_complete|make_send_cqe|do_complete)'),
    ('build', r'^(metaroce_tp_build|tp_src_copy|tp_build_psn|mrc_hdr_build|metaroce_tp_alloc_skb|tp_env_sq_copy|tp_env_sq_fetch|tp_fetch_one|metaroce_tp_fetch|mrc_req_next|req_new_psn|req_desc|tp_env_emit|mrc_sb_send_new|mrc_paths_pick|rxe_requester|init_req_packet|finish_packet|rxe_init_packet|rxe_prepare|prepare_ipv|rxe_find_route|rxe_icrc_generate)'),
    ('ip_udp_out', r'^(ip_finish_output|ip_output|ip_local_out|__ip_local_out|iptunnel_xmit|udp_tunnel_xmit_skb|udp_tunnel6_xmit|ip6tunnel_xmit|ip6_local_out|ip6_output|ip6_finish|ip_route_output|ip_route_output_key_hash|fib_table_lookup|fib_lookup|ip_mc_output|__dev_queue_xmit|dev_queue_xmit|dev_hard_start_xmit|sch_direct_xmit|__qdisc_run|neigh_|__ip_select_ident|ip_send_check|dst_release|__ip_finish_output|validate_xmit_skb|netif_skb_features|udp_set_csum|skb_set_owner_w|sock_wfree|nf_hook|ip_route_output_flow|__ip_route_output|rxe_xmit_packet|rxe_send$|net_tx_action)'),
    ('receive', r'^(__netif_receive_skb|netif_receive_skb|ip_rcv|ip_local_deliver|ip_protocol_deliver|udp_rcv|__udp4_lib_rcv|udp_queue_rcv|udp_unicast_rcv|udpv6_|ip6_rcv|ip6_input|napi_gro_|dev_gro_receive|gro_|inet_gro|udp4_gro|udp_gro|metaroce_udp_recv|metaroce_encap_recv|metaroce_rx_dev|metaroce_tp_rx|mrc_resp_rx|mrc_rx_on_packet|mrc_rx_check|mrc_pkt_parse|mrc_pkt_check|mrc_hdr_parse|rxe_udp_encap_recv|rxe_rcv|rxe_resp_queue_pkt|rxe_comp_queue_pkt|hdr_check|check_type_state|check_keys|rxe_responder|get_req|check_op|napi_complete|__napi_poll|net_rx_action)'),
    ('transport_other', r'^(tp_|metaroce_|mrc_|rxe_|rdma_|ib_uverbs|do_task|rxe_run_task|do_work)'),
    ('user', r'^\[user\]$'),
    ('idle', r'^(default_idle|native_safe_halt|pv_native_safe_halt|arch_cpu_idle|do_idle|cpu_startup_entry|cpuidle_|acpi_idle)'),
]
RULES = [(s, re.compile(r)) for s, r in RULES]
ORDER = ['build', 'integrity', 'ip_udp_out', 'driver', 'receive',
         'placement', 'ack', 'completion', 'transport_other',
         'user', 'kernel_other', 'idle']

def samples(path):
    # perf script: a header line, then one indented line per frame
    # ("addr sym+off (dso)"), leaf first; a blank line ends the sample
    with gzip.open(path, 'rt', errors='replace') as f:
        frames, head = [], None
        for line in f:
            line = line.rstrip('\n')
            if not line.strip():
                if head is not None:
                    yield head, frames
                frames, head = [], None
            elif not line[0].isspace():
                if head is not None:
                    yield head, frames
                frames, head = [], line
            else:
                parts = line.split()
                if len(parts) < 2:
                    continue
                dso = parts[-1]
                sym = parts[1].rsplit('+0x', 1)[0]
                frames.append(sym if dso.startswith('([') else '[user]')
        if head is not None:
            yield head, frames

def stage_of(frames):
    if not frames or frames[0] == '[user]':
        return 'user'
    for fr in frames:
        for s, r in RULES:
            if r.search(fr):
                return s
    return 'kernel_other'

meta = {}
for line in open(os.path.join(out, 'meta.txt')):
    k, _, v = line.partition('=')
    meta[k.strip()] = v.strip()
rows = {}
tops = {}
for key in meta.get('runs', '').split():
    dev, node = key.split('-')
    path = os.path.join(out, key + '.script.gz')
    if not os.path.exists(path):
        continue
    cnt = {}
    unk = {}
    for head, frames in samples(path):
        s = stage_of(frames)
        cnt[s] = cnt.get(s, 0) + 1
        if s in ('kernel_other', 'transport_other'):
            leaf = frames[0] if frames else '?'
            unk[leaf] = unk.get(leaf, 0) + 1
    rows[key] = cnt
    tops[key] = sorted(unk.items(), key=lambda x: -x[1])[:12]

# the node that sends the data: the READ responder (n2) for ib_read_bw
test = meta.get('test', 'ib_write_bw')
src = 'n2' if test == 'ib_read_bw' else 'n1'
other = 'n1' if src == 'n2' else 'n2'

def pkts(dev):
    return int(meta.get(dev + '.' + src + '_tx_pkts', '0') or 0)

lines = []
lines.append('| stage | ' + ' | '.join(
    '%s %s' % (k.split('-')[0], k.split('-')[1]) for k in rows) + ' |')
lines.append('|---|' + '---|' * len(rows))
tot = {k: sum(v.values()) for k, v in rows.items()}
for s in ORDER:
    cells = []
    for k, v in rows.items():
        n = v.get(s, 0)
        p = pkts(k.split('-')[0])
        us = n / HZ / p * 1e6 if p else 0
        cells.append('%.1f%% %.1f us' % (100.0 * n / max(tot[k], 1), us))
    lines.append('| %s | %s |' % (s, ' | '.join(cells)))
cells = []
for k, v in rows.items():
    busy = tot[k] - v.get('idle', 0)
    p = pkts(k.split('-')[0])
    cells.append('%d samples, busy %.1f us' % (tot[k], busy / HZ / p * 1e6 if p else 0))
lines.append('| total | %s |' % ' | '.join(cells))
res = []
res.append('%s 64 KiB. Samples per stage (%% of all samples of that node) and guest CPU '
           'per data packet (samples / %d Hz / data packets sent by %s).\n' % (test, HZ, src))
res.append('\n'.join(lines) + '\n')
for dev in sorted(set(k.split('-')[0] for k in rows)):
    res.append('- %s: %s MiB/s; %s eth0 tx %s packets (data), %s eth0 tx %s packets (%s)'
               % (dev, meta.get(dev + '.bw', '?'), src, meta.get(dev + '.' + src + '_tx_pkts', '?'),
                  other, meta.get(dev + '.' + other + '_tx_pkts', '?'),
                  'READ requests, ACKs' if src == 'n2' else 'ACKs/responses'))
res.append('\nUnclassified leaves (kernel_other/transport_other), top 12 per node:\n')
for k, t in tops.items():
    res.append('- %s: %s' % (k, ', '.join('%s %d' % x for x in t)))
txt = '\n'.join(res) + '\n'
open(os.path.join(out, 'stages.md'), 'w').write(txt)
print(txt)
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--classify) classify_only=$2; shift 2 ;;
	-D) DUR=$2; shift 2 ;;
	-F) HZ=$2; shift 2 ;;
	-t) TEST=$2; shift 2 ;;
	-h|--help) sed -n '3,22p' "$0"; exit 0 ;;
	*) break ;;
	esac
done
if [ -n "$classify_only" ]; then
	HZ=$(sed -n 's/^hz=//p' "$classify_only/meta.txt")
	classify "$classify_only" "$HZ"
	exit
fi
case $TEST in
ib_write_bw|ib_send_bw|ib_read_bw) ;;
*) echo "perf-stages: -t takes ib_write_bw, ib_send_bw or ib_read_bw" >&2; exit 2 ;;
esac
DEVS=("$@")
[ ${#DEVS[@]} -gt 0 ] || DEVS=(mrc0 rxe0)

OUT=$ROOT/build/perf-stages/$(date -u +%m%d-%H%M%S)
mkdir -p "$OUT"
ln -sfn "$OUT" "$ROOT/build/perf-stages/last"

# crc32c per byte with the SSE4.2 instruction (what crc32c-intel uses)
CRCB=$OUT/crcbench
cat >"$OUT/crcbench.c" <<'EOF'
#include <nmmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static uint8_t buf[4096];
int main(void)
{
	struct timespec a, b;
	uint64_t crc = 0, n = 0;
	double s;
	memset(buf, 0x5a, sizeof(buf));
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int r = 0; r < 64; r++, n += sizeof(buf))
			for (size_t i = 0; i < sizeof(buf); i += 8)
				crc = _mm_crc32_u64(crc, *(uint64_t *)(buf + i));
		clock_gettime(CLOCK_MONOTONIC, &b);
		s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	} while (s < 1.0);
	printf("crc32c sse4.2: %.3f ns/byte (%.0f MiB/s) crc %llx\n",
	       s * 1e9 / n, n / s / 1048576, (unsigned long long)crc);
	return 0;
}
EOF
gcc -O2 -msse4.2 -o "$CRCB" "$OUT/crcbench.c" || exit 1

LAB_NAME=perfstages
# shellcheck source=scripts/lab/lab.sh
. "$ROOT/scripts/lab/lab.sh"
command -v perf >/dev/null || lab_fatal "perf is not installed"

echo "host: $("$CRCB")" | tee "$OUT/crc.txt"
lab_start
lab_load_contenders
echo "guest n1: $(n1 "$CRCB")" | tee -a "$OUT/crc.txt"
n1 'echo 0 >/proc/sys/kernel/kptr_restrict; echo -1 >/proc/sys/kernel/perf_event_paranoid' >/dev/null
n2 'echo 0 >/proc/sys/kernel/kptr_restrict; echo -1 >/proc/sys/kernel/perf_event_paranoid' >/dev/null

{
	echo "hz=$HZ"
	echo "dur=$DUR"
	echo "test=$TEST"
	echo "runs=$(for d in "${DEVS[@]}"; do printf '%s-n1 %s-n2 ' "${d%%=*}" "${d%%=*}"; done)"
} >"$OUT/meta.txt"

txp() { lab_run "$1" cat /sys/class/net/eth0/statistics/tx_packets; }

name='' dev=''	# set by lab_variant
for spec in "${DEVS[@]}"; do
	lab_variant "$spec"	# sets name and dev
	lab_bg n2 srv "$TEST" -d "$dev" -x 1 -F -s 65536 -D "$DUR"
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || lab_fatal "no server"
	a1=$(txp n1) a2=$(txp n2)
	lab_bg n2 perf-n2 "perf record -q -e cpu-clock -a -g -F $HZ -o /tmp/perf-$dev.data -- sleep $((DUR + 4)) 2>&1 | tail -2"
	sleep 1
	out=$(n1 "perf record -q -e cpu-clock -a -g -F $HZ -o /tmp/perf-$dev.data -- $TEST -d $dev -x 1 -F -s 65536 -D $DUR 192.0.2.2")
	lab_wait perf-n2 >/dev/null
	lab_wait srv >/dev/null
	b1=$(txp n1) b2=$(txp n2)
	bw=$(awk '$1 == 65536 { print $4 * 1000000 / 1048576 }' <<<"$out")
	echo "$name ($dev): $bw MiB/s, n1 tx $((b1 - a1)) n2 tx $((b2 - a2)) packets"
	{
		echo "$name.bw=$bw"
		echo "$name.n1_tx_pkts=$((b1 - a1))"
		echo "$name.n2_tx_pkts=$((b2 - a2))"
	} >>"$OUT/meta.txt"
	for n in n1 n2; do
		lab_run $n "perf script -i /tmp/perf-$dev.data -F comm,tid,time,ip,sym,dso 2>/dev/null | gzip -1 >/tmp/lab/$name-$n.script.gz"
		lab_run $n "perf report -i /tmp/perf-$dev.data --no-children --sort sym --stdio -g none --percent-limit 0.5 2>/dev/null | grep -v '^#' | grep -v '^\$'" >"$OUT/$name-$n.self.txt"
		mv "$LAB_RUN/$name-$n.script.gz" "$OUT/" 2>/dev/null
		[ $dev = mrc0 ] && echo "$name $n: $(lab_run $n rdma statistic show link mrc0/1 | tr -s ' ' | cut -d' ' -f4-)" >>"$OUT/counters.txt"
	done
done
lab_summary
classify "$OUT" "$HZ"
echo "output: $OUT"
