#!/bin/bash
# Consumers: NFS over RDMA (the kernel's knfsd/svcrdma and NFS client,
# Debian's nfs-kernel-server userland), over mrc0 and then over the stock
# rxe (rxe0) instead (one device at a time: rdma_cm picks it by IP), NFSv3
# and NFSv4.2, clean and under netem loss 1% on both nodes' eth0:
#
#   n2  knfsd, /proc/fs/nfsd/portlist "rdma 20049", export /tmp/export (tmpfs,
#       fsid=0: also the NFSv4 root)
#   n1  mount -o rdma,port=20049,vers=3 192.0.2.2:/tmp/export /tmp/mnt
#       mount -o rdma,port=20049,vers=4.2 192.0.2.2:/ /tmp/mnt
#       n1 writes a file, reads it back after a remount; n2 checks it on
#       its disk; n2 writes a file on its disk, n1 reads it: sha256 each way.
#
# The guests' root is read-only: nfs state (/var/lib/nfs) is a tmpfs; the
# v4 grace and lease times are 10 s (the minimum) so that a mount does not
# wait 90 s.
# lab: long
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

NFS_MB=${NFS_MB:-16}
lab_start
FIG=$LAB_RUN/figures.txt


check "n2: nfs server set up (nfsd, rpcrdma, rpcbind, mountd, export)" n2 'set -e
modprobe nfsd; modprobe rpcrdma
mount -t tmpfs nfsstate /var/lib/nfs
mkdir -p /var/lib/nfs/v4recovery /var/lib/nfs/sm /var/lib/nfs/sm.bak /var/lib/nfs/rpc_pipefs
touch /var/lib/nfs/etab /var/lib/nfs/rmtab /var/lib/nfs/xtab
mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
mkdir -p /tmp/export && mount -t tmpfs -o size=256m export /tmp/export
rpcbind
exportfs -i -o rw,no_root_squash,insecure,sync,fsid=0 192.0.2.0/24:/tmp/export
rpc.mountd
exportfs -v'
check "n1: nfs client modules" n1 'modprobe rpcrdma && modprobe nfs && modprobe nfsv3 && modprobe nfsv4 && mkdir -p /tmp/mnt'

nfsd_start() {	# knfsd with an RDMA listener on 20049
	n2 'set -e
echo 10 >/proc/fs/nfsd/nfsv4gracetime; echo 10 >/proc/fs/nfsd/nfsv4leasetime
rpc.nfsd 4
echo "rdma 20049" >/proc/fs/nfsd/portlist
cat /proc/fs/nfsd/portlist
grep -qx "rdma 20049" /proc/fs/nfsd/portlist
sleep 1	# the CM registers the listen just after rdma res shows it'
}
nfsd_stop() { n2 'rpc.nfsd 0; cat /proc/fs/nfsd/threads'; }

# nfs_round DEV NET VERS: mount, files both ways with checksums, umount
nfs_round() {
	local dev=$1 net=$2 vers=$3 opts t0 t1 rc=0 src=192.0.2.2:/tmp/export
	opts="rdma,port=20049,vers=$vers"
	[ "$vers" = 3 ] && opts="$opts,nolock"
	# v4: the export is the pseudo root (fsid=0): the guests' / is 9p,
	# which nfsd cannot export, so there is no path from / to /tmp/export
	[ "$vers" = 3 ] || src=192.0.2.2:/
	LAB_CMD_TIMEOUT=200 n1 "timeout 150 mount -t nfs -o $opts $src /tmp/mnt" || return 1
	n1 'grep " /tmp/mnt " /proc/mounts' | tee /dev/stderr | grep -q 'proto=rdma' || rc=1
	t0=$(date +%s.%N)
	LAB_CMD_TIMEOUT=400 n1 "set -e
head -c ${NFS_MB}M /dev/urandom >/tmp/nfs.src
sha256sum </tmp/nfs.src >/tmp/lab/nfs-n1.sum
timeout 300 cp /tmp/nfs.src /tmp/mnt/from-n1
timeout 120 sync /tmp/mnt/from-n1" || rc=1
	t1=$(date +%s.%N)
	# read back through a fresh mount (no page cache)
	n1 'umount /tmp/mnt' || rc=1
	LAB_CMD_TIMEOUT=200 n1 "timeout 150 mount -t nfs -o $opts $src /tmp/mnt" || return 1
	LAB_CMD_TIMEOUT=400 n1 'timeout 300 sha256sum </tmp/mnt/from-n1 | cmp - /tmp/lab/nfs-n1.sum && echo "n1 read back its file: sha256 ok"' || rc=1
	n2 'sha256sum </tmp/export/from-n1 | cmp - /tmp/lab/nfs-n1.sum && echo "n2 disk has n1s file: sha256 ok"' || rc=1
	n2 "head -c ${NFS_MB}M /dev/urandom >/tmp/export/from-n2 && sha256sum </tmp/export/from-n2 >/tmp/lab/nfs-n2.sum" || rc=1
	local t2 t3
	t2=$(date +%s.%N)
	LAB_CMD_TIMEOUT=400 n1 'timeout 300 sha256sum </tmp/mnt/from-n2 | cmp - /tmp/lab/nfs-n2.sum && echo "n1 read n2s file: sha256 ok"' || rc=1
	t3=$(date +%s.%N)
	printf '%-5s %-5s v%-4s write %s MiB %.2f s, read %s MiB %.2f s\n' "$dev" "$net" "$vers" \
		"$NFS_MB" "$(bc <<<"$t1 - $t0")" "$NFS_MB" "$(bc <<<"$t3 - $t2")" >>"$FIG"
	n1 'grep -A3 "xprt:" /proc/self/mountstats | head -2'
	n1 'umount /tmp/mnt' || rc=1
	n2 'rm -f /tmp/export/from-n1 /tmp/export/from-n2'
	return $rc
}

for dev in mrc0 rxe0; do
	check "n1: $dev added" lab_add_dev n1 $dev
	check "n2: $dev added" lab_add_dev n2 $dev
	check "n2: knfsd listening on rdma 20049 ($dev)" nfsd_start
	for net in clean loss1; do
		if [ $net = loss1 ]; then
			lab_netem n1 loss 1% >/dev/null
			lab_netem n2 loss 1% >/dev/null
		fi
		for vers in 3 4.2; do
			lab_dcheck $dev "$dev $net: NFSv$vers over RDMA, $NFS_MB MiB each way, sha256" \
				nfs_round $dev $net $vers
			# a failed round may leave the mount behind
			n1 'umount -f /tmp/mnt 2>/dev/null; true' >/dev/null
		done
		lab_netem_clear
	done
	check "n2: knfsd stopped" nfsd_stop
	check "n1: $dev removed" n1 rdma link del $dev
	check "n2: $dev removed" n2 rdma link del $dev
done
echo "# NFS over RDMA figures:"
sed 's/^/#   /' "$FIG"
lab_summary
