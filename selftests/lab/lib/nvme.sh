# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# NVMe over Fabrics on the lab, sourced by the scenarios that run the stock
# NVMe/RDMA host against the stock target (nvmeof.sh, teardown.sh) after
# scripts/lab/lab.sh: n2 exports a brd RAM disk through nvmet-rdma
# (lab_nvmet_up n2 $NVME_NQN $NVME_SRV KIB), n1 connects with nvme-rdma
# (lab_nvme_host n1, then nvme_connect n1).
# (Not a scenario: scripts/test.sh runs selftests/lab/*.sh, not lib/.)

NVME_NQN=nqn.2014-08.org.metaroce:nvmeof
NVME_SRV=192.0.2.2

# nsdev (guest): /dev/nvmeXnY of the namespace of $NVME_NQN (with native
# multipath the block device hangs off the subsystem, else the controller)
nsdev() {
	local c n
	for c in /sys/class/nvme-subsystem/* /sys/class/nvme/*; do
		grep -qx "$NVME_NQN" "$c/subsysnqn" 2>/dev/null || continue
		for n in "$c"/nvme*n*; do
			[ -b "/dev/${n##*/}" ] && echo "/dev/${n##*/}" && return 0
		done
	done
	return 1
}
# nvctrl (guest): the sysfs directory of the (first) controller of
# $NVME_NQN, /sys/class/nvme/nvmeX; status 1 if there is none
nvctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		grep -qx "$NVME_NQN" "$c/subsysnqn" 2>/dev/null && echo "$c" && return 0
	done
	return 1
}
# guest-side prologue defining nsdev and nvctrl: "$NSDEV; d=\$(nsdev)"
NSDEV="NVME_NQN=$NVME_NQN; $(declare -f nsdev nvctrl)"

# nvme_connect NODE [OPTION...]: nvme connect -t rdma to $NVME_SRV:4420
# (nvme-cli OPTIONs added), then wait 30 s for the namespace's block device
nvme_connect() {
	local node=$1
	shift
	lab_run "$node" nvme connect -t rdma -a "$NVME_SRV" -s 4420 -n "$NVME_NQN" "$@" &&
		lab_wait_for "$node" "$NSDEV; nsdev >/dev/null" 30
}
