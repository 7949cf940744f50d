#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Blackhole one metaroce path mid-run (run in the guest, as root).

    blackhole.py READY_FILE [--dport 19791] [--delay S] [--dev eth0]

metaroce sprays a QP's packets over N paths, each a distinct UDP source
port towards the fixed destination port. This script touches READY_FILE
once its packet socket is open, waits for the first outgoing metaroce
packet, lets the run go on for --delay seconds, samples 256 outgoing
packets, picks the most used source port and installs
    iptables -I OUTPUT -p udp --dport DPORT --sport SPORT -j DROP
(or a tc clsact egress u32 drop if iptables fails). One second later it
samples again, to show whether the transport moved the path to a new port.
The packet socket is only open while sampling, to keep its CPU cost off
the measurement. Output, one line each:
    before SPORT:COUNT ... (+SECONDS)
    drop SPORT via iptables|tc (+SECONDS)
    after SPORT:COUNT ... (+SECONDS)
    @drop_at EPOCH (wall clock of the drop, for the caller to compare with
    the end of the run)
(SECONDS since the first metaroce packet; "after -": none in 5 s).
Exits 1 if no metaroce packet shows up within --wait seconds. The caller
removes the rule (iptables -F OUTPUT; tc qdisc del dev eth0 clsact).
"""
import argparse
import collections
import socket
import struct
import subprocess
import sys
import time

ETH_P_ALL = 0x0003  # outgoing packets are only copied to ETH_P_ALL taps
ETH_P_IP = 0x0800


def open_sock(dev):
    # SOCK_DGRAM: the frame without its link-layer header
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM,
                      socket.htons(ETH_P_ALL))
    s.bind((dev, 0))
    s.settimeout(0.2)
    return s


def sample(s, dport, need, limit):
    """Count source ports of up to @need outgoing UDP packets to @dport."""
    seen = collections.Counter()
    end = time.time() + limit
    n = 0
    while n < need and time.time() < end:
        try:
            pkt, addr = s.recvfrom(64)
        except socket.timeout:
            continue
        if addr[2] != socket.PACKET_OUTGOING or addr[1] != ETH_P_IP or \
                len(pkt) < 28 or pkt[9] != 17:
            continue
        ihl = (pkt[0] & 15) * 4
        sp, dp = struct.unpack("!HH", pkt[ihl:ihl + 4])
        if dp == dport:
            seen[sp] += 1
            n += 1
    return seen


def fmt(c):
    return " ".join("%d:%d" % kv for kv in c.most_common()) or "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ready")
    ap.add_argument("--dport", type=int, default=19791)
    ap.add_argument("--delay", type=float, default=3.0)
    ap.add_argument("--wait", type=float, default=60.0)
    ap.add_argument("--dev", default="eth0")
    a = ap.parse_args()

    s = open_sock(a.dev)
    open(a.ready, "w").close()
    first = sample(s, a.dport, 1, a.wait)
    t0 = time.time()
    s.close()
    if not first:
        print("no metaroce packets seen in %gs" % a.wait)
        return 1
    time.sleep(a.delay)
    s = open_sock(a.dev)
    before = sample(s, a.dport, 256, 5)
    s.close()
    print("before", fmt(before), "(+%.1fs)" % (time.time() - t0))
    if not before:
        print("traffic stopped before the drop")
        return 1
    sport = before.most_common(1)[0][0]
    how = "iptables"
    r = subprocess.run(["iptables", "-w", "-I", "OUTPUT", "-p", "udp",
                        "--dport", str(a.dport), "--sport", str(sport),
                        "-j", "DROP"], capture_output=True, text=True)
    if r.returncode:
        how = "tc"
        sys.stderr.write(r.stderr)
        subprocess.run(["tc", "qdisc", "add", "dev", a.dev, "clsact"],
                       capture_output=True)
        r = subprocess.run(["tc", "filter", "add", "dev", a.dev, "egress",
                            "protocol", "ip", "prio", "1", "u32",
                            "match", "ip", "dport", str(a.dport), "0xffff",
                            "match", "ip", "sport", str(sport), "0xffff",
                            "action", "drop"], capture_output=True,
                           text=True)
        if r.returncode:
            sys.stderr.write(r.stderr)
            print("could not install a drop rule for sport %d" % sport)
            return 1
    print("drop %d via %s (+%.1fs)" % (sport, how, time.time() - t0))
    print("@drop_at %.3f" % time.time())
    sys.stdout.flush()
    time.sleep(1)
    s = open_sock(a.dev)
    after = sample(s, a.dport, 256, 5)
    s.close()
    print("after", fmt(after), "(+%.1fs)" % (time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
