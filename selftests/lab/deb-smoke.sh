#!/bin/bash
# CI smoke of selftests/lab/deb.sh (lab-long, ~8 min: DKMS under TCG): the
# packages from `make deb` installed into an overlay root on the host (DKMS
# builds metaroce.ko for every kernel with headers: 6.1, 6.12 if fetched)
# and purged, nothing left; on n1 the provider package alone in an overlay
# chroot, ibv_rc_pingpong -c through it (the tree's module).
LAB_NAME=${LAB_NAME:-deb-smoke} DEB_SMOKE=1 exec bash "$(dirname "$0")/deb.sh" "$@"
