#!/bin/bash
# The metaroce demo, from a fresh Debian 12 machine (as root):
#
#   +-----------------------------+  qemu socket  +-----------------------------+
#   | n1  eth0 192.0.2.1          |<------------->| n2  eth0 192.0.2.2          |
#   |     mrc0 (metaroce on eth0) |               |     mrc0 (metaroce on eth0) |
#   +-----------------------------+               +-----------------------------+
#
# Installs what is needed, builds metaroce.ko and the provider, boots the two
# nodes under qemu, creates mrc0 on both, shows them with ibv_devinfo, then
# runs stock ibverbs programs between the nodes over mrc0 and prints what
# they print: ibv_rc_pingpong (payload checked) and ib_write_bw.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

scripts/setup.sh || exit 1
make -s KVER="$(cat .cache/kver)" all || { echo "build failed"; exit 1; }

# shellcheck source=scripts/lab/lab.sh
. scripts/lab/lab.sh
lab_start

check "n1: metaroce loaded, mrc0 on eth0" lab_load_metaroce n1
check "n2: metaroce loaded, mrc0 on eth0" lab_load_metaroce n2
for n in n1 n2; do
	echo "--- $n: rdma link show; ibv_devices; ibv_devinfo -d mrc0"
	$n 'rdma link show; ibv_devices; ibv_devinfo -d mrc0'
done
check "n1: ibv_devinfo shows mrc0 PORT_ACTIVE" \
	n1 'ibv_devinfo -d mrc0 | grep -q PORT_ACTIVE'
check "n2: ibv_devinfo shows mrc0 PORT_ACTIVE" \
	n2 'ibv_devinfo -d mrc0 | grep -q PORT_ACTIVE'

echo "--- ibv_rc_pingpong -d mrc0 -g 1 -n 100 -s 4096 -c (payload validated)"
lab_bg n2 pp_srv 'ibv_rc_pingpong -d mrc0 -g 1 -n 100 -s 4096 -c'
lab_wait_for n2 'ss -ltn | grep -q :18515' 60
check "n1 -> n2: ibv_rc_pingpong over mrc0" \
	n1 'ibv_rc_pingpong -d mrc0 -g 1 -n 100 -s 4096 -c 192.0.2.2 >$LAB_OUT/pp.txt 2>&1'
n1 'cat $LAB_OUT/pp.txt'
check "n2: ibv_rc_pingpong server finished" lab_wait pp_srv

echo "--- ib_write_bw -d mrc0 -x 1 -s 65536 -n 200"
lab_bg n2 bw_srv 'ib_write_bw -d mrc0 -x 1 -s 65536 -n 200'
lab_wait_for n2 'ss -ltn | grep -q :18515' 60
check "n1 -> n2: ib_write_bw over mrc0" \
	n1 'ib_write_bw -d mrc0 -x 1 -s 65536 -n 200 192.0.2.2 >$LAB_OUT/bw.txt 2>&1'
n1 'cat $LAB_OUT/bw.txt'
check "n2: ib_write_bw server finished" lab_wait bw_srv

lab_summary
