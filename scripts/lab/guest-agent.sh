#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# metaroce lab guest agent: runs as PID 1 after the initramfs switch_roots
# into the host root (read-only 9p). Configures the node from /proc/cmdline
# (mrc.node=n1|n2, mrc.root=REPO), then serves the mailbox: the host's run
# directory is shared over 9p (tag "lab") and mounted on /tmp/lab; commands
# for this node appear as /tmp/lab/NODE/cmd-NNNN.sh and are run in order.
#
# Mailbox protocol (see scripts/lab/lab.sh for the host side):
#   cmd-NNNN.sh  first line "# lab timeout=SECS mode=fg|bg", then bash code.
#   cmd-NNNN.out stdout+stderr of the command (written while it runs)
#   cmd-NNNN.rc  its exit code, renamed into place when it is final
#   ready        written once the node is configured
# fg commands run one at a time in order; bg commands are started and the
# agent moves on to the next file at once.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
node=n1
MRC_ROOT=/work/main
for a in $(</proc/cmdline); do
	case $a in
	mrc.node=*) node=${a#mrc.node=} ;;
	mrc.root=*) MRC_ROOT=${a#mrc.root=} ;;
	esac
done
case $node in
n1) idx=1 ;;
n2) idx=2 ;;
*) idx=${node#n} ;;
esac

console() { echo "lab-agent[$node]: $*" >/dev/console; }
halt_now() {
	console "$*"
	sync
	echo o >/proc/sysrq-trigger
	sleep 30
}

mkdir -p /tmp/lab
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 lab /tmp/lab ||
	halt_now "cannot mount the lab share"
MBOX=/tmp/lab/$node
mkdir -p "$MBOX"
exec >>"$MBOX/agent.log" 2>&1 </dev/null
log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }
log "agent up: node=$node root=$MRC_ROOT kernel=$(uname -r)"

mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts 2>/dev/null
mount -t tmpfs tmpfs /dev/shm 2>/dev/null
mkdir -p /run/netns /tmp/home
hostname "$node"
# Loud kernel messages go to the serial console log as well.
echo 7 >/proc/sys/kernel/printk

modprobe virtio_net || halt_now "modprobe virtio_net failed"
for _ in $(seq 50); do
	[ -e /sys/class/net/eth0 ] && break
	sleep 0.1
done
[ -e /sys/class/net/eth0 ] || halt_now "no eth0"
# Keep the static IPv6 address (and so its GID) across eth0 down/up.
sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1 net.ipv6.conf.eth0.keep_addr_on_down=1
ip link set lo up
ip link set eth0 up
ip addr add "192.0.2.$idx/24" dev eth0
ip -6 addr add "fd00:6d72::$idx/64" dev eth0 nodad
log "eth0: $(ip -br addr show dev eth0)"

# Environment of every command.
export MRC_ROOT MRC_NODE=$node LAB_DIR=/tmp/lab LAB_OUT=$MBOX HOME=/tmp/home
export PATH=$MRC_ROOT/scripts:$PATH
export RDMAV_DRIVERS=$MRC_ROOT/build/provider/libmetaroce

run_cmd() {	# FILE: run it, write .out and .rc
	local f=$1 b=${1%.sh} hdr t mode rc
	read -r hdr <"$f"
	t=600
	mode='fg'
	for w in $hdr; do
		case $w in
		timeout=*) t=${w#timeout=} ;;
		mode=*) mode=${w#mode=} ;;
		esac
	done
	(
		cd /tmp || exit 1
		timeout -k 5 "$t" bash "$f" >"$b.out" 2>&1 </dev/null
		rc=$?
		echo $rc >"$b.rc.tmp"
		mv "$b.rc.tmp" "$b.rc"
		log "done ${f##*/} rc=$rc"
	) &
	log "start ${f##*/} mode=$mode timeout=$t"
	[ "$mode" = bg ] || wait $!
}

echo "$(uname -r) $(cut -d' ' -f1 /proc/uptime)" >"$MBOX/ready.tmp"
mv "$MBOX/ready.tmp" "$MBOX/ready"
console "ready"
log "ready"

# A sleep that needs no fork: read with a timeout from a silent fifo.
mkfifo /run/lab-idle
exec 9<>/run/lab-idle
seq=1
while :; do
	printf -v f '%s/cmd-%04d.sh' "$MBOX" $seq
	if [ -e "$f" ]; then
		run_cmd "$f"
		seq=$((seq + 1))
		continue
	fi
	read -r -t 0.05 -u 9 _
done
