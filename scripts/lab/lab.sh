# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# metaroce two-node qemu lab: host-side library, sourced by the scenarios in
# selftests/lab/. See scripts/lab/README for the API.
#
#   n1 192.0.2.1/24 fd00:6d72::1/64     n2 192.0.2.2/24 fd00:6d72::2/64
#   +---------------------+  qemu stream netdev  +---------------------+
#   | qemu TCG, eth0      |<-- unix socket ------>| qemu TCG, eth0      |
#   | virtio-net ..:01    |                       | virtio-net ..:02    |
#   +---------------------+                       +---------------------+
#   Both run Debian's stock kernel (.cache/kernel-$(cat .cache/kver)) with
#   the host's / as read-only root (9p) and the run directory
#   build/lab/run-*/ mounted writable on /tmp/lab (the mailbox).

# A scenario run as a part of another (lab_parts) sources this library
# again: keep the lab that is running.
[ -z "${_LAB_SH_LOADED:-}" ] || return 0
_LAB_SH_LOADED=1

LAB_ROOT=${LAB_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
LAB_KVER=${LAB_KVER:-$(cat "$LAB_ROOT/.cache/kver" 2>/dev/null)}
LAB_KDIR=${LAB_KDIR:-$LAB_ROOT/.cache/kernel-$LAB_KVER}
# The debug kernel boots with 4-level paging (-cpu max offers LA57): 6.1
# answers pgtable_l5_enabled() from boot_cpu_data until alternatives are
# patched, identify_cpu() clears those bits for a moment, and KASAN then
# takes any 5-level direct-map address for a wild one -- an interrupt in
# that window reported "KASAN: wild-memory-access in do_raw_spin_lock"
# (handle_edge_irq, 0.01 s into boot) and failed a run.
case $LAB_KVER in
*-debug) LAB_KARGS=${LAB_KARGS:-no5lvl} ;;
*) LAB_KARGS=${LAB_KARGS:-} ;;
esac
# nvme_core's options for the NVMe/RDMA host (lab_nvme_host). On the debug
# kernel, no native multipath: Debian 6.1's nvme_core (like mainline)
# flushes head->partition_scan_work, whose work takes the head disk's
# open_mutex, from nvme_mpath_remove_disk(), which the head's last put runs
# -- and that put comes from nvme_ns_head_release() under the same
# open_mutex when a process (nvme-cli's disconnect) still has the disk open
# as the controller goes: lockdep reported "possible circular locking
# dependency" (open_mutex -> partition_scan_work) at `nvme disconnect` in
# peer.sh, no metaroce frame. Without multipath there is no head disk and
# no such flush; metaroce's part (the RDMA QPs of nvme-rdma) is unchanged.
case $LAB_KVER in
*-debug) LAB_NVME_CORE_OPTS=${LAB_NVME_CORE_OPTS-multipath=N} ;;
*) LAB_NVME_CORE_OPTS=${LAB_NVME_CORE_OPTS-} ;;
esac
LAB_NAME=${LAB_NAME:-$(basename "$0" .sh)}
LAB_BOOT_TIMEOUT=${LAB_BOOT_TIMEOUT:-180}	# seconds until both nodes are ready
LAB_BOOT_TRIES=${LAB_BOOT_TRIES:-2}	# boots retried on timeout (CPU contention)
LAB_CMD_TIMEOUT=${LAB_CMD_TIMEOUT:-300}	# default per-command limit
LAB_MEM=${LAB_MEM:-1G}
LAB_SMP=${LAB_SMP:-1}	# vCPUs per node
LAB_MODULE=${LAB_MODULE:-$LAB_ROOT/metaroce.ko}
LAB_NODES=(n1 n2)
# The link between the nodes: "stream" (default) is a unix stream socket
# between the two qemus; "tcp" is the older qemu socket netdev over
# 127.0.0.1, whose Nagle + delayed ACK hold small frames up to ~40 ms.
LAB_LINK=${LAB_LINK:-stream}
# Kernel log lines that fail a run. The debug kernel (scripts/debug-kernel.sh)
# adds lockdep, KASAN, DEBUG_OBJECTS and kmemleak reports (its kmemleak
# announces itself at boot: only leak reports count).
LAB_DMESG_BAD='WARNING:|BUG:|Oops|refcount_t|UBSAN|KASAN|general protection|Call Trace|Kernel panic'
LAB_DMESG_BAD+='|possible circular locking|possible recursive locking|inconsistent lock state'
LAB_DMESG_BAD+='|suspicious RCU usage|sleeping function called from invalid context|ODEBUG:'
LAB_DMESG_BAD+='|unreferenced object|suspected memory leak|list_(add|del) corruption'
LAB_DMESG_BAD+='|blocked for more than|soft lockup|hard LOCKUP|detected stall'
LAB_DMESG_BAD+='|kmemleak: no scan'
# A node's virtio-net transmit queue that stopped for good (the guest's
# watchdog: "NETDEV WATCHDOG: ... transmit queue 0 timed out", "TX timeout
# on queue"): qemu 7.2's stream netdev stopped taking the guest's frames
# (stop 37: ib_write_bw -s 64 in an ab.sh sitting on a loaded host; eth0's
# qdisc held 287 packets, ping failed, every later run too). Not the
# transport's fault, but the run is void: named here so that the report
# says why everything after it failed.
LAB_DMESG_BAD+='|NETDEV WATCHDOG|TX timeout on queue'
# What lab_stop runs on each node for the log it checks: where kmemleak is
# on (the debug kernel), a scan first, and its report after the dmesg. On
# the debug kernel a scan that cannot run (kmemleak absent, or disabled
# itself at boot) prints "kmemleak: no scan" and so fails the run: a leak
# check that did not happen must not pass.
case $LAB_KVER in
*-debug) LAB_DMESG_CMD='k=/sys/kernel/debug/kmemleak
{ echo scan >$k && echo scan >$k; } 2>/dev/null || echo "kmemleak: no scan ($k)"
dmesg && { [ ! -r $k ] || cat $k; }' ;;
*) LAB_DMESG_CMD='k=/sys/kernel/debug/kmemleak
[ -w $k ] && echo scan >$k && echo scan >$k
dmesg && { [ ! -r $k ] || cat $k; }' ;;
esac
# On the debug kernel, lab_start checks that each booted guest really
# has the debug features its "kernel log clean" relies on -- a mis-built
# or wrong kernel must not pass as clean -- and aborts the scenario if
# not: KASAN (its boot banner), PROVE_LOCKING (/proc/lockdep_chains) with
# lockdep still on (debug_locks 1), kmemleak (its debugfs file and its
# "initialized" boot line), failslab and DEBUG_OBJECTS (their debugfs
# directories). LAB_DEBUG_EXPECT=1 forces the check on another kernel
# (which then fails it), 0 skips it. LAB_DEBUG_PROBE is the guest command;
# with MRC_PROBE_ROOT=DIR it looks at DIR/dmesg, DIR/proc/... and
# DIR/sys/... instead (scripts/test.sh debug_checker tests it that way).
case $LAB_KVER in
*-debug) LAB_DEBUG_EXPECT=${LAB_DEBUG_EXPECT:-1} ;;
*) LAB_DEBUG_EXPECT=${LAB_DEBUG_EXPECT:-0} ;;
esac
# LAB_SCALE: the factor by which a scenario's time limits grow on the
# debug kernel (4; 1 on the stock kernel, whose limits never loosen). Each
# scenario takes it through its own variable (TD_SCALE, CQ_SCALE,
# PEER_SCALE, ORDER_SCALE), which overrides it for that scenario alone.
case $LAB_KVER in
*-debug) LAB_SCALE=${LAB_SCALE:-4} ;;
*) LAB_SCALE=${LAB_SCALE:-1} ;;
esac
LAB_DEBUG_PROBE='r=${MRC_PROBE_ROOT:-}
if [ -n "$r" ]; then d=$(cat "$r/dmesg"); else d=$(dmesg); fi
m=
printf "%s\n" "$d" | grep -q "KernelAddressSanitizer initialized" || m="$m KASAN"
[ -e "$r/proc/lockdep_chains" ] || m="$m PROVE_LOCKING"
grep -Eq "^ *debug_locks: *1\$" "$r/proc/lockdep_stats" 2>/dev/null || m="$m lockdep-on(debug_locks)"
{ [ -e "$r/sys/kernel/debug/kmemleak" ] &&
	printf "%s\n" "$d" | grep -q "kmemleak: Kernel memory leak detector initialized"; } || m="$m KMEMLEAK"
[ -d "$r/sys/kernel/debug/failslab" ] || m="$m FAILSLAB"
[ -d "$r/sys/kernel/debug/debug_objects" ] || m="$m DEBUG_OBJECTS"
if [ -n "$m" ]; then
	echo "NOT a debug kernel ($(uname -r)): missing$m"
	exit 1
fi
echo "debug kernel $(uname -r): KASAN, PROVE_LOCKING (debug_locks 1), KMEMLEAK, FAILSLAB, DEBUG_OBJECTS"'
LAB_RUN=
LAB_SOCK=
LAB_STARTED=
LAB_STOPPED=
LAB_SUMMARY_DONE=
LAB_BOOT_SECS=
LAB_T0=$SECONDS

lab_log() {	# MSG...: append to the run's lab.log
	[ -n "$LAB_RUN" ] || return 0
	printf '%s %s\n' "$(date +%T.%N | cut -c1-12)" "$*" >>"$LAB_RUN/lab.log"
}

lab_fatal() {	# MSG...: abort the scenario (the exit trap stops the lab)
	echo "lab: FATAL: $*" >&2
	lab_log "FATAL: $*"
	exit 1
}

_lab_alive() {	# NODE
	local pid
	pid=$(cat "$LAB_RUN/$1/qemu.pid" 2>/dev/null) || return 1
	kill -0 "$pid" 2>/dev/null
}

_lab_console_tail() {	# NODE [LINES]
	echo "---- last ${2:-40} lines of $LAB_RUN/$1.console ----"
	tail -n "${2:-40}" "$LAB_RUN/$1.console" 2>/dev/null | _lab_clean
	if [ -s "$LAB_RUN/$1.qemu.log" ]; then
		echo "---- $LAB_RUN/$1.qemu.log ----"
		tail -n 20 "$LAB_RUN/$1.qemu.log"
	fi
	echo "----"
}

_lab_clean() {	# console log -> plain text
	sed -e 's/\r$//' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g'
}

_lab_port_free() {
	[ -z "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
}

_lab_qemu() {	# NODE IDX NETDEV-OPTS
	local node=$1 idx=$2 net=$3
	mkdir -p "$LAB_RUN/$node"
	: >"$LAB_RUN/$node.console"
	qemu-system-x86_64 -name "mrc-$LAB_NAME-$node,debug-threads=on" \
		-accel tcg -cpu max -smp "$LAB_SMP" -m "$LAB_MEM" \
		-nographic -nodefaults -no-user-config -no-reboot \
		-serial "file:$LAB_RUN/$node.console" -monitor none \
		-kernel "$LAB_KDIR/boot/vmlinuz-$LAB_KVER" -initrd "$LAB_INITRD" \
		-append "console=ttyS0 loglevel=5 edd=off panic=-1 no_timer_check $LAB_KARGS mrc.node=$node mrc.root=$LAB_ROOT" \
		-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
		-fsdev "local,id=modules,path=$LAB_KDIR/lib/modules,security_model=none,readonly=on,multidevs=remap" \
		-device virtio-9p-pci,fsdev=modules,mount_tag=modules \
		-fsdev "local,id=lab,path=$LAB_RUN,security_model=none,multidevs=remap" \
		-device virtio-9p-pci,fsdev=lab,mount_tag=lab \
		-fsdev "local,id=repo,path=$LAB_ROOT,security_model=none,readonly=on,multidevs=remap" \
		-device virtio-9p-pci,fsdev=repo,mount_tag=repo \
		-netdev "$net,id=n0" \
		-device "virtio-net-pci,netdev=n0,mac=52:54:00:6d:72:0$idx,romfile=" \
		</dev/null >"$LAB_RUN/$node.qemu.log" 2>&1 &
	echo $! >"$LAB_RUN/$node/qemu.pid"
	lab_log "$node: qemu pid $! ($net)"
}

_lab_kill_all() {	# kill every qemu of this lab, wait for it
	local node pid
	for node in "${LAB_NODES[@]}"; do
		pid=$(cat "$LAB_RUN/$node/qemu.pid" 2>/dev/null) || continue
		kill "$pid" 2>/dev/null
		sleep 0.5
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	[ -n "$LAB_SOCK" ] && rm -f "$LAB_SOCK"
}

# _lab_boot: start both qemus, wait for both agents; sets LAB_BOOT_SECS.
# Returns 1 (with LAB_BOOT_ERR) on a timeout or qemu exit.
_lab_boot() {
	local port tries node t0 ok s0=$SECONDS sock
	LAB_BOOT_ERR=
	t0=$(date +%s.%N)
	for tries in 1 2 3 4 5; do
		case $LAB_LINK in
		stream)
			# a unix stream socket: reliable, ordered, no Nagle
			sock=$(mktemp -u /tmp/mrc-lab-XXXXXX.sock)
			port=$sock
			LAB_SOCK=$sock
			_lab_qemu n1 1 "stream,server=on,addr.type=unix,addr.path=$sock"
			;;
		tcp)
			port=$((20000 + RANDOM % 40000))
			_lab_port_free "$port" || continue
			_lab_qemu n1 1 "socket,listen=127.0.0.1:$port"
			;;
		*)
			LAB_BOOT_ERR="LAB_LINK=$LAB_LINK: use stream or tcp"
			return 1
			;;
		esac
		ok=
		for _ in $(seq 200); do
			if [ "$LAB_LINK" = stream ]; then
				[ -S "$sock" ] && { ok=1; break; }
			else
				! _lab_port_free "$port" && { ok=1; break; }
			fi
			_lab_alive n1 || break
			sleep 0.05
		done
		[ -n "$ok" ] && break
		lab_log "n1 did not listen on $port (try $tries)"
		_lab_kill_all
	done
	if [ -z "$ok" ]; then
		_lab_console_tail n1
		LAB_BOOT_ERR="n1: qemu did not start"
		return 1
	fi
	if [ "$LAB_LINK" = stream ]; then
		_lab_qemu n2 2 "stream,server=off,addr.type=unix,addr.path=$sock"
	else
		_lab_qemu n2 2 "socket,connect=127.0.0.1:$port"
	fi
	for node in "${LAB_NODES[@]}"; do
		while [ ! -e "$LAB_RUN/$node/ready" ]; do
			if ! _lab_alive "$node"; then
				_lab_console_tail "$node"
				LAB_BOOT_ERR="$node: qemu exited during boot"
				return 1
			fi
			if [ $((SECONDS - s0)) -ge "$LAB_BOOT_TIMEOUT" ]; then
				_lab_console_tail "$node"
				LAB_BOOT_ERR="$node: not ready after ${LAB_BOOT_TIMEOUT}s"
				return 1
			fi
			sleep 0.1
		done
	done
	LAB_BOOT_SECS=$(printf '%.1f' "$(bc <<<"$(date +%s.%N) - $t0")")
	LAB_PORT=$port
}

# lab_start: boot n1 and n2, wait until both agents are ready. Installs the
# exit trap that stops the lab and prints the summary if the scenario dies.
# _lab_queue_wait DIR: take a ticket in DIR, return once it is the oldest
# live one (the caller then blocks on the lock and removes $LAB_TICKET).
_lab_queue_wait() {
	local q=$1 t pid first
	mkdir -p "$q"
	LAB_TICKET=$q/$(date +%s%N)-$$
	: >"$LAB_TICKET"
	while :; do
		for t in "$q"/*; do
			pid=${t##*-}
			[ -e "$t" ] && ! kill -0 "$pid" 2>/dev/null && rm -f "$t"
		done
		first=$(find "$q" -maxdepth 1 -type f -printf '%f\n' | sort | head -n 1)
		[ "$q/$first" = "$LAB_TICKET" ] && return 0
		sleep 1
	done
}

lab_start() {
	local node try
	if [ -n "${LAB_PART:-}" ]; then	# a part: the lab runs already
		lab_log "part $LAB_PART"
		echo "# lab $LAB_NAME: part $LAB_PART"
		return 0
	fi
	[ -f "$LAB_KDIR/boot/vmlinuz-$LAB_KVER" ] ||
		lab_fatal "no kernel at $LAB_KDIR (run scripts/setup.sh)"
	LAB_INITRD=$(KVER=$LAB_KVER KDIR=$LAB_KDIR "$LAB_ROOT/scripts/lab/mkinitramfs.sh") ||
		lab_fatal "initramfs build failed"
	LAB_RUN=$LAB_ROOT/build/lab/run-$(date +%Y%m%d-%H%M%S)-$LAB_NAME-$$
	mkdir -p "$LAB_RUN/checks" "$LAB_RUN/bg"
	: >"$LAB_RUN/checks.txt"
	ln -sfn "$(basename "$LAB_RUN")" "$LAB_ROOT/build/lab/last"
	# The exit trap may fire inside a redirected check: keep the real
	# stdout/stderr to print the summary on.
	exec {LAB_FD1}>&1 {LAB_FD2}>&2
	trap _lab_exit EXIT
	trap 'exit 130' INT TERM HUP
	LAB_STARTED=1
	echo "# lab $LAB_NAME: run dir $LAB_RUN"
	# One lab at a time on this machine (two skew each other's timing):
	# every lab of every work tree waits here for the one before it.
	# flock alone is not fair (a work tree running labs back to back takes
	# it again before a waiter wakes): waiters queue in arrival order with
	# a ticket each (<lock>.queue/<ns>-<pid>; a dead waiter's is dropped)
	# and only the oldest ticket goes for the lock.
	exec {LAB_LOCK_FD}>"${LAB_LOCK:-/tmp/metaroce-lab.lock}"
	if [ -n "$(ls -A "${LAB_LOCK:-/tmp/metaroce-lab.lock}.queue" 2>/dev/null)" ] ||
		! flock -n "$LAB_LOCK_FD"; then
		echo "# lab $LAB_NAME: waiting for the lab lock (another lab runs)"
		_lab_queue_wait "${LAB_LOCK:-/tmp/metaroce-lab.lock}.queue"
		flock "$LAB_LOCK_FD"
		rm -f "$LAB_TICKET"
	fi
	for try in $(seq "$LAB_BOOT_TRIES"); do
		_lab_boot && break
		[ "$try" -lt "$LAB_BOOT_TRIES" ] ||
			lab_fatal "${LAB_BOOT_ERR:-boot failed} (after $try tries)"
		echo "# lab: ${LAB_BOOT_ERR:-boot failed}; retrying the boot"
		_lab_kill_all
		for node in "${LAB_NODES[@]}"; do
			mv "$LAB_RUN/$node.console" "$LAB_RUN/$node.console.try$try" 2>/dev/null
			rm -f "$LAB_RUN/$node/ready"
		done
	done
	lab_log "both nodes ready in ${LAB_BOOT_SECS}s (n1: $(cat "$LAB_RUN/n1/ready"); n2: $(cat "$LAB_RUN/n2/ready"))"
	echo "# lab $LAB_NAME: nodes ready in ${LAB_BOOT_SECS}s (link $LAB_LINK $LAB_PORT)"
	[ "$LAB_DEBUG_EXPECT" = 1 ] || return 0
	for node in "${LAB_NODES[@]}"; do
		check "$node: booted $LAB_KVER has KASAN, PROVE_LOCKING, KMEMLEAK, FAILSLAB, DEBUG_OBJECTS" \
			lab_run "$node" "$LAB_DEBUG_PROBE" ||
			lab_fatal "$node: LAB_KVER=$LAB_KVER (LAB_DEBUG_EXPECT=1) but the booted kernel lacks debug features: its clean log would prove nothing"
	done
}

# Mailbox: allocate the next command number of NODE (safe from subshells).
_lab_submit() {	# NODE MODE TIMEOUT TEXT -> prints the command file base
	local node=$1 mode=$2 t=$3 text=$4 seq b lock
	if [ -z "$LAB_RUN" ] || [ ! -d "$LAB_RUN/$node" ]; then
		echo "lab: no node $node (lab_start first)" >&2
		return 1
	fi
	exec {lock}>"$LAB_RUN/$node/.seq.lock"
	flock "$lock"
	seq=$(($(cat "$LAB_RUN/$node/.seq" 2>/dev/null || echo 0) + 1))
	echo "$seq" >"$LAB_RUN/$node/.seq"
	printf -v b '%s/%s/cmd-%04d' "$LAB_RUN" "$node" "$seq"
	printf '# lab timeout=%s mode=%s\n%s\n' "$t" "$mode" "$text" >"$b.tmp"
	mv "$b.tmp" "$b.sh"
	flock -u "$lock"
	exec {lock}>&-
	lab_log "$node ${b##*/} $mode: $text"
	echo "$b"
}

_lab_await() {	# NODE BASE WAIT-SECS: print the output, return the rc
	local node=$1 b=$2 end=$((SECONDS + $3)) rc
	while [ ! -e "$b.rc" ]; do
		if ! _lab_alive "$node"; then
			cat "$b.out" 2>/dev/null
			echo "lab: $node died while running ${b##*/}" >&2
			_lab_console_tail "$node" 30 >&2
			lab_log "$node ${b##*/}: node died"
			return 255
		fi
		if [ $SECONDS -ge $end ]; then
			cat "$b.out" 2>/dev/null
			echo "lab: $node: no result for ${b##*/} after $3s" >&2
			lab_log "$node ${b##*/}: host timeout"
			return 124
		fi
		sleep 0.05
	done
	rc=$(cat "$b.rc")
	cat "$b.out"
	lab_log "$node ${b##*/} rc=$rc"
	return "$rc"
}

_lab_text() {	# CMD...: one argument = shell code, several = argv
	if [ $# -eq 1 ]; then
		printf '%s' "$1"
	else
		printf '%q ' "$@"
	fi
}

# lab_run NODE CMD...: run synchronously on NODE, print its output (stdout
# and stderr), return its exit code. LAB_CMD_TIMEOUT limits it.
lab_run() {
	local node=$1 b t=${LAB_CMD_TIMEOUT}
	shift
	b=$(_lab_submit "$node" fg "$t" "$(_lab_text "$@")") || return 255
	_lab_await "$node" "$b" $((t + 60))
}
n1() { lab_run n1 "$@"; }
n2() { lab_run n2 "$@"; }

# lab_bg NODE NAME CMD...: start CMD in the background on NODE.
lab_bg() {
	local node=$1 name=$2 b
	shift 2
	b=$(_lab_submit "$node" bg "$LAB_CMD_TIMEOUT" "$(_lab_text "$@")") || return 255
	echo "$node $b $LAB_CMD_TIMEOUT" >"$LAB_RUN/bg/$name"
}

# lab_wait NAME: wait for a lab_bg command, print its output, return its rc.
lab_wait() {
	local node b t
	read -r node b t <"$LAB_RUN/bg/$1" 2>/dev/null || {
		echo "lab_wait: no background command '$1'" >&2
		return 255
	}
	_lab_await "$node" "$b" $((t + 60))
}

# lab_bg_running NAME: rc 0 while the lab_bg command NAME has not ended
lab_bg_running() {
	local node b t
	read -r node b t <"$LAB_RUN/bg/$1" 2>/dev/null && [ ! -e "$b.rc" ]
}

# lab_wait_for NODE 'SHELL CONDITION' [TIMEOUT]: poll on NODE until the
# condition holds (rc 0) or TIMEOUT seconds (default 60) pass (rc 1).
# lab_perftest SRV_ARGS -- CLI_ARGS: a TCP-handshake client/server pair
# (perftest style, port 18515): the server (argv SRV_ARGS) in the background
# on n2, then, once it listens, the client (argv CLI_ARGS) on n1. Prints the
# client's output; returns its rc, or 1 if the server failed or never
# listened.
lab_perftest() {
	local srv=() rc
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	lab_bg n2 pt "${srv[@]}"
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || return 1
	n1 "$@"
	rc=$?
	lab_wait pt >/dev/null || return 1
	return $rc
}

# lab_pingpong TOOL ITERS SIZE [GID]: an ibv_*_pingpong pair (TOOL, e.g.
# ibv_rc_pingpong or ibv_ud_pingpong) on mrc0 checking every payload byte
# (-c): server on n2, client on n1. Returns the client's rc, or 1 if the
# server failed or never listened.
lab_pingpong() {
	local tool=$1 n=$2 size=$3 gid=${4:-1} rc out
	lab_bg n2 pingpong "$tool" -d mrc0 -g "$gid" -n "$n" -s "$size" -c
	lab_wait_for n2 'ss -ltn | grep -q :18515' $((30 * LAB_SCALE)) || return 1
	n1 "$tool" -d mrc0 -g "$gid" -n "$n" -s "$size" -c 192.0.2.2
	rc=$?
	if ! out=$(lab_wait pingpong); then
		printf 'server (n2) failed:\n%s\n' "$out"
		return 1
	fi
	return $rc
}

lab_wait_for() {
	local node=$1 cond=$2 t=${3:-60}
	LAB_CMD_TIMEOUT=$((t + 30)) lab_run "$node" "end=\$((SECONDS + $t))
until ( $cond ) >/dev/null 2>&1; do
	[ \$SECONDS -lt \$end ] || { echo 'lab_wait_for: timed out after ${t}s: '$(printf %q "$cond"); exit 1; }
	sleep 0.2
done"
}

# lab_netem NODE ARGS...: netem on NODE's eth0 egress; lab_netem_clear [NODE...]
lab_netem() {
	local node=$1
	shift
	lab_run "$node" tc qdisc replace dev eth0 root netem "$@"
}
lab_netem_clear() {
	local node
	for node in "${@:-${LAB_NODES[@]}}"; do
		lab_run "$node" 'tc qdisc del dev eth0 root 2>/dev/null; true'
	done
}

# lab_load_metaroce NODE [IBDEV [NETDEV]]: load metaroce.ko (and its
# dependencies) and add IBDEV (mrc0) on NETDEV (eth0).
lab_load_metaroce() {
	local node=$1 dev=${2:-mrc0} netdev=${3:-eth0}
	if [ ! -f "$LAB_MODULE" ]; then
		echo "lab_load_metaroce: $LAB_MODULE is not built (make KVER=$LAB_KVER)" >&2
		return 1
	fi
	lab_run "$node" "set -e
for d in \$(modinfo -F depends $LAB_MODULE | tr , ' '); do modprobe \$d; done
insmod $LAB_MODULE
rdma link add $dev type metaroce netdev $netdev"
}

# lab_nvme_host NODE: load the NVMe/RDMA host, nvme_core with
# LAB_NVME_CORE_OPTS (param=value ...), and check that each option took
# effect (nvme_core may already have been loaded without them).
lab_nvme_host() {
	lab_run "$1" "set -e
modprobe nvme_core $LAB_NVME_CORE_OPTS
modprobe nvme-rdma
for o in $LAB_NVME_CORE_OPTS; do
	v=\$(cat /sys/module/nvme_core/parameters/\${o%%=*})
	[ \"\$v\" = \"\${o#*=}\" ] || { echo \"nvme_core: \${o%%=*}=\$v, wanted \${o#*=}\"; exit 1; }
done"
}

# lab_nvmet_up NODE NQN ADDR RD_KIB: an NVMe-oF target on NODE: a brd RAM
# disk of RD_KIB KiB (/dev/ram0) exported by nvmet-rdma as NQN (any host)
# on rdma ADDR:4420, IPv4. lab_nvmet_down NODE NQN undoes it and unloads
# nvmet-rdma, nvmet and brd.
lab_nvmet_up() {
	local cfg=/sys/kernel/config/nvmet
	lab_run "$1" "set -e
modprobe brd rd_nr=1 rd_size=$4 max_part=0
modprobe nvmet-rdma
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
mkdir $cfg/subsystems/$2
echo 1 >$cfg/subsystems/$2/attr_allow_any_host
mkdir $cfg/subsystems/$2/namespaces/1
echo /dev/ram0 >$cfg/subsystems/$2/namespaces/1/device_path
echo 1 >$cfg/subsystems/$2/namespaces/1/enable
mkdir $cfg/ports/1
echo rdma >$cfg/ports/1/addr_trtype
echo ipv4 >$cfg/ports/1/addr_adrfam
echo $3 >$cfg/ports/1/addr_traddr
echo 4420 >$cfg/ports/1/addr_trsvcid
ln -s $cfg/subsystems/$2 $cfg/ports/1/subsystems/$2
dmesg | grep 'enabling port 1 ($3:4420)'"
}
lab_nvmet_down() {
	local cfg=/sys/kernel/config/nvmet
	lab_run "$1" "set -e
rm $cfg/ports/1/subsystems/$2
rmdir $cfg/ports/1
echo 0 >$cfg/subsystems/$2/namespaces/1/enable
rmdir $cfg/subsystems/$2/namespaces/1
rmdir $cfg/subsystems/$2
modprobe -r nvmet-rdma nvmet brd"
}

# lab_tcmd ROLE 'COMMAND': hand COMMAND to the selftests/tools/mrc_target
# started as lab_bg NAME ROLE (e.g. srv on n2, cli on n1), through the run
# directory; print its answer, return its rc.
lab_tcmd() {
	local role=$1 n f
	n=$(($(cat "$LAB_RUN/$role.seq" 2>/dev/null || echo 0) + 1))
	echo "$n" >"$LAB_RUN/$role.seq"
	echo "$2" >"$LAB_RUN/$role.cmd.$n.tmp"
	mv "$LAB_RUN/$role.cmd.$n.tmp" "$LAB_RUN/$role.cmd.$n"
	f=$LAB_RUN/$role.res.$n
	for _ in $(seq 1200); do
		[ -e "$f" ] && break
		sleep 0.1
	done
	[ -e "$f" ] || { echo "no answer from $role to '$2'"; return 1; }
	cat "$f"
	grep -q '^rc=0$' "$f"
}

# lab_add_dev NODE DEV: mrc0 (metaroce.ko, lab_load_metaroce) or any other
# name as a stock rdma_rxe device, on eth0.
lab_add_dev() {
	if [ "$2" = mrc0 ]; then
		lab_load_metaroce "$1"
	else
		lab_run "$1" "modprobe rdma_rxe && rdma link add $2 type rxe netdev eth0"
	fi
}

# lab_verbs_bin: print the path of the verbs test program
# (selftests/verbs/mrc_verbs_test.c), building it into build/verbs/ first;
# VERBS_BIN, if set, names a prebuilt binary (under the repo: the guests
# see the host's / but not its /tmp).
lab_verbs_bin() {
	local bin=${VERBS_BIN:-$LAB_ROOT/build/verbs/mrc_verbs_test}
	if [ -z "$VERBS_BIN" ]; then
		mkdir -p "$LAB_ROOT/build/verbs" &&
		gcc -O2 -Wall -Werror -o "$bin" \
			"$LAB_ROOT/selftests/verbs/mrc_verbs_test.c" -libverbs >&2 ||
			return 1
	fi
	echo "$bin"
}

# lab_variant SPEC: select one variant of a side-by-side tool
# (perf-stages.sh, sched-trace.sh, lat-trace.sh): a device (mrc0, rxe0) or
# NAME=SHELL, SHELL run on both nodes first; a NAME starting with "rxe"
# means rxe0, any other mrc0. Sets name and dev.
lab_variant() {
	name=${1%%=*} dev=mrc0
	case $name in rxe*) dev=rxe0 ;; esac
	[ "$name" != "$1" ] || return 0
	n1 "${1#*=}" || lab_fatal "variant $name failed on n1"
	n2 "${1#*=}" || lab_fatal "variant $name failed on n2"
}

# lab_load_contenders: metaroce (mrc0) and the stock rdma_rxe (rxe0) on eth0
# of both nodes, or lab_fatal (for the tools that compare the two).
lab_load_contenders() {
	local n
	for n in "${LAB_NODES[@]}"; do
		lab_add_dev "$n" mrc0 >/dev/null ||
			lab_fatal "$n: metaroce did not load"
		lab_add_dev "$n" rxe0 >/dev/null ||
			lab_fatal "$n: rxe did not load"
	done
}

# check DESCRIPTION [!] CMD...: run CMD (host side; typically n1/n2 ...),
# print one line "ok   DESCRIPTION" or "FAIL DESCRIPTION" (plus the tail of
# its output). "!" expects CMD to fail.
check() {
	local desc=$1 neg='' rc n log good
	shift
	if [ "$1" = "!" ]; then
		neg=1
		shift
	fi
	n=$(($(wc -l <"$LAB_RUN/checks.txt") + 1))
	printf -v log '%s/checks/%03d.log' "$LAB_RUN" "$n"
	echo "# check: $desc" >"$log"
	echo "# cmd: ${neg:+! }$*" >>"$log"
	lab_log "check $n: $desc"
	"$@" >>"$log" 2>&1
	rc=$?
	good=$(( neg ? rc != 0 : rc == 0 ))
	_lab_record "$good" "$desc" "$rc" "$log"
	[ "$good" = 1 ]
}

# lab_counter NODE NAME: one of mrc0's transport counters on NODE (rdma
# statistic show link mrc0/1), e.g. retx_packets; empty if there is none
lab_counter() {
	lab_run "$1" "rdma statistic show link mrc0/1" | tr ' ' '\n' |
		awk -v k="$2" '$0 == k { getline; print; exit }'
}

# lab_dcheck DEV DESC CMD...: check for mrc0; for a reference device (rxe0,
# whose failures are facts about rxe, not about us) run CMD without a
# check: its output goes to $LAB_RUN/reference.log and one line
# "# reference (not a check): DESC: ok|FAILED (rc N)" to the terminal and
# to $FIG (default $LAB_RUN/figures.txt), the consumer scenarios' figures.
lab_dcheck() {
	local dev=$1 desc=$2 r
	shift 2
	if [ "$dev" = mrc0 ]; then
		check "$desc" "$@"
		return
	fi
	if "$@" >>"$LAB_RUN/reference.log" 2>&1; then r=ok; else r="FAILED (rc $?)"; fi
	echo "# reference (not a check): $desc: $r" | tee -a "${FIG:-$LAB_RUN/figures.txt}"
}

# lab_qperf_ok: qperf's output on stdin has a non-zero bw or latency
# figure (qperf can print "bw = 0 bytes/sec" and exit 0)
lab_qperf_ok() {
	awk '($1 == "bw" || $1 == "latency") && $2 == "=" && $3 + 0 > 0 { ok = 1 } END { exit !ok }'
}

_lab_record() {	# GOOD DESC RC LOG
	local d=${LAB_PART:+[$LAB_PART] }$2
	if [ "$1" = 1 ]; then
		echo "ok $d" >>"$LAB_RUN/checks.txt"
		printf 'ok    %s\n' "$d"
	else
		echo "FAIL $d" >>"$LAB_RUN/checks.txt"
		printf 'FAIL  %s (rc=%s%s)\n' "$d" "$3" "${4:+, log ${4#"$LAB_ROOT"/}}"
		[ -n "$4" ] && tail -n 15 "$4" | sed 's/^/      | /'
	fi
	lab_log "result: $(tail -n 1 "$LAB_RUN/checks.txt")"
}

# lab_dmesg_bad FILE: print the lines of a node's kernel log (dmesg, then
# the kmemleak report) that fail a run ($LAB_DMESG_BAD); status 0 if any.
lab_dmesg_bad() {
	grep -E "$LAB_DMESG_BAD" "$1"
}

# lab_stop: collect dmesg of each node (FAIL on kernel warnings), power the
# nodes off, kill qemu. Idempotent; called by lab_summary and the exit trap.
lab_stop() {
	local node bad pid any_fail first
	[ -n "$LAB_STARTED" ] && [ -z "$LAB_STOPPED" ] || return 0
	LAB_STOPPED=1
	for node in "${LAB_NODES[@]}"; do
		[ -d "$LAB_RUN/$node" ] || continue
		if _lab_alive "$node" && [ -e "$LAB_RUN/$node/ready" ] &&
			LAB_CMD_TIMEOUT=240 lab_run "$node" "$LAB_DMESG_CMD" >"$LAB_RUN/$node.dmesg" 2>&1; then
			:
		else
			echo "# $node: no dmesg from the guest, using its console log"
			_lab_clean <"$LAB_RUN/$node.console" >"$LAB_RUN/$node.dmesg"
		fi
		bad=$(lab_dmesg_bad "$LAB_RUN/$node.dmesg")
		if [ -z "$bad" ] && [ -s "$LAB_RUN/$node.dmesg" ]; then
			_lab_record 1 "$node: kernel log clean" 0 ""
		else
			printf '%s\n' "${bad:-empty kernel log}" >"$LAB_RUN/checks/$node-dmesg.log"
			_lab_record 0 "$node: kernel log clean" 1 "$LAB_RUN/checks/$node-dmesg.log"
		fi
	done
	for node in "${LAB_NODES[@]}"; do
		_lab_alive "$node" || continue
		_lab_submit "$node" bg 30 'sync; echo o >/proc/sysrq-trigger' >/dev/null
	done
	for node in "${LAB_NODES[@]}"; do
		pid=$(cat "$LAB_RUN/$node/qemu.pid" 2>/dev/null) || continue
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			lab_log "$node: qemu $pid did not power off, killing"
			kill "$pid" 2>/dev/null
			sleep 1
			kill -9 "$pid" 2>/dev/null
		fi
		wait "$pid" 2>/dev/null
	done
	[ -n "$LAB_SOCK" ] && rm -f "$LAB_SOCK"
	any_fail=$(grep -c '^FAIL' "$LAB_RUN/checks.txt")
	if [ "$any_fail" -gt 0 ]; then
		for node in "${LAB_NODES[@]}"; do
			[ -f "$LAB_RUN/$node.dmesg" ] || continue
			first=$(grep -En -m1 "$LAB_DMESG_BAD" "$LAB_RUN/$node.dmesg" | cut -d: -f1)
			if [ -n "$first" ]; then
				echo "# ---- $node dmesg from line $((first > 5 ? first - 5 : 1)) (full: ${LAB_RUN#"$LAB_ROOT"/}/$node.dmesg) ----"
				tail -n +$((first > 5 ? first - 5 : 1)) "$LAB_RUN/$node.dmesg" | head -n 80 | sed 's/^/# /'
			else
				echo "# ---- $node dmesg (last 60 lines; full: ${LAB_RUN#"$LAB_ROOT"/}/$node.dmesg) ----"
				tail -n 60 "$LAB_RUN/$node.dmesg" | sed 's/^/# /'
			fi
		done
	fi
	lab_log "lab stopped"
}

# lab_summary: stop the lab, print timing and exactly "N passed, N failed";
# returns non-zero on any failure (or if nothing was checked).
lab_summary() {
	local passed failed
	if [ -n "${LAB_PART:-}" ]; then	# a part: the lab goes on
		passed=$(grep -c "^ok \[$LAB_PART\] " "$LAB_RUN/checks.txt")
		failed=$(grep -c "^FAIL \[$LAB_PART\] " "$LAB_RUN/checks.txt")
		echo "# lab $LAB_NAME: part $LAB_PART: $passed passed, $failed failed"
		: >"$LAB_RUN/part-$LAB_PART.done"
		[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
		return
	fi
	lab_stop
	LAB_SUMMARY_DONE=1
	passed=$(grep -c '^ok' "$LAB_RUN/checks.txt")
	failed=$(grep -c '^FAIL' "$LAB_RUN/checks.txt")
	echo "# lab $LAB_NAME: boot ${LAB_BOOT_SECS:-?}s, total $((SECONDS - LAB_T0))s, logs in ${LAB_RUN#"$LAB_ROOT"/}"
	echo "$passed passed, $failed failed"
	lab_log "summary: $passed passed, $failed failed"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}

# lab_parts SCENARIO...: one lab for several short scenarios
# (selftests/lab/SCENARIO.sh, each marked "# lab: part of NAME.sh", which
# the lab layer then leaves to NAME.sh), one after the other, each in a
# subshell: a part's lab_start and lab_summary only mark its start and
# end, its checks read "[SCENARIO] ...", and a part that aborts
# (lab_fatal) fails "[SCENARIO] ran to completion" and the next part goes
# on. After each part but the last every node is reset -- its test
# programs killed, netem cleared, every rdma link deleted, metaroce and
# rdma_rxe unloaded -- and that is a check: a part that leaves a device or
# module busy fails. The kernel logs are checked once, at the end
# (lab_summary).
lab_parts() {
	local p n i=0
	lab_start
	for p in "$@"; do
		i=$((i + 1))
		(
			LAB_PART=$p
			# shellcheck source=/dev/null
			. "$LAB_ROOT/selftests/lab/$p.sh"
		)
		LAB_PART=$p
		[ -e "$LAB_RUN/part-$p.done" ] ||
			_lab_record 0 "ran to completion" 1 ""
		LAB_PART=
		[ "$i" -lt $# ] || break	# the last: lab_summary follows
		for n in "${LAB_NODES[@]}"; do	# the nodes side by side
			lab_bg "$n" "reset-$n" "pkill -9 -f '$LAB_ROOT/build/' && sleep 0.5
tc qdisc del dev eth0 root 2>/dev/null
for l in \$(rdma link show | awk '{print \$2}' | cut -d/ -f1); do rdma link delete \$l || exit 1; done
for m in metaroce rdma_rxe; do ! grep -q \"^\$m \" /proc/modules || rmmod \$m || exit 1; done
rdma link show"
		done
		for n in "${LAB_NODES[@]}"; do
			check "$n: reset after [$p] (test programs, netem, rdma links, metaroce, rdma_rxe)" \
				lab_wait "reset-$n"
		done
	done
	lab_summary
}

_lab_exit() {
	local rc=$?
	trap - EXIT INT TERM HUP
	[ -n "${LAB_FD1:-}" ] && exec 1>&"$LAB_FD1" 2>&"$LAB_FD2"
	if [ -z "$LAB_SUMMARY_DONE" ] && [ -n "$LAB_RUN" ]; then
		_lab_record 0 "scenario ran to completion (exit $rc)" "$rc" ""
		lab_summary
		exit 1
	fi
	lab_stop
	exit "$rc"
}
