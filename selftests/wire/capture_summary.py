#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""capture_summary: what a metaroce capture holds, decoded by the dissector.

    capture_summary.py PCAP [--node TAG=IP ...] [--trace TAG=FILE ...]
                       [--lua FILE]

Decodes PCAP with tshark and scripts/wireshark/metaroce.lua and prints one
"key value" line per figure (used by selftests/lab/wire.sh, readable by
hand):

  frames metaroce icrc_good icrc_bad icrc_unverified malformed
  op_<NAME>                       packets per opcode
  <TAG>_pkts _data _retx _acks _naks _sack_acks _dsacks _probes
                                  per sender (source IP of --node TAG=IP)
  <TAG>_trace_tx _trace_retx      metaroce_tx events in the ftrace text
                                  dump of --trace TAG=FILE
  <TAG>_cap_not_traced            captured data transmissions of TAG with
                                  no metaroce_tx event (op, psn, path,
                                  ppsn, sport, len, retx): must be 0
  <TAG>_retx_not_traced           the same, RETX packets only
  <TAG>_traced_not_captured       events whose packet is not in the
                                  capture (lost before the capture point)
  <TAG>_retx_traced_not_captured
  <TAG>_in_order                  captured transmissions in the order of
                                  the events (longest common subsequence
                                  is not computed: a greedy in-order walk;
                                  informational)
"""
import argparse
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LUA = os.path.join(ROOT, "scripts", "wireshark", "metaroce.lua")

OPS = {0x01: "SEND", 0x02: "SEND_IMM", 0x03: "SEND_INV", 0x04: "WRITE",
       0x05: "WRITE_IMM", 0x06: "READ_REQ", 0x07: "READ_RESP",
       0x08: "CMP_SWAP", 0x09: "FETCH_ADD", 0x0a: "ATOMIC_RESP",
       0x0b: "UD_SEND", 0x0c: "UD_SEND_IMM", 0x10: "ACK", 0x11: "PROBE"}
SEQUENCED = {op for op in OPS if op <= 0x0a}

FIELDS = ["frame.number", "ip.src", "ipv6.src", "udp.srcport",
          "_ws.col.Protocol", "metaroce.opcode", "metaroce.flags",
          "metaroce.psn", "metaroce.path_id", "metaroce.ppsn",
          "metaroce.payload_len", "metaroce.icrc.status",
          "metaroce.ack.syndrome", "metaroce.ack.sack.count",
          "metaroce.ack.dsack_off", "_ws.expert.message"]

TRACE_RE = re.compile(r"metaroce_tx: qp (\d+) op 0x([0-9a-f]+) psn (\d+) "
                      r"path (\d+) ppsn (\d+) sport (\d+) len (\d+)( RETX)?")


def decode(pcap, lua):
    cmd = ["tshark", "-n", "-X", "lua_script:" + lua, "-r", pcap,
           "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
           "-E", "aggregator=|"]
    for f in FIELDS:
        cmd += ["-e", f]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode:
        sys.exit("tshark failed: %s" % p.stderr)
    for line in p.stdout.splitlines():
        v = line.split("\t")
        v += [""] * (len(FIELDS) - len(v))
        yield dict(zip(FIELDS, v))


def num(s):
    return int(s, 0) if s else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pcap")
    ap.add_argument("--node", action="append", default=[],
                    help="TAG=IP: count the packets IP sent as TAG")
    ap.add_argument("--trace", action="append", default=[],
                    help="TAG=FILE: ftrace dump with metaroce_tx events")
    ap.add_argument("--lua", default=LUA)
    a = ap.parse_args()
    nodes = dict(x.split("=", 1)[::-1] for x in a.node)	# ip -> tag
    out = collections.OrderedDict()
    c = collections.Counter()
    per = collections.defaultdict(collections.Counter)
    cap_tx = collections.defaultdict(list)	# tag -> [key] in wire order

    for r in decode(a.pcap, a.lua):
        c["frames"] += 1
        if r["_ws.col.Protocol"] != "METAROCE":
            continue
        c["metaroce"] += 1
        st = r["metaroce.icrc.status"]
        c["icrc_good" if st == "1" else
          "icrc_bad" if st == "0" else "icrc_unverified"] += 1
        msg = r["_ws.expert.message"]
        if "Malformed" in msg or "Lua Error" in msg:
            c["malformed"] += 1
        op = num(r["metaroce.opcode"])
        c["op_" + OPS.get(op, "0x%02x" % (op or 0))] += 1
        src = r["ip.src"] or r["ipv6.src"]
        tag = nodes.get(src)
        if not tag:
            continue
        pc = per[tag]
        pc["pkts"] += 1
        retx = bool(num(r["metaroce.flags"]) & 0x10)
        if op in SEQUENCED:
            pc["data"] += 1
            pc["retx"] += retx
            cap_tx[tag].append((op, num(r["metaroce.psn"]),
                                num(r["metaroce.path_id"]),
                                num(r["metaroce.ppsn"]),
                                num(r["udp.srcport"]),
                                num(r["metaroce.payload_len"]), retx))
        elif op == 0x10:
            syn = num(r["metaroce.ack.syndrome"]) or 0
            pc["naks" if syn else "acks"] += 1
            pc["sack_acks"] += (num(r["metaroce.ack.sack.count"]) or 0) > 0
            pc["dsacks"] += (num(r["metaroce.ack.dsack_off"]) or 0) != 0
        elif op == 0x11:
            pc["probes"] += 1

    for k in ("frames", "metaroce", "icrc_good", "icrc_bad",
              "icrc_unverified", "malformed"):
        out[k] = c[k]
    for k in sorted(x for x in c if x.startswith("op_")):
        out[k] = c[k]
    for tag in sorted(set(nodes.values())):
        for k in ("pkts", "data", "retx", "acks", "naks", "sack_acks",
                  "dsacks", "probes"):
            out["%s_%s" % (tag, k)] = per[tag][k]

    for t in a.trace:
        tag, path = t.split("=", 1)
        ev = []
        with open(path, errors="replace") as fh:
            for line in fh:
                m = TRACE_RE.search(line)
                if m:
                    g = m.groups()
                    ev.append((int(g[1], 16), int(g[2]), int(g[3]),
                               int(g[4]), int(g[5]), int(g[6]), bool(g[7])))
        tr = collections.Counter(ev)
        cp = collections.Counter(cap_tx[tag])
        out[tag + "_trace_tx"] = len(ev)
        out[tag + "_trace_retx"] = sum(1 for e in ev if e[6])
        out[tag + "_cap_not_traced"] = sum((cp - tr).values())
        out[tag + "_retx_not_traced"] = sum(
            n for k, n in (cp - tr).items() if k[6])
        out[tag + "_traced_not_captured"] = sum((tr - cp).values())
        out[tag + "_retx_traced_not_captured"] = sum(
            n for k, n in (tr - cp).items() if k[6])
        # greedy: walk the events, match captured packets in order
        i = 0
        seq = cap_tx[tag]
        for e in ev:
            if i < len(seq) and seq[i] == e:
                i += 1
        out[tag + "_in_order"] = "%d/%d" % (i, len(seq))

    for k, v in out.items():
        print(k, v)


if __name__ == "__main__":
    main()
