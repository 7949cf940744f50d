#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# nvmeof: a kernel ULP on metaroce. The stock NVMe over Fabrics RDMA target
# (nvmet-rdma) on n2 exports a RAM disk; the stock host (nvme-rdma) on n1
# discovers it, connects, and O_DIRECT writes/reads a known pattern at
# several offsets and sizes, verified on both ends, across a reconnect.
#
#            n1 (host)                                  n2 (target)
#   +--------------------------+                +--------------------------+
#   | dd O_DIRECT              |                | nqn.2014-08.org.metaroce |
#   |   |                      |                |   :nvmeof  ns 1          |
#   | /dev/nvmeXn1             |   NVMe/RDMA    |   |                      |
#   | nvme-rdma  (rdma_cm,     |   port 4420    | nvmet-rdma   /dev/ram0   |
#   |   FRMR, invalidate)      |<-------------->|   (rdma_rw)  (brd 64M)   |
#   | mrc0 -> eth0 192.0.2.1   |  metaroce/UDP  | mrc0 -> eth0 192.0.2.2   |
#   +--------------------------+                +--------------------------+
#
# Small writes travel in the command capsule (SEND, inline data); larger
# ones are fast-registered (IB_WR_REG_MR) and pulled by the target with
# RDMA READ; reads are RDMA WRITEs answered by SEND_WITH_INV (or a
# LOCAL_INV by the host). The pattern is a random file in the shared run
# directory: the host compares what it reads back, the target compares
# what landed on /dev/ram0.
# A hung NVMe command or drain is a failure, not a 5-minute wait.
# On the debug kernel nvme_core loads with multipath=N (LAB_NVME_CORE_OPTS,
# scripts/lab/lab.sh says why: a lockdep report in nvme_core's multipath
# head removal, not ours); on the stock kernel with its defaults.
LAB_CMD_TIMEOUT=${LAB_CMD_TIMEOUT:-120}
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=selftests/lab/lib/nvme.sh
. "$(dirname "$0")/lib/nvme.sh"

NQN=$NVME_NQN
SRV=$NVME_SRV
PAT=/tmp/lab/pattern		# guest path of $LAB_RUN/pattern
MIB=$((1024 * 1024))

# connect: nvme connect; the namespace's block device appears (n1)
connect() {
	nvme_connect n1
}
# write_at OFF LEN: O_DIRECT write of pattern[OFF, OFF+LEN) at byte OFF (n1)
write_at() {
	n1 "$NSDEV; set -e; d=\$(nsdev)
dd if=$PAT of=\$d bs=$2 count=1 skip=$1 seek=$1 iflag=skip_bytes \
   oflag=direct,seek_bytes conv=notrunc status=none"
}
# read_cmp OFF LEN: O_DIRECT read of LEN bytes at OFF equals the pattern (n1)
read_cmp() {
	n1 "$NSDEV; set -e; d=\$(nsdev)
dd if=\$d of=/tmp/rd bs=$2 count=1 skip=$1 iflag=direct,skip_bytes status=none
dd if=$PAT of=/tmp/want bs=$2 count=1 skip=$1 iflag=skip_bytes status=none
cmp /tmp/rd /tmp/want"
}
# target_cmp OFF LEN: the bytes on n2's /dev/ram0 equal the pattern
target_cmp() {
	n2 "set -e
a=\$(dd if=/dev/ram0 bs=$2 count=1 skip=$1 iflag=direct,skip_bytes status=none | sha256sum)
b=\$(dd if=$PAT bs=$2 count=1 skip=$1 iflag=skip_bytes status=none | sha256sum)
echo \"ram0 \$a\"; echo \"want \$b\"; [ \"\$a\" = \"\$b\" ]"
}
# unaligned_rw OFF LEN: O_DIRECT pwrite from a buffer starting 512 B into a
# page and pread into one 1536 B in (MRs whose first page is partial) (n1)
unaligned_rw() {
	n1 "$NSDEV; set -e; d=\$(nsdev)
python3 - \$d $PAT $1 $2 <<'EOF'
import mmap, os, sys
dev, pat, off, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with open(pat, 'rb') as f:
    f.seek(off)
    want = f.read(n)
fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
m = mmap.mmap(-1, n + 8192)
m[512:512 + n] = want
assert os.pwritev(fd, [memoryview(m)[512:512 + n]], off) == n
m[:] = bytes(len(m))
assert os.preadv(fd, [memoryview(m)[1536:1536 + n]], off) == n
sys.exit(0 if m[1536:1536 + n] == want else 'read back differs')
EOF"
}
# parallel_rw: four 256 KiB writes in flight at once, then read back (n1)
parallel_rw() {
	n1 "$NSDEV; set -e; d=\$(nsdev)
for i in 0 1 2 3; do
	o=\$(((48 + i) * $MIB))
	dd if=$PAT of=\$d bs=256K count=1 skip=\$o seek=\$o iflag=skip_bytes \
	   oflag=direct,seek_bytes conv=notrunc status=none &
done
wait
dd if=\$d of=/tmp/rd bs=4M count=1 skip=\$((48 * $MIB)) iflag=direct,skip_bytes status=none
for i in 0 1 2 3; do
	o=\$((i * $MIB))
	cmp -n 262144 -i \$o:\$((48 * $MIB + o)) /tmp/rd $PAT
done"
}

# kprobes NODE on|off|show: count metaroce_mr_fast_reg (IB_WR_REG_MR) and
# metaroce_mr_invalidate calls, the latter by caller: a received
# SEND_WITH_INV (tp_rcomplete) or an IB_WR_LOCAL_INV (tp_local_op)
TR=/sys/kernel/tracing
kprobes() {
	case $2 in
	on) lab_run "$1" "set -e
mountpoint -q $TR || mount -t tracefs tracefs $TR
echo 'p:mrc_reg metaroce_mr_fast_reg' >>$TR/kprobe_events
echo 'p:mrc_inv metaroce_mr_invalidate caller=+0(\$stack):symbol' >>$TR/kprobe_events
echo 1 >$TR/events/kprobes/enable" ;;
	off) lab_run "$1" "echo 0 >$TR/events/kprobes/enable; echo >$TR/kprobe_events" ;;
	show) lab_run "$1" "cat $TR/kprobe_profile
grep -o 'caller=[a-z_]*' $TR/trace | sort | uniq -c" ;;
	esac
}
# reg_inv_seen NODE: both REG_MR and an invalidation ran on NODE
reg_inv_seen() {
	local out
	out=$(kprobes "$1" show) || return 1
	echo "$out"
	awk '$1 == "mrc_reg" && $2 > 0 { r = 1 } $1 == "mrc_inv" && $2 > 0 { i = 1 }
	     END { exit !(r && i) }' <<<"$out"
}

# (offset size) pairs: in-capsule (<= 8 KiB), one page, page-unaligned
# multi-page, 128 KiB, 1 MiB (one full MR) and 4 MiB (split into several
# commands), unaligned to MiB boundaries.
REGIONS=(
	0 512
	$((4096 + 512)) 4096
	$((1 * MIB - 512)) $((8192 + 1024))
	$((3 * MIB + 4096)) $((128 * 1024))
	$((5 * MIB)) "$MIB"
	$((16 * MIB + 8192)) $((4 * MIB))
)

lab_start
head -c $((64 * MIB)) /dev/urandom >"$LAB_RUN/pattern"

for n in n1 n2; do
	check "$n: metaroce.ko loads, mrc0 on eth0" lab_load_metaroce $n
done
check "n2: nvmet-rdma exports brd /dev/ram0 as $NQN on rdma $SRV:4420" \
	lab_nvmet_up n2 $NQN $SRV 65536
check "n1: nvme-rdma loads (nvme_core ${LAB_NVME_CORE_OPTS:-defaults})" lab_nvme_host n1
check "n1: kprobes on MR fast-register / invalidate" kprobes n1 on
check "n1: nvme discover lists $NQN over rdma" \
	eval "n1 nvme discover -t rdma -a $SRV -s 4420 | grep -x 'subnqn: *$NQN'"
check "n1: nvme connect -t rdma, namespace appears" connect
check "n1: namespace is the 64 MiB ram disk" \
	n1 "$NSDEV; nvme list; [ \$(blockdev --getsize64 \$(nsdev)) = $((64 * MIB)) ]"
check "n1: controller is live over rdma to $SRV" \
	n1 "c=\$(grep -lx $NQN /sys/class/nvme/*/subsysnqn) && c=\${c%/*} &&
	    grep -x rdma \$c/transport && grep -x live \$c/state && grep "^traddr=$SRV,trsvcid=4420" \$c/address"
for ((i = 0; i < ${#REGIONS[@]}; i += 2)); do
	o=${REGIONS[i]} l=${REGIONS[i + 1]}
	check "n1: O_DIRECT write $l B at $o" write_at "$o" "$l"
	check "n1: O_DIRECT read $l B at $o matches the pattern" read_cmp "$o" "$l"
	check "n2: /dev/ram0 holds the pattern at $o (+$l)" target_cmp "$o" "$l"
done
check "n1: 200 KiB from/to buffers at page offsets 512/1536" \
	unaligned_rw $((40 * MIB + 1024)) $((200 * 1024))
check "n2: /dev/ram0 holds it" target_cmp $((40 * MIB + 1024)) $((200 * 1024))
check "n1: four concurrent 256 KiB writes, read back as one 4 MiB" parallel_rw
check "n1: the host fast-registered MRs and had them invalidated" reg_inv_seen n1
check "n1: nvme disconnect" eval "n1 nvme disconnect -n $NQN | grep 'disconnected 1 controller'"
check "n1: namespace gone" n1 "! grep -qx $NQN /sys/class/nvme/*/subsysnqn 2>/dev/null"
check "n1: nvme connect again" connect
for ((i = 0; i < ${#REGIONS[@]}; i += 2)); do
	o=${REGIONS[i]} l=${REGIONS[i + 1]}
	check "n1: after reconnect, read $l B at $o matches" read_cmp "$o" "$l"
done
check "n1: after reconnect, read 200 KiB at $((40 * MIB + 1024)) matches" \
	read_cmp $((40 * MIB + 1024)) $((200 * 1024))
check "n1: after reconnect, write 2 MiB at 32 MiB" write_at $((32 * MIB)) $((2 * MIB))
check "n1: after reconnect, read it back" read_cmp $((32 * MIB)) $((2 * MIB))
check "n2: /dev/ram0 holds it" target_cmp $((32 * MIB)) $((2 * MIB))
# The same I/O under netem on both nodes (NVMEOF_NETEM: ';'-separated
# netem arguments), at offsets not written before: nvme-rdma's WRITE data
# + SEND_WITH_INV and nvmet-rdma's READs of host memory, reordered and lost:
# loss alone, reordering alone, and both together (issue 10's "loss 1% and
# reorder 10%").
IFS=';' read -r -a NETEM <<<"${NVMEOF_NETEM:-loss 1%;delay 1ms reorder 10%;delay 1ms reorder 10% loss 1%}"
base=$((8 * MIB))
for cond in "${NETEM[@]}"; do
	check "netem $cond on both nodes" \
		eval "lab_netem n1 $cond && lab_netem n2 $cond"
	check "[$cond] n1: nvme disconnect" \
		eval "n1 nvme disconnect -n $NQN | grep 'disconnected 1 controller'"
	check "[$cond] n1: nvme connect" connect
	for r in "4096 $((128 * 1024))" "$((256 * 1024 + 512)) $((8192 + 1024))" \
		 "$MIB $MIB" "$((2 * MIB)) $((2 * MIB))"; do
		read -r o l <<<"$r"
		o=$((base + o))
		check "[$cond] n1: O_DIRECT write $l B at $o" write_at "$o" "$l"
		check "[$cond] n1: read $l B at $o matches" read_cmp "$o" "$l"
		check "[$cond] n2: /dev/ram0 holds it" target_cmp "$o" "$l"
	done
	lab_netem_clear
	base=$((base + 4 * MIB))
done
check "n1: nvme disconnect again" eval "n1 nvme disconnect -n $NQN | grep 'disconnected 1 controller'"
check "n1: kprobes off" kprobes n1 off
check "n1: nvme-rdma unloads" n1 modprobe -r nvme-rdma
check "n2: target torn down, nvmet-rdma nvmet brd unload" lab_nvmet_down n2 $NQN
for n in n1 n2; do
	check "$n: mrc0 deleted, metaroce.ko unloads" \
		$n 'rdma link del mrc0 && rmmod metaroce'
done
rm -f "$LAB_RUN/pattern"
lab_summary
