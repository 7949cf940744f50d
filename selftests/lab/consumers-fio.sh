#!/bin/bash
# Consumers: fio's rdma engine (Debian's fio, unmodified), verbs
# rdma_write, rdma_read and send, over mrc0 and then over the stock rxe
# (rxe0) instead (one device at a time: rdma_cm picks it by IP), clean and
# under netem loss 1% on both nodes' eth0:
#
#   n1  fio ioengine=rdma rw=write hostname=192.0.2.2 verb=V  --->
#   n2  fio ioengine=rdma rw=read  (the receiving side, listens)
#
# fio's rdma engine has no payload verification: each run must complete
# its FIO_SIZE without error; bandwidth and IOPS of both sides go to
# RUN/figures.txt.
# lab: long
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

FIO_SIZE=${FIO_SIZE:-32m}
lab_start
FIG=$LAB_RUN/figures.txt

port=5550

fio_run() {	# DEV NET VERB
	local out rc sout
	port=$((port + 1))
	lab_bg n2 fios "timeout -k 10 200 fio --output-format=terse --terse-version=3 --name=srv --ioengine=rdma --port=$port --rw=read --bs=64k --size=$FIO_SIZE --iodepth=8"
	lab_wait_for n2 "rdma res show cm_id | grep -q 'LISTEN.*:$port ' && sleep 1" 30 || { lab_wait fios; return 1; }
	out=$(LAB_CMD_TIMEOUT=260 n1 "timeout -k 10 200 fio --output-format=terse --terse-version=3 --name=cli --ioengine=rdma --hostname=192.0.2.2 --port=$port --verb=$3 --rw=write --bs=64k --size=$FIO_SIZE --iodepth=8 --iodepth_batch_complete=1")
	rc=$?
	echo "client: $out"
	[ $rc -eq 0 ] || n2 'pkill -x fio; true' >/dev/null
	sout=$(lab_wait fios) || rc=1
	echo "server: $sout"
	# terse v3: field 5 error; write bw KiB/s 48, iops 49; read bw 7, iops 8
	awk -F';' -v d="$1" -v n="$2" -v v="$3" '$1 == 3 {
		printf "%-5s %-5s %-6s client err=%s write %s KiB/s %s IOPS\n", d, n, v, $5, $48, $49 }' \
		<<<"$out" >>"$FIG"
	awk -F';' -v d="$1" -v n="$2" -v v="$3" '$1 == 3 {
		printf "%-5s %-5s %-6s server err=%s read %s KiB/s %s IOPS\n", d, n, v, $5, $7, $8 }' \
		<<<"$sout" >>"$FIG"
	[ $rc -eq 0 ] && awk -F';' '$1 == 3 && $5 == 0 && $48 > 0 { ok = 1 } END { exit !ok }' <<<"$out"
}

for dev in mrc0 rxe0; do
	check "n1: $dev added" lab_add_dev n1 $dev
	check "n2: $dev added" lab_add_dev n2 $dev
	for net in clean loss1; do
		if [ $net = loss1 ]; then
			lab_netem n1 loss 1% >/dev/null
			lab_netem n2 loss 1% >/dev/null
		fi
		for verb in write read send; do
			lab_dcheck $dev "$dev $net: fio rdma verb=$verb $FIO_SIZE" fio_run $dev $net $verb
		done
		lab_netem_clear
	done
	check "n1: $dev removed" n1 rdma link del $dev
	check "n2: $dev removed" n2 rdma link del $dev
done
echo "# fio figures:"
sed 's/^/#   /' "$FIG"
lab_summary
