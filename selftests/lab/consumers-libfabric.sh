#!/bin/bash
# Consumers: libfabric's verbs provider (Debian's libfabric1/libfabric-bin,
# unmodified) over mrc0 and then over the stock rxe (rxe0) instead (one
# device at a time: the verbs provider connects through rdma_cm, which
# picks the device by IP), clean and under netem loss 1% on both eth0:
#
#   n1/n2  fi_info -p verbs: the device is listed (msg and rdm via ofi_rxm)
#   n1  fi_pingpong -p P -e E -d DEV -c 192.0.2.2  <--->  n2  fi_pingpong ...
#       P;E: verbs;msg  and  verbs;ofi_rxm;rdm   (-c: payload checked)
#
# FI_UNIVERSE_SIZE=64: ofi_rxm sizes its verbs CQ as rx + tx * universe
# size (default 1024 peers: 128 * 1024 + 4096 = 135168 CQEs), more than
# rxe (32767) or mrc0 (65535) allow, and fi_enable() fails with EINVAL
# ("vrb_cq_open(): Unable to create verbs CQ", FI_LOG_LEVEL=warn) on both;
# two nodes need far fewer.
# lab: long
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

FI_ITERS=${FI_ITERS:-100}
lab_start
FIG=$LAB_RUN/figures.txt

port=47600

# fi_pp DEV NET PROV EP SIZE: one fi_pingpong pair
fi_pp() {
	local dev=$1 net=$2 prov=$3 ep=$4 size=$5 out rc
	port=$((port + 1))
	lab_bg n2 fipp "FI_UNIVERSE_SIZE=64 timeout 300 fi_pingpong -p '$prov' -e $ep -d $dev -B $port -I $FI_ITERS -S $size -c"
	lab_wait_for n2 "ss -ltn | grep -q :$port" 30 || { lab_wait fipp; return 1; }
	out=$(LAB_CMD_TIMEOUT=360 n1 "FI_UNIVERSE_SIZE=64 timeout 300 fi_pingpong -p '$prov' -e $ep -d $dev -P $port -I $FI_ITERS -S $size -c 192.0.2.2")
	rc=$?
	echo "$out"
	[ $rc -eq 0 ] || n2 'pkill -x fi_pingpong; true' >/dev/null
	lab_wait fipp || rc=1
	awk -v d="$dev" -v n="$net" -v p="$prov/$ep" '$1 ~ /^[0-9]/ && NF >= 6 {
		printf "%-5s %-5s %-17s %s\n", d, n, p, $0 }' <<<"$out" >>"$FIG"
	[ $rc -eq 0 ] && grep -qE '^[0-9]' <<<"$out"
}

for dev in mrc0 rxe0; do
	check "n1: $dev added" lab_add_dev n1 $dev
	check "n2: $dev added" lab_add_dev n2 $dev
	check "n1: fi_info -p verbs lists $dev (msg)" \
		n1 "fi_info -p verbs -t FI_EP_MSG | grep -E 'domain: +$dev\$'"
	check "n1: fi_info -p 'verbs;ofi_rxm' lists $dev (rdm)" \
		n1 "fi_info -p 'verbs;ofi_rxm' -t FI_EP_RDM | grep -E 'domain: +$dev\$'"
	for net in clean loss1; do
		if [ $net = loss1 ]; then
			lab_netem n1 loss 1% >/dev/null
			lab_netem n2 loss 1% >/dev/null
		fi
		for size in 64 65536; do
			lab_dcheck $dev "$dev $net: fi_pingpong verbs msg $size B -c" \
				fi_pp $dev $net verbs msg $size
			lab_dcheck $dev "$dev $net: fi_pingpong verbs;ofi_rxm rdm $size B -c" \
				fi_pp $dev $net 'verbs;ofi_rxm' rdm $size
		done
		lab_netem_clear
	done
	check "n1: $dev removed" n1 rdma link del $dev
	check "n2: $dev removed" n2 rdma link del $dev
done
echo "# fi_pingpong figures (bytes iters total time MB/sec usec/xfer Mxfers/sec):"
sed 's/^/#   /' "$FIG"
lab_summary
