#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""test_dissector: the Wireshark dissector (scripts/wireshark/metaroce.lua)
against crafted packets.

Builds a pcap (Ethernet/IPv4 or IPv6/UDP) with packets of every opcode of
Documentation/protocol.rst (wire version 3) -- built with
selftests/tools/mrc_forge.py's header builders -- among them ACKs with path
records, SACK bits, DSACK (also across the 2^32 wrap), every NAK syndrome,
requests and ACKs of a non-zero epoch (BTH byte 3's high nibble) and an
ACK's void PSN, a retransmission, a corrupted ICRC and malformed headers
(the previous wire version among them); decodes it with

    tshark -X lua_script:scripts/wireshark/metaroce.lua -r PCAP -T fields -e ...

and checks every decoded field against what was crafted: fields a packet
does not have must be absent. Also checks that the dissector's and the
forger's wire version is include/metaroce/wire.h's MRC_WIRE_VERSION, the
display filters, the UDP port preference (metaroce.udp_port), that damaged
packets never cause a Lua error, and that deliberately broken copies of the
dissector (PSN read at the wrong offset, no epoch field) are caught (the
test can fail). Host only, a few seconds.

    selftests/wire/test_dissector.py [-v] [--keep DIR] [--lua FILE]

Ends with "N passed, N failed"; exits non-zero on any failure.
"""
import argparse
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "selftests", "tools"))
import mrc_forge as F  # noqa: E402  (header builders, CRC32C)

LUA = os.path.join(ROOT, "scripts", "wireshark", "metaroce.lua")
WIRE_H = os.path.join(ROOT, "include", "metaroce", "wire.h")
PORT = 19791
QPN = 17

# ------------------------------------------------------------ pcap writer


def _csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(payload, sport, dport=PORT, v6=False, src=1, dst=2):
    """Ethernet + IPv4 (UDP checksum 0, as metaroce sends) or IPv6 (UDP
    checksum computed) + UDP around payload."""
    udp_len = 8 + len(payload)
    if v6:
        s6 = bytes.fromhex("fd006d72000000000000000000000000")[:15] + bytes([src])
        d6 = bytes.fromhex("fd006d72000000000000000000000000")[:15] + bytes([dst])
        pseudo = s6 + d6 + struct.pack("!IxxxB", udp_len, 17)
        udp = struct.pack("!HHHH", sport, dport, udp_len, 0) + payload
        c = _csum(pseudo + udp) or 0xFFFF
        udp = struct.pack("!HHHH", sport, dport, udp_len, c) + payload
        ip = struct.pack("!IHBB", 0x60000000, udp_len, 17, 64) + s6 + d6
        et = 0x86DD
    else:
        udp = struct.pack("!HHHH", sport, dport, udp_len, 0) + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0x02, 20 + udp_len, 0,
                         0x4000, 64, 17, 0, bytes([192, 0, 2, src]),
                         bytes([192, 0, 2, dst]))
        ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
        et = 0x0800
    eth = (bytes.fromhex("525400000002") + bytes.fromhex("525400000001") +
           struct.pack("!H", et))
    return eth + ip + udp


def write_pcap(path, frames):
    with open(path, "wb") as fh:
        fh.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            fh.write(struct.pack("<IIII", 1700000000 + i, 0, len(fr), len(fr)))
            fh.write(fr)


# ------------------------------------------------------------ cases
# Every field the test reads; a case lists the ones its packet has (value:
# int, list of ints for repeated fields, or str); every other one must be
# absent from that packet's decode.
FIELDS = [
    "_ws.col.Protocol", "_ws.col.Info",
    "metaroce.version", "metaroce.opcode", "metaroce.flags",
    "metaroce.flags.retx", "metaroce.flags.uc", "metaroce.flags.cumack",
    "metaroce.cum_lo", "metaroce.path_id", "metaroce.epoch",
    "metaroce.dst_qpn",
    "metaroce.psn", "metaroce.ppsn", "metaroce.tsval", "metaroce.payload_len",
    "metaroce.rmsn", "metaroce.msg_len", "metaroce.offset", "metaroce.imm",
    "metaroce.inv_rkey", "metaroce.va", "metaroce.rkey", "metaroce.read.len",
    "metaroce.req_psn", "metaroce.atomic.swap_add", "metaroce.atomic.compare",
    "metaroce.atomic.orig", "metaroce.ud.src_qpn", "metaroce.ud.qkey",
    "metaroce.ack.cum_psn", "metaroce.ack.nak_psn", "metaroce.ack.tsecr",
    "metaroce.ack.ack_delay", "metaroce.ack.fair_share", "metaroce.ack.rwnd",
    "metaroce.ack.syndrome", "metaroce.ack.ts_path", "metaroce.ack.npaths",
    "metaroce.ack.rnr_timer", "metaroce.ack.rnr_delay_us",
    "metaroce.ack.dsack_off", "metaroce.ack.dsack_psn",
    "metaroce.ack.sack.count", "metaroce.ack.sack.psn",
    "metaroce.ack.sack.hole", "metaroce.ack.path.id",
    "metaroce.ack.path.flags", "metaroce.ack.path.ce_count",
    "metaroce.ack.path.max_ppsn", "metaroce.payload",
    "metaroce.icrc", "metaroce.icrc.status", "metaroce.icrc.calculated",
    "_ws.expert.message",
]

CASES = []	# (name, udp payload, frame kwargs, expected dict)

# version 3: opcodes whose BTH epoch is the request epoch (an ACK's is the
# receive epoch); on every other packet it is 0 and the dissector shows
# no epoch field unless it is not (a reserved-field warning)
REQUESTS = {F.OP[n] for n in ("SEND", "SEND_IMM", "SEND_INV", "WRITE",
                              "WRITE_IMM", "READ_REQ", "CMP_SWAP",
                              "FETCH_ADD")}
# IB-encoded RNR timer -> microseconds (IB spec 9.7.5.2.8)
RNR_US = [655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
          1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
          40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520]


def case(name, op, flags, ext, payload=b"", psn=0, ppsn=0, path=0,
         qpn=QPN, tsval=0x1234, v6=False, corrupt=False, raw=None,
         cum_lo=None, epoch=0, **exp):
    """Craft one packet and what the dissector must show for it."""
    if raw is None:
        pkt = F.pkt(op, flags, qpn, ext, payload, psn=psn, ppsn=ppsn,
                    path=path, tsval=tsval, cum_lo=cum_lo, epoch=epoch)
    else:
        pkt = raw
    icrc = struct.unpack(">I", pkt[-4:])[0]
    if corrupt:	# flip one payload bit, keep the stored ICRC
        b = bytearray(pkt)
        b[-5] ^= 0x40
        pkt = bytes(b)
    e = {
        "_ws.col.Protocol": "METAROCE",
        "metaroce.version": F.VERSION, "metaroce.opcode": op,
        "metaroce.flags": flags, "metaroce.flags.retx": 1 if flags & F.F_RETX else 0,
        "metaroce.flags.uc": 1 if flags & F.F_UC else 0,
        "metaroce.flags.cumack": 1 if flags & F.F_CUMACK else 0,
        "metaroce.path_id": path, "metaroce.dst_qpn": qpn,
        "metaroce.psn": psn, "metaroce.ppsn": ppsn, "metaroce.tsval": tsval,
        "metaroce.payload_len": len(payload),
        "metaroce.icrc": icrc,
        "metaroce.icrc.status": 0 if corrupt else 1,
        "metaroce.icrc.calculated": F.crc32c(pkt[:-4]),
    }
    if flags & F.F_CUMACK:
        e["metaroce.cum_lo"] = cum_lo or 0
    if op in REQUESTS or op == F.OP["ACK"] or epoch:
        e["metaroce.epoch"] = epoch
    if op == F.OP["ACK"] and ext is not None:
        # version 3: every ACK carries the RNR delay (IB-encoded)
        e["metaroce.ack.rnr_delay_us"] = RNR_US[ext[21] & 31]
    if payload:	# as on the wire (corrupted or not)
        e["metaroce.payload"] = pkt[-4 - len(payload):-4].hex()
    e.update({k.replace("__", "."): v for k, v in exp.items()})
    CASES.append((name, pkt, dict(sport=49152 + path, v6=v6), e))


def ackh(cum, dsack_off=0, **kw):
    """mrc_forge's ACKH with dsack_off (offset 22) filled in."""
    h = bytearray(F.ackh(cum, **kw))
    struct.pack_into(">h", h, 22, dsack_off)
    return bytes(h)


def sack(*offsets):
    b = bytearray(32)
    for i in offsets:
        b[i // 8] |= 1 << (i % 8)
    return bytes(b)


def x(**kw):	# field names with dots: metaroce.ack.cum_psn -> ack__cum_psn
    return {"metaroce." + k.replace("__", "."): v for k, v in kw.items()}


O = F.OP
FL = F.FL
PAY = bytes(range(256)) * 5 + bytes(120)	# 1400 bytes
DEADBEEF = 0xDEADBEEF

# --- SEND family (SENDH)
case("SEND first of 3000", O["SEND"], F.F_FIRST,
     F.sendh(7, 3000, 0), PAY, psn=100, ppsn=40, path=0,
     **{"_ws.col.Info": "SEND psn 100 path 0 qp 17 rmsn 7 off 0/3000 len 1400"},
     **x(rmsn=7, msg_len=3000, offset=0, imm=0))
case("SEND_IMM solicited", O["SEND_IMM"], FL | F.F_SOLICIT,
     F.sendh(8, 5, 0, imm=DEADBEEF), b"hello", psn=101, ppsn=41, path=1,
     **{"_ws.col.Info": "SEND_IMM psn 101 path 1 qp 17 rmsn 8 off 0/5 len 5"},
     **x(rmsn=8, msg_len=5, offset=0, imm=DEADBEEF))
case("SEND_INV", O["SEND_INV"], FL, F.sendh(9, 4, 0, imm=0x4321),
     b"abcd", psn=102, ppsn=42, path=2,
     **{"_ws.col.Info": "SEND_INV psn 102 path 2 qp 17 rmsn 9 off 0/4 len 4"},
     **x(rmsn=9, msg_len=4, offset=0, inv_rkey=0x4321))
# --- WRITE family (WRITEH), one a retransmission
case("WRITE middle, RETX", O["WRITE"], F.F_RETX,
     F.writeh(0x7F0012345000, 0xABCD, 4200, 1400), PAY, psn=123, ppsn=9,
     path=2,
     **{"_ws.col.Info": "WRITE psn 123 path 2 qp 17 off 1400/4200 len 1400 [RETX]",
        "_ws.expert.message": "Retransmission (RETX)"},
     **x(va=0x7F0012345000, rkey=0xABCD, msg_len=4200, offset=1400, rmsn=0,
         imm=0))
case("WRITE_IMM last", O["WRITE_IMM"], F.F_LAST | F.F_SOLICIT,
     F.writeh(0x1000, 0x77, 1500, 1400, rmsn=11, imm=0xCAFE), PAY[:100],
     psn=0xFFFFFFFF, ppsn=0xFFFFFFF0, path=15,
     **{"_ws.col.Info": "WRITE_IMM psn 4294967295 path 15 qp 17 off 1400/1500 len 100"},
     **x(va=0x1000, rkey=0x77, msg_len=1500, offset=1400, rmsn=11,
         imm=0xCAFE))
# --- READ (READH, RRESPH)
case("READ_REQ", O["READ_REQ"], FL | F.F_ACKREQ,
     F.readh(0xFFFF800000001000, 0x99, 65536), psn=200, ppsn=3, path=3,
     **{"_ws.col.Info": "READ_REQ psn 200 path 3 qp 17 len 65536"},
     **x(va=0xFFFF800000001000, rkey=0x99, read__len=65536))
case("READ_RESP", O["READ_RESP"], FL, F.rresph(200, 0, 64), PAY[:64],
     psn=5000, ppsn=77, path=1, qpn=0xFFFFFF,
     **{"_ws.col.Info": "READ_RESP psn 5000 path 1 qp 16777215 req 200 off 0/64 len 64"},
     **x(req_psn=200, offset=0, msg_len=64))
# --- atomics (ATOMICH, ARESPH)
case("CMP_SWAP", O["CMP_SWAP"], FL,
     F.atomich(0x2000, 0x1111222233334444, 0x5555666677778888, 0x42),
     psn=300, ppsn=4, path=0,
     **{"_ws.col.Info": "CMP_SWAP psn 300 path 0 qp 17"},
     **x(va=0x2000, atomic__swap_add=0x1111222233334444,
         atomic__compare=0x5555666677778888, rkey=0x42))
case("FETCH_ADD", O["FETCH_ADD"], FL, F.atomich(0x2008, 5, 0, 0x42),
     psn=301, ppsn=5, path=1,
     **{"_ws.col.Info": "FETCH_ADD psn 301 path 1 qp 17"},
     **x(va=0x2008, atomic__swap_add=5, atomic__compare=0, rkey=0x42))
case("ATOMIC_RESP", O["ATOMIC_RESP"], FL, F.aresph(0xFEDCBA9876543210, 300),
     psn=5001, ppsn=78, path=2,
     **{"_ws.col.Info": "ATOMIC_RESP psn 5001 path 2 qp 17 req 300"},
     **x(atomic__orig=0xFEDCBA9876543210, req_psn=300))
# --- UD (UDH)
case("UD_SEND", O["UD_SEND"], FL, F.udh(1, 0x80010000), b"gsi mad",
     qpn=1, path=0,
     **{"_ws.col.Info": "UD_SEND path 0 qp 1 src qp 1 len 7"},
     **x(ud__src_qpn=1, ud__qkey=0x80010000, imm=0))
case("UD_SEND_IMM over IPv6", O["UD_SEND_IMM"], FL | F.F_SOLICIT,
     F.udh(0x123456, 0x11111111, imm=0xBEEF), b"x" * 33, qpn=0x654321,
     path=4, v6=True,
     **{"_ws.col.Info": "UD_SEND_IMM path 4 qp 6636321 src qp 1193046 len 33"},
     **x(ud__src_qpn=0x123456, ud__qkey=0x11111111, imm=0xBEEF))
# --- PROBE
case("PROBE", O["PROBE"], F.F_ACKREQ, b"", psn=4242, path=5,
     **{"_ws.col.Info": "PROBE psn 4242 path 5 qp 17"})

# --- ACKs: path records, SACK, DSACK, wrap, every syndrome
case("ACK, SACK, 3 paths, DSACK -5", O["ACK"], 0,
     ackh(1000, dsack_off=-5, tsecr=0x55667788, delay=17, fair=64, rwnd=199,
          ts_path=1, npaths=3, sack=sack(2, 3, 7, 200, 255),
          paths=[(0, 0, 3, 500), (1, 0, 0, 0xFFFFFFFF), (15, 0, 65535, 7)]),
     path=1,
     **{"_ws.col.Info": "ACK cum 1000 dsack 995 sack +2-+3,+7,+200,+255 path 1 qp 17",
        "_ws.expert.message": "DSACK: PSN 995 received twice"},
     **x(ack__cum_psn=1000, ack__nak_psn=0, ack__tsecr=0x55667788,
         ack__ack_delay=17, ack__fair_share=64, ack__rwnd=199,
         ack__syndrome=0, ack__ts_path=1, ack__npaths=3, ack__rnr_timer=0,
         ack__dsack_off=-5, ack__dsack_psn=995, ack__sack__count=5,
         ack__sack__psn=[1002, 1003, 1007, 1200, 1255],
         ack__sack__hole=[1000, 1001] + [1004, 1005, 1006] +
         list(range(1008, 1200)) + list(range(1201, 1255)),
         ack__path__id=[0, 1, 15], ack__path__flags=[0, 0, 0],
         ack__path__ce_count=[3, 0, 65535],
         ack__path__max_ppsn=[500, 0xFFFFFFFF, 7]))
case("ACK across the PSN wrap, DSACK +1", O["ACK"], 0,
     ackh(0xFFFFFFFE, dsack_off=1, rwnd=250, sack=sack(1, 3), npaths=0),
     path=0,
     **{"_ws.col.Info": "ACK cum 4294967294 dsack 4294967295 sack +1,+3 path 0 qp 17",
        "_ws.expert.message": "DSACK: PSN 4294967295 received twice"},
     **x(ack__cum_psn=0xFFFFFFFE, ack__nak_psn=0, ack__tsecr=0,
         ack__ack_delay=0, ack__fair_share=0, ack__rwnd=250,
         ack__syndrome=0, ack__ts_path=0, ack__npaths=0, ack__rnr_timer=0,
         ack__dsack_off=1, ack__dsack_psn=0xFFFFFFFF, ack__sack__count=2,
         ack__sack__psn=[0xFFFFFFFF, 1], ack__sack__hole=[0xFFFFFFFE, 0]))
# version 3: rnr_timer on every NAK (the responder's minimum RNR delay);
# the RNR NAK is of the receive epoch its refusal began (1)
for syn, name in ((1, "RNR"), (2, "INV_REQ"), (3, "REM_ACCESS"),
                  (4, "REM_OP")):
    rnr = 14
    ep = 1 if syn == 1 else 0
    exp = x(ack__cum_psn=70, ack__nak_psn=70 + syn, ack__tsecr=9,
            ack__ack_delay=0, ack__fair_share=0, ack__rwnd=256,
            ack__syndrome=syn, ack__ts_path=2, ack__npaths=1,
            ack__rnr_timer=rnr, ack__dsack_off=0, ack__sack__count=0,
            ack__path__id=[2], ack__path__flags=[0],
            ack__path__ce_count=[1], ack__path__max_ppsn=[12])
    exp["metaroce.ack.rnr_delay_us"] = 1280	# IB code 14 = 1.28 ms
    case("NAK %s" % name, O["ACK"], 0,
         ackh(70, nak=70 + syn, syn=syn, tsecr=9, ts_path=2, rnr=rnr,
              npaths=1, paths=[(2, 0, 1, 12)]),
         path=3, epoch=ep,
         **{"_ws.col.Info": "NAK %s psn %d cum 70 path 3%s qp 17" %
            (name, 70 + syn, " epoch 1" if ep else ""),
            "_ws.expert.message": "NAK %s for PSN %d" % (name, 70 + syn)},
         **exp)

# --- a corrupted packet: the stored ICRC no longer matches
case("WRITE with a corrupted ICRC", O["WRITE"], FL,
     F.writeh(0x3000, 0x5, 1400, 0), PAY, psn=400, ppsn=6, path=1,
     corrupt=True,
     **{"_ws.col.Info": "WRITE psn 400 path 1 qp 17 off 0/1400 len 1400 [BAD ICRC]"},
     **x(va=0x3000, rkey=0x5, msg_len=1400, offset=0, rmsn=0, imm=0))
# fix up the expected expert message (needs the calculated ICRC)
_n, _p, _k, _e = CASES[-1]
_e["_ws.expert.message"] = (
    "ICRC mismatch: 0x%08x, calculated 0x%08x (receiver drops it)" %
    (_e["metaroce.icrc"], _e["metaroce.icrc.calculated"]))

# --- malformed headers a receiver drops (hdr.c rules), ICRC still good
case("malformed: FIRST with offset 8", O["SEND"], FL, F.sendh(1, 12, 8),
     b"abcd", psn=500, ppsn=1, path=0,
     **{"_ws.col.Info": "SEND psn 500 path 0 qp 17 rmsn 1 off 8/12 len 4 [MALFORMED]",
        "_ws.expert.message": "Malformed: FIRST must be set iff offset == 0"},
     **x(rmsn=1, msg_len=12, offset=8, imm=0))
case("malformed: ACK with SACK bit 0", O["ACK"], 0,
     ackh(10, sack=sack(0, 1)), path=0,
     **{"_ws.col.Info": "ACK cum 10 sack +1 path 0 qp 17 [MALFORMED]",
        "_ws.expert.message": "Malformed: SACK bit 0 (cum_psn itself) set"},
     **x(ack__cum_psn=10, ack__nak_psn=0, ack__tsecr=0, ack__ack_delay=0,
         ack__fair_share=0, ack__rwnd=256, ack__syndrome=0, ack__ts_path=0,
         ack__npaths=0, ack__rnr_timer=0, ack__dsack_off=0,
         ack__sack__count=1, ack__sack__psn=[11], ack__sack__hole=[10]))
case("ACK with psn 5: should be 0, not a drop reason", O["ACK"], 0,
     ackh(10), psn=5, path=0,
     **{"_ws.col.Info": "ACK cum 10 path 0 qp 17",
        "_ws.expert.message": "ACK psn/ppsn not 0"},
     **x(ack__cum_psn=10, ack__nak_psn=0, ack__tsecr=0, ack__ack_delay=0,
         ack__fair_share=0, ack__rwnd=256, ack__syndrome=0, ack__ts_path=0,
         ack__npaths=0, ack__rnr_timer=0, ack__dsack_off=0,
         ack__sack__count=0))
_bad_len = F.pkt(O["READ_REQ"], FL, QPN, F.readh(0, 1, 8), psn=501,
                 plen=3)	# no-payload opcode claiming 3 payload bytes
case("malformed: READ_REQ with payload_len 3", O["READ_REQ"], FL, None,
     raw=_bad_len, psn=501,
     **{"_ws.col.Info": "READ_REQ psn 501 path 0 qp 17 len 8 [MALFORMED]",
        "_ws.expert.message":
        "Malformed: payload_len not 0 for an opcode without payload,"
        "Malformed: length 44 != headers 40 + payload_len 3 + 4"},
     **x(va=0, rkey=1, read__len=8))
CASES[-1][3]["metaroce.payload_len"] = 3
# --- UC (BTH flag UC, protocol.rst "Unreliable connected (UC)")
case("UC SEND (flag UC)", O["SEND"], FL | F.F_UC,
     F.sendh(12, 4, 0), b"wxyz", psn=103, ppsn=43, path=3,
     **{"_ws.col.Info": "SEND psn 103 path 3 qp 17 rmsn 12 off 0/4 len 4"},
     **x(rmsn=12, msg_len=4, offset=0, imm=0))
case("UC READ_REQ (malformed)", O["READ_REQ"], FL | F.F_UC,
     F.readh(0x3000, 0x99, 64), psn=104, ppsn=44, path=3,
     **{"_ws.col.Info": "READ_REQ psn 104 path 3 qp 17 len 64 [MALFORMED]",
        "_ws.expert.message": "Malformed: UC flag on an opcode UC does not use"},
     **x(va=0x3000, rkey=0x99, read__len=64))
# --- version 2: the cumulative ACK on reverse data (CUMACK, cum_lo)
case("WRITE carrying cum_lo", O["WRITE"], FL | F.F_CUMACK,
     F.writeh(0x2000, 0x42, 2, 0), b"hi", psn=600, ppsn=3, path=1,
     cum_lo=0xBEEF,
     **{"_ws.col.Info": "WRITE psn 600 path 1 qp 17 off 0/2 len 2"},
     **x(va=0x2000, rkey=0x42, msg_len=2, offset=0, rmsn=0, imm=0))
case("READ_RESP carrying cum_lo 0", O["READ_RESP"], FL | F.F_CUMACK,
     F.rresph(77, 0, 2), b"ok", psn=601, ppsn=4, path=1, cum_lo=0,
     **{"_ws.col.Info": "READ_RESP psn 601 path 1 qp 17 req 77 off 0/2 len 2"},
     **x(req_psn=77, offset=0, msg_len=2))
case("malformed: CUMACK on an ACK", O["ACK"], F.F_CUMACK, ackh(10),
     path=0, cum_lo=10,
     **{"_ws.col.Info": "ACK cum 10 path 0 qp 17 [MALFORMED]",
        "_ws.expert.message":
        "Malformed: CUMACK on an unsequenced packet,"
        "Malformed: ACK flags not 0"},
     **x(ack__cum_psn=10, ack__nak_psn=0, ack__tsecr=0, ack__ack_delay=0,
         ack__fair_share=0, ack__rwnd=256, ack__syndrome=0, ack__ts_path=0,
         ack__npaths=0, ack__rnr_timer=0, ack__dsack_off=0,
         ack__sack__count=0))
case("malformed: UC SEND with CUMACK", O["SEND"], FL | F.F_UC | F.F_CUMACK,
     F.sendh(13, 4, 0), b"wxyz", psn=105, ppsn=45, path=3, cum_lo=7,
     **{"_ws.col.Info": "SEND psn 105 path 3 qp 17 rmsn 13 off 0/4 len 4 [MALFORMED]",
        "_ws.expert.message":
        "Malformed: UC flag together with ACKREQ, RETX or CUMACK"},
     **x(rmsn=13, msg_len=4, offset=0, imm=0))
# --- version 3: the request epoch (BTH byte 3 = path | epoch << 4), the
# ACK's void PSN (nak_psn of a syndrome ACK), rnr_timer on every ACK
EPOCH_SEND = "SEND of request epoch 5 on path 3"
EPOCH_ACK = "ACK of receive epoch 5, void PSN 695, rnr 14"
case(EPOCH_SEND, O["SEND"], FL, F.sendh(20, 4, 0), b"epo5",
     psn=700, ppsn=50, path=3, epoch=5,
     **{"_ws.col.Info": "SEND psn 700 path 3 epoch 5 qp 17 rmsn 20 off 0/4 len 4"},
     **x(rmsn=20, msg_len=4, offset=0, imm=0))
case("READ_REQ of epoch 15 on path 15 (byte 3 0xff: valid)", O["READ_REQ"],
     FL, F.readh(0x4000, 0x99, 128), psn=701, ppsn=51, path=15, epoch=15,
     **{"_ws.col.Info": "READ_REQ psn 701 path 15 epoch 15 qp 17 len 128"},
     **x(va=0x4000, rkey=0x99, read__len=128))
case(EPOCH_ACK, O["ACK"], 0, ackh(701, nak=695, rnr=14, rwnd=200),
     path=2, epoch=5,
     **{"_ws.col.Info": "ACK cum 701 void 695 path 2 epoch 5 qp 17"},
     **x(ack__cum_psn=701, ack__nak_psn=695, ack__tsecr=0, ack__ack_delay=0,
         ack__fair_share=0, ack__rwnd=200, ack__syndrome=0, ack__ts_path=0,
         ack__npaths=0, ack__rnr_timer=14, ack__dsack_off=0,
         ack__sack__count=0))
case("READ_RESP with epoch bits: ignored, a warning", O["READ_RESP"], FL,
     F.rresph(701, 0, 4), b"resp", psn=5002, ppsn=79, path=1, epoch=2,
     **{"_ws.col.Info": "READ_RESP psn 5002 path 1 qp 17 req 701 off 0/4 len 4",
        "_ws.expert.message": "Epoch not 0 on a packet without one (ignored)"},
     **x(req_psn=701, offset=0, msg_len=4))
# the previous wire version: dropped, only its BTH is decoded
case("malformed: wire version 2", O["WRITE"], FL, None, b"old!",
     raw=F.pkt(O["WRITE"], FL, QPN, F.writeh(0x5000, 0x42, 4, 0), b"old!",
               psn=702, ppsn=52, path=1, version=2),
     psn=702, ppsn=52, path=1,
     **{"_ws.col.Info": "WRITE psn 702 path 1 qp 17 [MALFORMED]",
        "_ws.expert.message": "Malformed: version 2 (not %d)" % F.VERSION})
_n, _p, _k, _e = CASES[-1]
_e["metaroce.version"] = 2
for _f in ("metaroce.payload", "metaroce.icrc", "metaroce.icrc.status",
           "metaroce.icrc.calculated"):
    del _e[_f]


def mutants(cases, n, seed=1):
    """n damaged copies of every crafted packet (deterministic)."""
    rng = random.Random(seed)
    out = []
    for _name, pkt, _kw, _e in cases:
        for _ in range(n):
            b = bytearray(pkt)
            r = rng.random()
            if r < 0.3:
                b = b[:rng.randrange(0, len(b) + 1)]
            elif r < 0.6:
                for _ in range(rng.randrange(1, 6)):
                    b[rng.randrange(len(b))] = rng.randrange(256)
            elif r < 0.8:
                b += bytes(rng.randrange(256)
                           for _ in range(rng.randrange(1, 40)))
            else:
                b = bytearray(rng.randrange(256)
                              for _ in range(rng.randrange(2, 300)))
                b[0] = 1
                b[1] = rng.choice(list(F.EXT) + [0x0d, 0xff])
            out.append(bytes(b))
    return out


# ------------------------------------------------------------ running
def tshark(lua, pcap, fields, extra=()):
    cmd = ["tshark", "-n", "-X", "lua_script:" + lua, "-r", pcap,
           "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
           "-E", "aggregator=,"] + list(extra)
    for fl in fields:
        cmd += ["-e", fl]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    err = "\n".join(ln for ln in p.stderr.splitlines()
                    if "dangerous" not in ln)
    rows = [ln.split("\t") for ln in p.stdout.splitlines()]
    return p.returncode, rows, err


def norm(field, v):
    """tshark's text of a field -> comparable value."""
    if v == "":
        return None
    if field in ("_ws.col.Info", "_ws.col.Protocol", "_ws.expert.message"):
        return v
    if field == "metaroce.payload":
        return v.replace(":", "")
    out = []
    for part in v.split(","):
        if part in ("True", "False"):
            out.append(1 if part == "True" else 0)
        else:
            out.append(int(part, 0))
    return out


def want(v):
    if v is None or isinstance(v, str):
        return v
    return list(v) if isinstance(v, (list, tuple)) else [v]


class Result:
    def __init__(self, verbose):
        self.p = self.f = 0
        self.verbose = verbose

    def check(self, ok, desc, detail=""):
        if ok:
            self.p += 1
            if self.verbose:
                print("ok    " + desc)
        else:
            self.f += 1
            print("FAIL  " + desc + (("\n      " + detail) if detail else ""))
        return ok


def short(v):
    t = repr(v)
    return t if len(t) < 100 else t[:100] + "...(%d chars)" % len(t)


def compare(rows, cases):
    """Mismatches per case: [(case name, [text...])]."""
    out = []
    for i, (name, _pkt, _kw, exp) in enumerate(cases):
        row = rows[i] if i < len(rows) else [""] * len(FIELDS)
        row += [""] * (len(FIELDS) - len(row))
        bad = []
        for j, fl in enumerate(FIELDS):
            got = norm(fl, row[j])
            w = want(exp.get(fl))
            if got != w:
                bad.append("%s: decoded %s, crafted %s" %
                           (fl, short(row[j]), short(exp.get(fl))))
        out.append((name, bad))
    return out


def wire_versions(lua):
    """(MRC_WIRE_VERSION of wire.h, the dissector's VERSION) or None."""
    def grab(path, rx):
        try:
            with open(path) as fh:
                m = re.search(rx, fh.read(), re.M)
        except OSError:
            return None
        return int(m.group(1)) if m else None
    return (grab(WIRE_H, r"^#define\s+MRC_WIRE_VERSION\s+(\d+)"),
            grab(lua, r"^local VERSION = (\d+)"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--keep", help="write the pcaps into this directory")
    ap.add_argument("--lua", default=LUA, help="dissector to test")
    a = ap.parse_args()
    r = Result(a.verbose)

    if not shutil.which("tshark"):
        print("FAIL  tshark is not installed (scripts/setup.sh installs it)")
        print("0 passed, 1 failed")
        return 1
    # 0. one wire version: wire.h's, the dissector's and the forger's
    wv, lv = wire_versions(a.lua)
    r.check(wv is not None and wv == lv == F.VERSION,
            "wire version %s: the dissector's and mrc_forge's agree" % wv,
            "wire.h %s, metaroce.lua %s, mrc_forge.py %s" %
            (wv, lv, F.VERSION))
    tmp = a.keep or tempfile.mkdtemp(prefix="mrc-wire-")
    os.makedirs(tmp, exist_ok=True)
    try:
        pcap = os.path.join(tmp, "crafted.pcap")
        write_pcap(pcap, [frame(p, **kw) for _n, p, kw, _e in CASES])

        # 1. every crafted packet, every field
        rc, rows, err = tshark(a.lua, pcap, FIELDS)
        r.check(rc == 0 and not err.strip(), "tshark loads the dissector and reads the pcap",
                "rc %d: %s" % (rc, err.strip()))
        r.check(len(rows) == len(CASES), "%d packets decoded" % len(CASES),
                "got %d rows" % len(rows))
        for name, bad in compare(rows, CASES):
            r.check(not bad, "decode: " + name, "\n      ".join(bad))
        # the epoch (version 3), spelled out: BTH byte 3 0x53 of a SEND
        # and an ACK is path 3 / 2 and epoch 5, in fields of their own
        names = [c[0] for c in CASES]
        col = {fl: j for j, fl in enumerate(FIELDS)}
        for cname, path in ((EPOCH_SEND, 3), (EPOCH_ACK, 2)):
            i = names.index(cname)
            row = rows[i] if i < len(rows) else []
            got = dict((fl, row[col[fl]] if col[fl] < len(row) else "")
                       for fl in ("metaroce.path_id", "metaroce.epoch"))
            r.check(got == {"metaroce.path_id": str(path),
                            "metaroce.epoch": "5"},
                    "%s: metaroce.path_id %d, metaroce.epoch 5" %
                    (cname, path), "decoded %r" % got)

        # 2. display filters an operator uses
        for flt, n in (("metaroce.flags.retx == 1", 1),
                       ("metaroce.icrc.status == 0", 1),
                       ("metaroce.icrc.bad", 1),
                       ("metaroce.ack.syndrome > 0", 4),
                       ("metaroce.ack.sack.psn == 1200", 1),
                       ("metaroce.flags.cumack == 1", 4),
                       ("metaroce.cum_lo == 0xbeef", 1),
                       ("metaroce.malformed.expert", 7),
                       ("metaroce.epoch == 5", 2),
                       ("metaroce.path_id == 3 && metaroce.epoch == 5", 1),
                       ("metaroce.path_id == 15 && metaroce.epoch == 15", 1),
                       ("metaroce.opcode == 0x10 && metaroce.epoch == 5", 1),
                       ("metaroce.epoch", sum(1 for c in CASES
                                              if "metaroce.epoch" in c[3])),
                       ("metaroce.ack.syndrome == 0 && "
                        "metaroce.ack.nak_psn != 0", 1),
                       ("metaroce", len(CASES))):
            rc, rows, err = tshark(a.lua, pcap, ["frame.number"],
                                   ["-Y", flt])
            r.check(rc == 0 and len(rows) == n,
                    "filter '%s' matches %d packet(s)" % (flt, n),
                    "rc %d, %d rows: %s" % (rc, len(rows), err.strip()))

        # 3. the port is a preference
        p2 = os.path.join(tmp, "port4000.pcap")
        _n, pk, _kw, _e = CASES[3]	# the WRITE retransmission
        write_pcap(p2, [frame(pk, 49154, dport=4000)])
        info = "_ws.col.Info"
        rc, rows, err = tshark(a.lua, p2, ["_ws.col.Protocol", info])
        r.check(rc == 0 and rows and rows[0][0] != "METAROCE",
                "UDP port 4000 is not metaroce by default",
                "rc %d %r %s" % (rc, rows, err))
        rc, rows, err = tshark(a.lua, p2, ["_ws.col.Protocol", info,
                                           "metaroce.psn"],
                               ["-o", "metaroce.udp_port:4000"])
        r.check(rc == 0 and rows and rows[0][0] == "METAROCE" and
                rows[0][2] == "123",
                "-o metaroce.udp_port:4000 decodes it",
                "rc %d %r %s" % (rc, rows, err))

        # 4. hostile input: truncated, bit-flipped, extended and random
        # packets are decoded as malformed, never a Lua error
        p3 = os.path.join(tmp, "mutated.pcap")
        write_pcap(p3, [frame(m, 49152) for m in mutants(CASES, 100)])
        rc, rows, err = tshark(a.lua, p3, ["_ws.expert.message"])
        errs = [r[0] for r in rows if "Lua Error" in r[0]]
        r.check(rc == 0 and len(rows) == 100 * len(CASES) and not errs,
                "%d mutated packets decode without a Lua error" %
                (100 * len(CASES)),
                "rc %d, %d rows, %d Lua errors: %s %s" %
                (rc, len(rows), len(errs), errs[:3], err.strip()))

        # 5. the test can fail: a dissector that reads the PSN at the PPSN's
        # offset must be caught
        with open(a.lua) as fh:
            src = fh.read()
        mut = src.replace("bt:add(f.psn, tvb(8, 4))",
                          "bt:add(f.psn, tvb(12, 4))", 1)
        if r.check(mut != src, "mutant dissector prepared"):
            ml = os.path.join(tmp, "mutant.lua")
            with open(ml, "w") as fh:
                fh.write(mut)
            rc, rows, err = tshark(ml, pcap, FIELDS)
            caught = [n for n, bad in compare(rows, CASES) if bad]
            r.check(len(caught) >= 10,
                    "a broken PSN field is caught (%d cases fail)" %
                    len(caught))
        # and one that shows BTH byte 3's epoch as a text line, no field
        mut = src.replace("local ep = bt:add(f.epoch, tvb(3, 1))",
                          "local ep = bt:add(tvb(3, 1), \"Epoch\")", 1)
        if r.check(mut != src, "epoch-less mutant dissector prepared"):
            ml = os.path.join(tmp, "mutant-epoch.lua")
            with open(ml, "w") as fh:
                fh.write(mut)
            rc, rows, err = tshark(ml, pcap, FIELDS)
            caught = [n for n, bad in compare(rows, CASES) if bad]
            r.check(EPOCH_SEND in caught and EPOCH_ACK in caught and
                    len(caught) >= 10,
                    "a missing epoch field is caught (%d cases fail)" %
                    len(caught), "caught: %r" % caught)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (r.p, r.f))
    return 1 if r.f else 0


if __name__ == "__main__":
    sys.exit(main())
