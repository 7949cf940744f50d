#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# teardown-long: selftests/lab/teardown.sh with 20 cycles of every case,
# the NVMe-oF ones (nvupdown, nvkill, nvtarget) included.
# lab: long (see scripts/test.sh)
#
# Whole, this is about 7 h of lab on the stock kernel, longer than one
# sitting (measured: one cycle of delete, updown, netns, rmmod and kill took
# 7.9 min before the base cases also ran pipelined ib_read_bw -- about
# 30 s more per case since; one of nvupdown, nvkill and nvtarget 7.7 min,
# mostly nvme's reconnect and controller-loss waits), and 3-4x that on the
# debug kernel.
# Run it in parts, a few cases and cycles each, e.g.
#   TEARDOWN_CASES="delete updown netns rmmod kill" TEARDOWN_CYCLES=5 \
#       selftests/lab/teardown-long.sh
#   TEARDOWN_CASES="nvupdown nvkill" selftests/lab/teardown-long.sh
# (every part boots its own lab and checks the kernel log at its end).
export TEARDOWN_CYCLES=${TEARDOWN_CYCLES:-20}
export TEARDOWN_CASES=${TEARDOWN_CASES:-delete updown netns rmmod kill nvdelete nvupdown nvrmmod nvkill nvtarget}
export TEARDOWN_READ_CASES=${TEARDOWN_READ_CASES:-delete updown rmmod kill}
export LAB_NAME=${LAB_NAME:-teardown-long}
exec bash "$(dirname "$0")/teardown.sh" "$@"
