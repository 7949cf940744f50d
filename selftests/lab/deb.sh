#!/bin/bash
# The Debian packages (`make deb`: metaroce-dkms + ibverbs-provider-metaroce)
# installed, used and purged in a clean root:
#
#   host: overlay root (tmpfs upper over /), apt install ./both.debs:
#         DKMS builds metaroce.ko for every kernel with headers
#         (6.1 and, if scripts/setup.sh --kernel 6.12 ran, 6.12); purge.
#
#   n1 (packages, in an overlay chroot)        n2 (the tree's module/provider)
#     apt install ./metaroce-dkms_*.deb          insmod metaroce.ko
#       ./ibverbs-provider-metaroce_*.deb        rdma link add mrc0
#     DKMS builds for the guest's kernel
#     modprobe metaroce, rdma link add mrc0
#     ibv_rc_pingpong -c (packaged provider) <-> ibv_rc_pingpong -c
#     apt purge: nothing left (dpkg -L files, updates/dkms,
#     /var/lib/dkms, /usr/src, /etc/libibverbs.d, the overlay upper dir)
#
# The guest root is the host's / over 9p, read-only: the clean root is an
# overlay over it (and over the kernel's lib/modules) with tmpfs uppers,
# chrooted into. LAB_KVER=$(cat .cache/kver-6.12) runs the guest part on
# 6.12. DEB_HOST=0 skips the host part. The DKMS build under TCG emulation
# takes about five minutes (the whole scenario ~8): CI runs
# selftests/lab/deb-smoke.sh instead (DEB_SMOKE=1: the host part, and on n1
# only the provider package, with the tree's module, installed and used; its
# purge is checked on the host).
# lab: long

# Guest/host helper: deb.sh --root DIR mk|umount|leftovers
if [ "${1:-}" = --root ]; then
	R=$2 O=$2.ov
	case $3 in
	mk)	# overlay root at R over / (+ lib/modules), chroot-ready
		set -e
		mkdir -p "$O" "$R"
		mount -t tmpfs droot "$O"
		mkdir -p "$O"/u "$O"/w "$O"/mu "$O"/mw
		mount -t overlay droot -o "lowerdir=/,upperdir=$O/u,workdir=$O/w" "$R"
		# the guest's lib/modules is its own mount (the kernel's tree)
		if mountpoint -q /usr/lib/modules; then
			mount -t overlay dmods \
				-o "lowerdir=/usr/lib/modules,upperdir=$O/mu,workdir=$O/mw" \
				"$R/usr/lib/modules"
		fi
		# what linux-headers-KVER provides on a real node
		for k in "$R"/usr/lib/modules/*; do
			k=${k##*/}
			[ -e "$R/usr/lib/modules/$k/build" ] ||
				[ ! -d "/usr/src/linux-headers-$k" ] ||
				ln -s "/usr/src/linux-headers-$k" "$R/usr/lib/modules/$k/build"
		done
		mount -t proc proc "$R/proc"
		mount --rbind /sys "$R/sys"
		mount --rbind /dev "$R/dev"
		# what udev adds on a real node (dkms uses <(...))
		for l in fd:/proc/self/fd stdin:/proc/self/fd/0 \
			stdout:/proc/self/fd/1 stderr:/proc/self/fd/2; do
			[ -e "$R/dev/${l%%:*}" ] || ln -s "${l#*:}" "$R/dev/${l%%:*}"
		done
		mount -t tmpfs tmpfs "$R/run"
		mount -t tmpfs tmpfs "$R/tmp"
		;;
	umount)
		umount -R "$R" && umount "$O" && rmdir "$R" "$O"
		;;
	leftovers)	# anything of ours in the root: prints it, rc 1
		left=$( (
			find "$O/u" "$O/mu" -iname '*metaroce*'
			ls -d "$R"/usr/lib/modules/*/updates/dkms/* "$R"/var/lib/dkms/metaroce \
				"$R"/usr/src/metaroce-* "$R"/etc/libibverbs.d/metaroce.driver \
				"$R"/usr/lib/*/libibverbs/libmetaroce* 2>/dev/null
			grep -ls 'metaroce' "$R"/var/lib/dpkg/status "$R"/var/lib/dpkg/info/* 2>/dev/null
		) | sort -u)
		[ -z "$left" ] || { echo "left behind:"; echo "$left"; exit 1; }
		echo "nothing left"
		;;
	*) echo "deb.sh --root DIR mk|umount|leftovers" >&2; exit 2 ;;
	esac
	exit 0
fi

# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

SELF=selftests/lab/deb.sh
DEBDIR=$LAB_ROOT/build/deb
PKGS="metaroce-dkms ibverbs-provider-metaroce"

# Build the packages first (host side; incremental provider build).
if [ "${DEB_BUILD:-1}" = 1 ]; then
	bash "$LAB_ROOT/scripts/deb.sh" >"$LAB_ROOT/build/deb-build.log" 2>&1 ||
		{ tail -30 "$LAB_ROOT/build/deb-build.log"; echo "make deb failed"; echo "0 passed, 1 failed"; exit 1; }
fi
DEB_DKMS=$(ls "$DEBDIR"/metaroce-dkms_*_all.deb)
DEB_PROV=$(ls "$DEBDIR"/ibverbs-provider-metaroce_*_amd64.deb)
VER=$(dpkg-deb -f "$DEB_DKMS" Version)

lab_start

# in_root NODE|host CMD: CMD (shell code) chrooted in the node's clean root,
# with the packaged provider only (no RDMAV_DRIVERS) and apt's noise off.
ROOTDIR=/tmp/droot
in_root() {
	local where=$1 code="cd $LAB_ROOT/build/deb && $2"
	local wrap="chroot $ROOTDIR env -u RDMAV_DRIVERS DEBIAN_FRONTEND=noninteractive bash -c $(printf %q "$code")"
	if [ "$where" = host ]; then
		unshare_run "$wrap"
	else
		lab_run "$where" "$wrap"
	fi
}

# ---- host: DKMS builds for every installed kernel ----
# The host root is writable: the overlay lives in a private mount namespace
# kept open by a background shell (HOSTNS) so that every step sees it.
HKVERS=$(cd /usr/lib/modules && for k in *; do
	[ -e "/usr/src/linux-headers-$k" ] && echo "$k"; done)
host_part() {
	local k
	ROOTDIR=$LAB_RUN/host-root
	unshare -m --propagation private sleep 3600 &
	HOSTNS=$!
	sleep 0.5
	unshare_run() { nsenter -t "$HOSTNS" -m bash -c "$1"; }
	check "host: clean root mounted (overlay over /)" \
		unshare_run "bash $LAB_ROOT/$SELF --root $ROOTDIR mk"
	check "host: clean root has none of our files" \
		unshare_run "bash $LAB_ROOT/$SELF --root $ROOTDIR leftovers"
	check "host: apt install ./metaroce-dkms ./ibverbs-provider-metaroce ($VER)" \
		in_root host "apt-get install -y --no-install-recommends ./${DEB_DKMS##*/} ./${DEB_PROV##*/}"
	for k in $HKVERS; do
		check "host: DKMS built and installed metaroce.ko for $k" \
			in_root host "dkms status metaroce/$VER -k $k | grep -q ': installed' &&
				modinfo -F vermagic /usr/lib/modules/$k/updates/dkms/metaroce.ko* | grep -q '^$k '"
	done
	check "host: kernels built for: $(echo $HKVERS)" test "$(echo "$HKVERS" | wc -w)" -ge 1
	check "host: provider installed where libibverbs looks" \
		in_root host 'test -f /usr/lib/x86_64-linux-gnu/libibverbs/libmetaroce-rdmav34.so &&
			grep -qx "driver metaroce" /etc/libibverbs.d/metaroce.driver'
	check "host: apt purge" \
		in_root host "dpkg -L $PKGS >/tmp/files && cp /tmp/files /var/tmp/deb-files &&
			apt-get purge -y $PKGS"
	check "host: nothing left after purge" \
		in_root host 'for f in $(cat /var/tmp/deb-files); do
				[ -f "$f" ] || [ -L "$f" ] && echo "left: $f"; done | grep . && exit 1
			rm -f /var/tmp/deb-files; dpkg -s metaroce-dkms 2>/dev/null | grep -q "^Status: install" && exit 1; true'
	check "host: overlay upper holds nothing of ours" \
		unshare_run "bash $LAB_ROOT/$SELF --root $ROOTDIR leftovers"
	unshare_run "bash $LAB_ROOT/$SELF --root $ROOTDIR umount" >/dev/null 2>&1
	kill "$HOSTNS" 2>/dev/null
	wait "$HOSTNS" 2>/dev/null
	ROOTDIR=/tmp/droot
}
[ "${DEB_HOST:-1}" = 1 ] && host_part

# ---- n1: install, DKMS build for the guest kernel, use, purge ----
if [ "${DEB_SMOKE:-0}" = 1 ]; then
	PKGS=ibverbs-provider-metaroce
	INSTALL="./${DEB_PROV##*/}"
else
	INSTALL="./${DEB_DKMS##*/} ./${DEB_PROV##*/}"
fi
check "n1: clean root mounted (overlay over / and lib/modules)" \
	n1 "bash $LAB_ROOT/$SELF --root $ROOTDIR mk"
# The smoke skips the guest's scans before install and after purge (~2.5
# min under TCG): the host part above checks the same packages' purge.
[ "${DEB_SMOKE:-0}" = 1 ] ||
	check "n1: clean root has none of our files" \
		n1 "bash $LAB_ROOT/$SELF --root $ROOTDIR leftovers"
t0=$SECONDS
check "n1: apt install $INSTALL${DEB_SMOKE:+ (smoke: no DKMS)}" \
	eval 'LAB_CMD_TIMEOUT=2400 in_root n1 "apt-get install -y --no-install-recommends $INSTALL"'
lab_log "n1: install took $((SECONDS - t0)) s"
echo "# n1: install took $((SECONDS - t0)) s"
if [ "${DEB_SMOKE:-0}" = 1 ]; then
	check "n1: the tree's metaroce.ko, mrc0" lab_load_metaroce n1
	check "n1: packaged provider sees mrc0" \
		in_root n1 'ibv_devinfo -d mrc0 | grep -q PORT_ACTIVE'
else
	check "n1: dkms status: installed for $LAB_KVER" \
		in_root n1 "dkms status metaroce/$VER -k $LAB_KVER | grep ': installed'"
	check "n1: modprobe metaroce loads DKMS's module (updates/dkms)" \
		in_root n1 'modinfo -n metaroce | grep -q /updates/dkms/ && modprobe metaroce &&
			test "$(cat /sys/module/metaroce/srcversion)" = "$(modinfo -F srcversion metaroce)"'
	check "n1: rdma link add mrc0 type metaroce netdev eth0" \
		in_root n1 'rdma link add mrc0 type metaroce netdev eth0 && ibv_devinfo -d mrc0 | grep -q PORT_ACTIVE'
fi
check "n2: the tree's metaroce.ko, mrc0" lab_load_metaroce n2

pingpong_pkg() {	# SIZE ITERS: server n2 (tree), client n1 (packages)
	local rc
	lab_bg n2 pp timeout 120 ibv_rc_pingpong -d mrc0 -g 1 -n "$2" -s "$1" -c
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || return 1
	in_root n1 "timeout 100 ibv_rc_pingpong -d mrc0 -g 1 -n $2 -s $1 -c 192.0.2.2"
	rc=$?
	[ $rc -eq 0 ] || n2 'pkill -x ibv_rc_pingpong; true' >/dev/null
	lab_wait pp || return 1
	return $rc
}
check "n1 (packaged provider) <-> n2: ibv_rc_pingpong 4096 B x 200, payload checked" \
	pingpong_pkg 4096 200
check "n1: the packaged provider served it (not the tree's)" \
	in_root n1 'LD_DEBUG=libs ibv_devinfo -d mrc0 2>&1 | grep -q "calling init: /usr/lib/x86_64-linux-gnu/libibverbs/libmetaroce-rdmav34.so"'
check "n1: rdma link del, rmmod" \
	in_root n1 'rdma link del mrc0 && rmmod metaroce'
if [ "${DEB_SMOKE:-0}" != 1 ]; then
check "n1: apt purge" \
	in_root n1 "dpkg -L $PKGS >/var/tmp/deb-files && apt-get purge -y $PKGS"
check "n1: no file of the packages left, not installed" \
	in_root n1 'for f in $(cat /var/tmp/deb-files); do
			[ -f "$f" ] || [ -L "$f" ] && echo "left: $f"; done | grep . && exit 1
		rm -f /var/tmp/deb-files
		dpkg -s metaroce-dkms 2>/dev/null | grep -q "^Status: install" && exit 1
		modinfo metaroce 2>/dev/null && exit 1; true'
check "n1: nothing of ours in the root (updates/dkms, /var/lib/dkms, /usr/src, libibverbs.d, upper)" \
	n1 "bash $LAB_ROOT/$SELF --root $ROOTDIR leftovers"
fi
check "n1: clean root unmounted" \
	n1 "bash $LAB_ROOT/$SELF --root $ROOTDIR umount"
lab_summary
