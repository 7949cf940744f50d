#!/bin/bash
# Check that build/provider/libmetaroce-rdmav34.so loads through the
# distribution's libibverbs' own driver loading path, on a host with no
# RDMA device.
#
# libibverbs only dlopen()s providers once it has found a device no loaded
# provider claims. So this fakes one: a private mount namespace with a
# tmpfs /dev holding /dev/infiniband/uverbs0, a fake sysfs (SYSFS_PATH), and
# an LD_PRELOAD shim that makes the RDMA netlink socket fail so libibverbs
# falls back to sysfs enumeration. The fake device has no driver_id, so no
# provider binds to it; what is checked is that libibverbs loaded our .so
# without the "couldn't load driver" warning it prints for a bad one (the
# same run with a bogus path must print it, or the test is broken).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PROV=$ROOT/build/provider/libmetaroce
[ -f "$PROV-rdmav34.so" ] || { echo "build the provider first" >&2; exit 1; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat >"$TMP/nonl.c" <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/netlink.h>

int socket(int domain, int type, int protocol)
{
	if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return syscall(SYS_socket, domain, type, protocol);
}
C
cc -shared -fPIC -o "$TMP/nonl.so" "$TMP/nonl.c"

sys=$TMP/sys
mkdir -p "$sys/class/infiniband_verbs/uverbs0" "$sys/class/infiniband/metaroce0"
echo 6 >"$sys/class/infiniband_verbs/abi_version"
echo metaroce0 >"$sys/class/infiniband_verbs/uverbs0/ibdev"
echo 231:192 >"$sys/class/infiniband_verbs/uverbs0/dev"
echo 1 >"$sys/class/infiniband_verbs/uverbs0/abi_version"
echo "1: CA" >"$sys/class/infiniband/metaroce0/node_type"

run() {
	unshare -m --propagation private sh -c '
		mount -t tmpfs none /dev &&
		mkdir /dev/infiniband && touch /dev/infiniband/uverbs0 &&
		LD_PRELOAD=$0/nonl.so SYSFS_PATH=$0/sys IBV_SHOW_WARNINGS=1 \
			RDMAV_DRIVERS=$1 LD_DEBUG=files ibv_devices' "$TMP" "$1" 2>&1
}

fail=0
out=$(run "$PROV")
if grep -q "couldn't load driver" <<<"$out"; then
	echo "FAIL: provider did not load:"; echo "$out" | grep "couldn't load"
	fail=1
elif ! grep -q "calling init: $PROV-rdmav34.so" <<<"$out"; then
	echo "FAIL: libibverbs never dlopen()ed the provider"; fail=1
else
	echo "ok: libibverbs loaded $PROV-rdmav34.so"
fi

out=$(run "$ROOT/build/provider/libbogus")
if grep -q "couldn't load driver" <<<"$out"; then
	echo "ok: a bogus provider path is reported"
else
	echo "FAIL: the harness does not see load errors"; fail=1
fi
exit $fail
