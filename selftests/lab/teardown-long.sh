#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# teardown-long: selftests/lab/teardown.sh with 20 cycles of every case,
# the NVMe-oF ones (nvupdown, nvkill, nvtarget) included.
# lab: long (see scripts/test.sh)
export TEARDOWN_CYCLES=${TEARDOWN_CYCLES:-20}
export TEARDOWN_CASES=${TEARDOWN_CASES:-delete updown netns rmmod kill nvdelete nvupdown nvrmmod nvkill nvtarget}
export LAB_NAME=${LAB_NAME:-teardown-long}
exec bash "$(dirname "$0")/teardown.sh" "$@"
