#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# short: short scenarios in one lab, one boot instead of one each:
# objects, conformance, verbs, uc, observe, wire, kverbs, localq, vlan and
# route-cache (last: it leaves dummy0 behind). One by one the seven before kverbs
# took 506 s in a lab layer, here 398 s on the same host: a reset between
# parts costs ~5 s against ~25 s of boot and log collection. Each still
# runs alone as `bash selftests/lab/NAME.sh`; the lab layer runs them here
# only (their "# lab: part of short.sh" line). Between parts every node is
# reset and checked (lab_parts, scripts/lab/lab.sh); checks read
# "[part] ...", and the kernel logs are checked once, at the end.
#
#   n1: mrc0 on eth0 192.0.2.1  <---- eth0 ---->  n2: mrc0 on eth0 192.0.2.2
#
# SHORT_PARTS overrides the list. LAB_MODULE may point at another
# metaroce.ko.
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

# shellcheck disable=SC2086
lab_parts ${SHORT_PARTS:-objects conformance verbs uc observe wire kverbs localq vlan route-cache}
