#!/bin/bash
# Consumers: iSER (kernel ULPs: LIO's ib_isert target, open-iscsi's ib_iser
# initiator; Debian's targetcli-fb and open-iscsi), over mrc0 and then over
# the stock rxe (rxe0) instead (one device at a time: rdma_cm picks it by
# IP), clean and under netem loss 1% on both nodes' eth0:
#
#   n2  LIO: fileio backstore /tmp/iser.img (64 MiB), iqn...:t1, portal
#       192.0.2.2:3260 with iser enabled
#   n1  iscsiadm discovery (TCP), node iface iser, login: /dev/sdX;
#       n1 writes 16 MiB (O_DIRECT) -> n2 checks its backing file;
#       n2's pattern in the file's second 16 MiB -> n1 reads it (O_DIRECT):
#       sha256 each way; logout.
#
# Rounds per device: clean, loss1 (netem loss 1% on both nodes) and
# localinv: clean with ib_iser always_register=N, whose initiator asks the
# target not to invalidate remotely (ISER_SEND_W_INV_NOT_SUP), so it
# invalidates each fast-registered MR itself, chaining LOCAL_INV of the
# old key and REG_MR of the key ib_update_fast_reg_key() gave it before
# posting -- the key a device must go on honouring until the REG_MR
# executes (64 KiB I/Os, enough of them to reuse every descriptor). ISER_DEVS and ISER_NETS narrow the run (defaults: "mrc0 rxe0",
# "clean loss1 localinv").
#
# The guests' root is read-only: /etc/iscsi is a tmpfs copy (the node
# database lives there), targetcli's preferences under $HOME (/tmp/home),
# and nothing is saved. targetcli-fb 2.1.53 connects to the system D-Bus
# (to ask tcmu-runner for its backstores) outside its try block, so
# without a bus every command dies with "g-io-error-quark: Could not
# connect: No such file or directory" (exit 255): n2 gets a private
# dbus-daemon on the system bus socket (no services on it).
# lab: long
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

IQN=iqn.2026-12.org.example.metaroce:t1
lab_start
FIG=$LAB_RUN/figures.txt


check "n2: LIO target with an iSER portal" n2 "set -e
modprobe target_core_mod; modprobe target_core_file; modprobe iscsi_target_mod; modprobe ib_isert
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
mkdir -p /run/dbus
dbus-daemon --config-file=/usr/share/dbus-1/session.conf --fork --nopidfile \
	--address=unix:path=/run/dbus/system_bus_socket
head -c 64M /dev/zero >/tmp/iser.img
targetcli set global auto_save_on_exit=false >/dev/null
targetcli /backstores/fileio create disk0 /tmp/iser.img 64M write_back=false
targetcli /iscsi create $IQN
targetcli /iscsi/$IQN/tpg1/luns create /backstores/fileio/disk0
targetcli /iscsi/$IQN/tpg1/portals delete 0.0.0.0 3260 || true
targetcli /iscsi/$IQN/tpg1/portals create 192.0.2.2 3260
targetcli /iscsi/$IQN/tpg1 set attribute authentication=0 demo_mode_write_protect=0 generate_node_acls=1 cache_dynamic_acls=1
targetcli ls /iscsi"
check "n1: open-iscsi initiator (iscsid, ib_iser)" n1 'set -e
modprobe ib_iser; modprobe iscsi_tcp; modprobe sd_mod
mkdir -p /tmp/etc-iscsi && cp -a /etc/iscsi/. /tmp/etc-iscsi/
mount --bind /tmp/etc-iscsi /etc/iscsi
echo "InitiatorName=iqn.2026-12.org.example.metaroce:n1" >/etc/iscsi/initiatorname.iscsi
mkdir -p /run/lock/iscsi
iscsid
sleep 1; pgrep -x iscsid'

# iser_round DEV NET: 1 MiB I/Os; localinv: 64 KiB I/Os (16 pages: fast
# registered, not the DMA key), 768 of them, so that each of the
# session's cmds_max (128) registration descriptors is used again --
# the reuse is what chains LOCAL_INV of its old key
iser_round() {
	local dev=$1 net=$2 rc=0 disk t0 t1 t2 t3 bs=1M n=16 e0 e1
	[ "$net" = localinv ] && bs=64K n=256
	e0=$(n1 "$ISER_ERRS")
	n2 "targetcli /iscsi/$IQN/tpg1/portals/192.0.2.2:3260 enable_iser boolean=true && sleep 1" || return 1
	n2 "head -c 16M /dev/urandom >/tmp/iser.pat && sha256sum </tmp/iser.pat >/tmp/lab/iser-n2.sum &&
		dd if=/tmp/iser.pat of=/tmp/iser.img bs=1M seek=16 conv=notrunc,fsync status=none" || return 1
	n1 "iscsiadm -m discovery -t st -p 192.0.2.2" || return 1
	n1 "iscsiadm -m node -T $IQN -p 192.0.2.2 -o update -n iface.transport_name -v iser" || return 1
	LAB_CMD_TIMEOUT=120 n1 "timeout 90 iscsiadm -m node -T $IQN -p 192.0.2.2 --login" || return 1
	n1 'iscsiadm -m session -P 1 | grep -E "Iface Transport|SID"'
	n1 'iscsiadm -m session -P 1 | grep -q "Iface Transport: iser"' || rc=1
	disk=$(n1 'for i in $(seq 50); do d=$(ls /sys/class/iscsi_session/session*/device/target*/*/block 2>/dev/null | head -1); [ -n "$d" ] && break; sleep 0.2; done; echo $d')
	[ -n "$disk" ] || { echo "no block device"; rc=1; }
	if [ -n "$disk" ]; then
		echo "block device: /dev/$disk"
		t0=$(date +%s.%N)
		LAB_CMD_TIMEOUT=400 n1 "set -e
head -c 16M /dev/urandom >/tmp/iser.src; sha256sum </tmp/iser.src >/tmp/lab/iser-n1.sum
timeout 300 dd if=/tmp/iser.src of=/dev/$disk bs=$bs oflag=direct conv=fsync status=none" || rc=1
		t1=$(date +%s.%N)
		n2 'head -c 16M /tmp/iser.img | sha256sum | cmp - /tmp/lab/iser-n1.sum && echo "n2 backing file has n1s data: sha256 ok"' || rc=1
		LAB_CMD_TIMEOUT=400 n1 "timeout 300 dd if=/dev/$disk of=/tmp/iser.back bs=$bs count=$n iflag=direct status=none && sha256sum </tmp/iser.back | cmp - /tmp/lab/iser-n1.sum && echo 'n1 read back its data: sha256 ok'" || rc=1
		t2=$(date +%s.%N)
		LAB_CMD_TIMEOUT=400 n1 "timeout 300 dd if=/dev/$disk of=/tmp/iser.got bs=$bs skip=$n count=$n iflag=direct status=none && sha256sum </tmp/iser.got | cmp - /tmp/lab/iser-n2.sum && echo 'n1 read n2s pattern: sha256 ok'" || rc=1
		t3=$(date +%s.%N)
		printf '%-5s %-5s write 16 MiB %.2f s, read 16 MiB %.2f s\n' "$dev" "$net" \
			"$(bc <<<"$t1 - $t0")" "$(bc <<<"$t3 - $t2")" >>"$FIG"
	fi
	# iSCSI recovers from a failed work request (the QP errors, the
	# connection is reinstated, the I/O redone): the data would still
	# match, so the errors themselves are counted
	e1=$(n1 "$ISER_ERRS")
	if [ "$e1" != "$e0" ]; then
		echo "iSER/iSCSI errors in n1's kernel log during the round:"
		n1 "dmesg | grep -E '$ISER_ERR_RE' | tail -n $((e1 - e0)) | head -n 8"
		rc=1
	fi
	LAB_CMD_TIMEOUT=120 n1 "timeout 90 iscsiadm -m node -T $IQN -p 192.0.2.2 --logout" || rc=1
	n1 "iscsiadm -m node -T $IQN -p 192.0.2.2 -o delete; rm -f /tmp/iser.src /tmp/iser.back /tmp/iser.got"
	n2 "targetcli /iscsi/$IQN/tpg1/portals/192.0.2.2:3260 enable_iser boolean=false"
	return $rc
}

# n1's kernel log lines of a failed iSER work request or a lost iSCSI
# connection (ib_iser's iser_err, libiscsi's conn errors)
ISER_ERR_RE='iser.*(failure|error|err_comp)|detected conn error|conn.*reinstat'
ISER_ERRS="dmesg | grep -cE '$ISER_ERR_RE' || true"

# iser_reg Y|N: ib_iser reloaded with always_register=Y|N (no session)
iser_reg() {
	n1 "rmmod ib_iser && modprobe ib_iser always_register=$1 &&
		grep -qx $1 /sys/module/ib_iser/parameters/always_register"
}

for dev in ${ISER_DEVS:-mrc0 rxe0}; do
	check "n1: $dev added" lab_add_dev n1 $dev
	check "n2: $dev added" lab_add_dev n2 $dev
	for net in ${ISER_NETS:-clean loss1 localinv}; do
		if [ $net = loss1 ]; then
			lab_netem n1 loss 1% >/dev/null
			lab_netem n2 loss 1% >/dev/null
		fi
		[ $net = localinv ] && check "n1: ib_iser always_register=N" iser_reg N
		lab_dcheck $dev "$dev $net: iSER login, 16 MiB each way, sha256" iser_round $dev $net
		[ $net = localinv ] && check "n1: ib_iser always_register=Y" iser_reg Y
		lab_netem_clear
	done
	check "n1: $dev removed" n1 rdma link del $dev
	check "n2: $dev removed" n2 rdma link del $dev
done
n1 'iscsiadm -m session -u >/dev/null 2>&1; pkill -x iscsid; true' >/dev/null
n2 "targetcli clearconfig confirm=True >/dev/null 2>&1; true" >/dev/null
echo "# iSER figures:"
sed 's/^/#   /' "$FIG"
lab_summary
