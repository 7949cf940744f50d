#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""mrc_forge: forge hostile metaroce packets (Documentation/protocol.rst).

Python 3 standard library only. Sends UDP datagrams to DST:PORT (the
metaroce port, 19791 by default) and prints one summary line per case:
"CASE: N packets". Used by selftests/lab/hostile.sh from node n1 against
node n2; the target QPs and MR come from the info file that
selftests/tools/mrc_target.c writes (--info).

    mrc_forge.py CASE --dst IP [--info FILE] [--qp I] [--psn N] [--seed N]
                 [--count N] [--avoid QPN,QPN...] [--pcap FILE]
                 [--qpn N] [--bind IP [--freebind]] [--raw-src IP]

Cases: trunc version opcode flags path qpn icrc lengths write_rkey
write_wrap write_bounds read_2g atomic send_junk ack ack_npaths255
unsolicited probe ud gsi random replay dup spoof ack_anchor crc_selftest.

Source address (peer validation, selftests/lab/peer.sh): by default the
kernel picks it. --bind IP binds the socket to IP first (with --freebind
even to an address that is not local: IP_FREEBIND / IPV6_FREEBIND, which
needs no privilege; the kernel may still refuse to send from it, which is
reported, not an error). --raw-src IP writes IPv4 + UDP headers with that
source through a raw socket (CAP_NET_RAW). DST may be IPv6.
"""
import argparse
import os
import random
import socket
import struct
import sys
import time

# ------------------------------------------------------------ CRC32C
_POLY = 0x82F63B78
_TAB = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ _POLY if _c & 1 else _c >> 1
    _TAB.append(_c)


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    tab = _TAB
    for b in data:
        crc = tab[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


# ------------------------------------------------------------ wire format
# 3: the request epoch (protocol.rst "RNR and the request epoch"): BTH
# byte 3 is path (bits 0-3) | epoch << 4 -- any value is a valid path --,
# an ACK's nak field is the void PSN on syndrome ACK, rnr on every ACK
VERSION = 3
OP = dict(SEND=0x01, SEND_IMM=0x02, SEND_INV=0x03, WRITE=0x04,
          WRITE_IMM=0x05, READ_REQ=0x06, READ_RESP=0x07, CMP_SWAP=0x08,
          FETCH_ADD=0x09, ATOMIC_RESP=0x0a, UD_SEND=0x0b, UD_SEND_IMM=0x0c,
          ACK=0x10, PROBE=0x11)
EXT = {0x01: 16, 0x02: 16, 0x03: 16, 0x04: 32, 0x05: 32, 0x06: 16,
       0x07: 16, 0x08: 32, 0x09: 32, 0x0a: 16, 0x0b: 16, 0x0c: 16,
       0x10: 56, 0x11: 0}
F_FIRST, F_LAST, F_ACKREQ, F_SOLICIT, F_RETX, F_UC = 1, 2, 4, 8, 0x10, 0x20
F_CUMACK = 0x40	# version 2: BTH bytes 22-23 are cum_lo
FL = F_FIRST | F_LAST
BTH_LEN = 24
EPOCH_SHIFT = 4	# version 3: BTH byte 3 = path | epoch << 4
MAX_MSG = 0x80000000


def bth(op, flags, qpn, psn=0, ppsn=0, plen=0, path=0, version=VERSION,
        tsval=0x1234, reserved=0, cum_lo=None, epoch=0):
    """BTH; cum_lo (with F_CUMACK) goes where reserved does. Byte 3 is
    path | epoch << 4 (version 3: a request's request epoch, an ACK's
    receive epoch), kept to 8 bits (path alone may be any byte)."""
    if cum_lo is not None:
        reserved = cum_lo & 0xFFFF
    return struct.pack(">BBBBIIIIHH", version, op, flags,
                       (path | epoch << EPOCH_SHIFT) & 0xFF,
                       qpn & 0xFFFFFFFF, psn & 0xFFFFFFFF,
                       ppsn & 0xFFFFFFFF, tsval, plen & 0xFFFF, reserved)


def sendh(rmsn, msg_len, offset, imm=0):
    return struct.pack(">IIII", rmsn & 0xFFFFFFFF, msg_len & 0xFFFFFFFF,
                       offset & 0xFFFFFFFF, imm)


def writeh(va, rkey, msg_len, offset, rmsn=0, imm=0):
    return struct.pack(">QIIIIII", va & (2**64 - 1), rkey & 0xFFFFFFFF,
                       msg_len & 0xFFFFFFFF, offset & 0xFFFFFFFF, rmsn,
                       imm, 0)


def readh(va, rkey, length):
    return struct.pack(">QII", va & (2**64 - 1), rkey & 0xFFFFFFFF,
                       length & 0xFFFFFFFF)


def rresph(req_psn, offset, msg_len):
    return struct.pack(">IIII", req_psn & 0xFFFFFFFF, offset, msg_len, 0)


def atomich(va, swap_add, compare, rkey):
    return struct.pack(">QQQII", va & (2**64 - 1), swap_add, compare,
                       rkey & 0xFFFFFFFF, 0)


def aresph(orig, req_psn):
    return struct.pack(">QII", orig, req_psn & 0xFFFFFFFF, 0)


def udh(src_qpn, qkey, imm=0):
    return struct.pack(">IIII", src_qpn & 0xFFFFFFFF, qkey & 0xFFFFFFFF,
                       imm, 0)


def ackh(cum, nak=0, tsecr=0, delay=0, fair=0, rwnd=256, syn=0, ts_path=0,
         npaths=0, rnr=0, sack=bytes(32), paths=()):
    """ACKH. nak: a NAK's PSN; on a syndrome ACK (version 3) the void PSN
    (the PSN whose RNR refusal began the receive epoch, 0 if none). rnr:
    the IB-encoded RNR delay, on every ACK since version 3."""
    h = struct.pack(">IIIHHHBBBBH", cum & 0xFFFFFFFF, nak & 0xFFFFFFFF,
                    tsecr, delay, fair, rwnd, syn, ts_path, npaths, rnr, 0)
    h += sack
    for (pid, pfl, ce, maxp) in paths:
        h += struct.pack(">BBHI", pid, pfl, ce, maxp & 0xFFFFFFFF)
    return h


def icrc(pkt):
    return pkt + struct.pack(">I", crc32c(pkt))


def pkt(op, flags, qpn, ext, payload=b"", psn=0, ppsn=0, plen=None,
        path=0, **kw):
    """A packet with a valid ICRC (plen overrides the BTH payload_len)."""
    if plen is None:
        plen = len(payload)
    return icrc(bth(op, flags, qpn, psn, ppsn, plen, path, **kw) + ext +
                payload)


# ------------------------------------------------------------ plumbing
class Ctx:
    def __init__(self, a):
        self.a = a
        self.dst = (a.dst, a.port)
        self.t0 = time.time()
        self.fam = socket.AF_INET6 if ":" in a.dst else socket.AF_INET
        self.raw = None
        self.refused = None
        if a.raw_src:
            self.raw = socket.inet_aton(a.raw_src)
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                                      socket.IPPROTO_RAW)
        else:
            self.sock = socket.socket(self.fam, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
        if a.bind:
            if a.freebind:
                if self.fam == socket.AF_INET6:
                    self.sock.setsockopt(socket.IPPROTO_IPV6, 78, 1)
                else:
                    self.sock.setsockopt(socket.IPPROTO_IP, 15, 1)
            try:
                self.sock.bind((a.bind, 0))
            except OSError as e:
                self.refused = "bind %s: %s" % (a.bind, e)
        self.n = 0
        self.out = open(a.out, "ab") if a.out else None
        self.info = {}
        if a.info:
            with open(a.info) as f:
                for line in f:
                    k, _, v = line.strip().partition(" ")
                    self.info[k] = v
        self.avoid = set()
        if a.avoid:
            self.avoid = {int(x, 0) for x in a.avoid.split(",") if x}

    def _raw(self, data):
        """IPv4 + UDP headers around @data, source --raw-src."""
        sport = 49152 + self.n % 16384
        udp = struct.pack(">HHHH", sport, self.a.port, 8 + len(data), 0)
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(data),
                         self.n & 0xFFFF, 0x4000, 64, 17, 0, self.raw,
                         socket.inet_aton(self.a.dst))
        return ip + udp + data

    def send(self, data, gap=0.0):
        if self.out:
            self.out.write(struct.pack(">H", len(data)) + data)
            self.n += 1
            return
        if self.refused:
            return
        if self.raw:
            data = self._raw(data)
        try:
            self.sock.sendto(data, self.dst)
        except OSError as e:
            if self.a.bind and e.errno in (1, 13, 22, 99, 101):
                # the kernel will not send from this source: nothing left
                # the host (EPERM, EACCES, EINVAL, EADDRNOTAVAIL, ENETUNREACH)
                self.refused = "sendto from %s: %s" % (self.a.bind, e)
                return
            self._retry(data, e)
            return
        self._sent(gap)

    def _retry(self, data, e):
        # ENOBUFS etc.: retry once after a breath
        time.sleep(0.01)
        try:
            self.sock.sendto(data, self.dst)
        except OSError:
            print("send failed: %s" % e, file=sys.stderr)
            return
        self._sent(0)

    def _sent(self, gap):
        self.n += 1
        # pace: the receiver is a TCG guest with one vCPU; an unpaced flood
        # overruns its virtio ring and starves legit traffic (a DoS test
        # is not what this is)
        if self.a.pps and self.n % 16 == 0:
            ahead = self.t0 + self.n / self.a.pps - time.time()
            if ahead > 0:
                time.sleep(ahead)
        if gap:
            time.sleep(gap)

    def qpn(self, i=None):
        if self.a.qpn is not None and i is None:
            return self.a.qpn
        i = self.a.qp if i is None else i
        return int(self.info["qpn.%d" % i])

    def psn(self, i=None):
        """The PSN the target QP expects next (peer's initial PSN)."""
        if self.a.psn is not None:
            return self.a.psn
        i = self.a.qp if i is None else i
        return int(self.info["peer_psn.%d" % i])

    @property
    def rkey(self):
        return int(self.info.get("rkey", 0))

    @property
    def va(self):
        return int(self.info.get("va", 0))

    @property
    def mrlen(self):
        return int(self.info.get("mrlen", 4096))

    def free_qpn(self, rng):
        # QPNs are random in [2, 2^24): a QP created while we run may get
        # any number, but hitting one is unlikely (live QPs / 2^24) and
        # its peer check drops what does not come from its peer
        while True:
            q = rng.randrange(2, 1 << 24)
            if q not in self.avoid:
                return q


JUNK = 0xEE  # payload byte of every hostile WRITE: must never be placed


def samples(c):
    """One valid packet per opcode, to the target QP (for mutation)."""
    q, psn, va, rk = c.qpn(), c.psn(), c.va, c.rkey
    pl = bytes([JUNK]) * 64
    return [
        pkt(OP["SEND"], FL, q, sendh(0, 64, 0), pl, psn),
        pkt(OP["SEND_IMM"], FL, q, sendh(0, 64, 0, 7), pl, psn),
        pkt(OP["SEND_INV"], FL, q, sendh(0, 64, 0, rk), pl, psn),
        pkt(OP["WRITE"], FL, q, writeh(va, rk, 64, 0), pl, psn),
        pkt(OP["WRITE_IMM"], FL, q, writeh(va, rk, 64, 0, 0, 5), pl, psn),
        pkt(OP["READ_REQ"], FL, q, readh(va, rk, 64), b"", psn),
        pkt(OP["READ_RESP"], FL, q, rresph(psn, 0, 64), pl, psn),
        pkt(OP["CMP_SWAP"], FL, q, atomich(va, 1, 0, rk), b"", psn),
        pkt(OP["FETCH_ADD"], FL, q, atomich(va, 1, 0, rk), b"", psn),
        pkt(OP["ATOMIC_RESP"], FL, q, aresph(0, psn), b"", psn),
        pkt(OP["UD_SEND"], FL, q, udh(5, 0x1111), pl),
        pkt(OP["UD_SEND_IMM"], FL, q, udh(5, 0x1111, 9), pl),
        pkt(OP["ACK"], 0, q, ackh(psn, npaths=2,
                                   paths=[(0, 0, 0, 1), (1, 0, 0, 1)])),
        pkt(OP["PROBE"], F_ACKREQ, q, b""),
    ]


# ------------------------------------------------------------ cases
def case_samples(c):
    """One well-formed packet per opcode (the base of the mutations)."""
    for p in samples(c):
        c.send(p)


def case_crc_selftest(c):
    assert crc32c(b"123456789") == 0xE3069283, hex(crc32c(b"123456789"))
    c.n = 1


def case_trunc(c):
    """Every packet cut at every length from 0 to its full length - 1."""
    for p in samples(c):
        for n in range(0, len(p)):
            c.send(p[:n])
        # and cut before the ICRC, with an ICRC recomputed over the cut
        for n in range(0, len(p) - 4):
            c.send(icrc(p[:n]))


def case_version(c):
    q, psn = c.qpn(), c.psn()
    # every version but VERSION (3); 2 is the previous one
    for v in (0, 1, 2, 4, 0x7F, 0x80, 0xFF):
        for op in (OP["WRITE"], OP["ACK"], OP["PROBE"]):
            ext = (writeh(c.va, c.rkey, 8, 0) if op == OP["WRITE"] else
                   ackh(psn) if op == OP["ACK"] else b"")
            pl = bytes([JUNK]) * 8 if op == OP["WRITE"] else b""
            c.send(pkt(op, FL if op == OP["WRITE"] else 0, q, ext, pl, psn,
                       version=v))


def case_opcode(c):
    q, psn = c.qpn(), c.psn()
    for op in range(256):
        if op in EXT:
            continue
        for extra in (0, 16, 32, 56, 300):
            c.send(pkt(op, FL, q, bytes(extra), b"", psn))


def case_flags(c):
    q, psn, va, rk = c.qpn(), c.psn(), c.va, c.rkey
    pl = bytes([JUNK]) * 32
    # 0x40 (CUMACK) is valid on RC requests since version 2, not with UC
    for f in (0x20, 0x80, 0xC0, 0xE0, 0xFF, FL | 0x20, FL | 0x60):
        c.send(pkt(OP["WRITE"], f, q, writeh(va, rk, 32, 0), pl, psn))
        c.send(pkt(OP["SEND"], f, q, sendh(0, 32, 0), pl, psn))
    for f in (0x20, 0x40, 0x80, 0xE0, 0xFF, FL | 0x20):
        c.send(pkt(OP["ACK"], f, q, ackh(psn)))
        c.send(pkt(OP["PROBE"], f, q, b""))
    # CUMACK on unsequenced packets (UD) is malformed
    c.send(pkt(OP["UD_SEND"], FL | F_CUMACK, q, udh(1, 1), pl,
               cum_lo=psn))
    # FIRST/LAST inconsistent with offsets
    c.send(pkt(OP["WRITE"], 0, q, writeh(va, rk, 32, 0), pl, psn))
    c.send(pkt(OP["WRITE"], F_FIRST, q, writeh(va, rk, 32, 0), pl, psn))
    c.send(pkt(OP["WRITE"], FL, q, writeh(va, rk, 64, 32), pl, psn))
    c.send(pkt(OP["WRITE"], F_LAST, q, writeh(va, rk, 64, 0), pl, psn))
    # single-packet opcodes without FIRST|LAST
    for f in (0, F_FIRST, F_LAST):
        c.send(pkt(OP["READ_REQ"], f, q, readh(va, rk, 8), b"", psn))
        c.send(pkt(OP["FETCH_ADD"], f, q, atomich(va, 1, 0, rk), b"", psn))
        c.send(pkt(OP["UD_SEND"], f, q, udh(1, 1), pl))


def case_path(c):
    """Path ids >= 16 where they are still invalid: an ACK's ts_path and
    its path records. Version 3 made the BTH's byte 3 path | epoch << 4:
    every value of it is a valid path (0-15) and epoch, so a BTH path id
    can no longer be out of range -- a WRITE with byte 3 = 16 would be a
    well-formed request of epoch 1, no parse drop -- and none is forged."""
    q, psn = c.qpn(), c.psn()
    for pid in (16, 17, 100, 255):
        c.send(pkt(OP["ACK"], 0, q, ackh(psn, ts_path=pid)))
        c.send(pkt(OP["ACK"], 0, q, ackh(psn, npaths=1,
                                          paths=[(pid, 0, 1, 1)])))
    # duplicated path records, non-zero record flags
    c.send(pkt(OP["ACK"], 0, q, ackh(psn, npaths=2,
                                      paths=[(3, 0, 1, 1), (3, 0, 2, 2)])))
    c.send(pkt(OP["ACK"], 0, q, ackh(psn, npaths=1,
                                      paths=[(3, 0xFF, 1, 1)])))


def case_qpn(c):
    rng = random.Random(c.a.seed)
    va, rk = c.va, c.rkey
    pl = bytes([JUNK]) * 16
    q = c.qpn()
    qpns = [0, 1, 0xFFFFFF, 0x1000000 | q, 0xFF000000 | q, 0xFFFFFFFF]
    qpns += [c.free_qpn(rng) for _ in range(40)]
    for dq in qpns:
        c.send(pkt(OP["WRITE"], FL, dq, writeh(va, rk, 16, 0), pl, 0))
        c.send(pkt(OP["SEND"], FL, dq, sendh(0, 16, 0), pl, 0))
        c.send(pkt(OP["READ_REQ"], FL, dq, readh(va, rk, 16), b"", 0))
        c.send(pkt(OP["ACK"], 0, dq, ackh(0)))
        c.send(pkt(OP["PROBE"], 0, dq, b""))
        c.send(pkt(OP["UD_SEND"], FL, dq, udh(7, 0x11111111), pl))
    # src_qpn wider than 24 bits in a UDH
    c.send(pkt(OP["UD_SEND"], FL, q, udh(0x1000001, 0x11111111), pl))


def case_icrc(c):
    """Valid WRITEs/SENDs to the live target with the ICRC broken."""
    q, psn, va, rk = c.qpn(), c.psn(), c.va, c.rkey
    pl = bytes([JUNK]) * 256
    for i in range(32):
        p = bytearray(pkt(OP["WRITE"], FL, q, writeh(va + i * 256, rk, 256,
                                                      0), pl, psn + i))
        p[-1 - (i % 4)] ^= 1 << (i % 8)
        c.send(bytes(p))
        p = bytearray(pkt(OP["SEND"], FL, q, sendh(i, 256, 0), pl, psn + i))
        p[BTH_LEN + 20 + i % 200] ^= 0x40  # flip a payload bit
        c.send(bytes(p))


def case_lengths(c):
    """Valid ICRC, lengths that do not add up."""
    q, psn, va, rk = c.qpn(), c.psn(), c.va, c.rkey
    pl = bytes([JUNK]) * 64
    w = OP["WRITE"]
    for plen in (0, 1, 63, 65, 128, 4096, 4097, 0xFFFF):
        c.send(pkt(w, FL, q, writeh(va, rk, 64, 0), pl, psn, plen=plen))
        c.send(pkt(OP["SEND"], FL, q, sendh(0, 64, 0), pl, psn, plen=plen))
        c.send(pkt(OP["READ_REQ"], FL, q, readh(va, rk, 8), b"", psn,
                   plen=plen))
    big = bytes([JUNK]) * 4200  # payload above MRC_MAX_PAYLOAD
    c.send(pkt(w, FL, q, writeh(va, rk, 4200, 0), big, psn))
    for msg_len, off, flags in ((MAX_MSG + 1, 0, F_FIRST),
                                (0xFFFFFFFF, 0, F_FIRST),
                                (MAX_MSG, MAX_MSG - 32, F_LAST),
                                (MAX_MSG, MAX_MSG, F_LAST),
                                (64, 128, F_LAST),
                                (64, 0xFFFFFFF0, F_LAST),
                                (0xFFFFFFFF, 0xFFFFFFC0, F_LAST),
                                (32, 0, FL)):
        c.send(pkt(w, flags, q, writeh(va, rk, msg_len, off), pl, psn))
        c.send(pkt(OP["SEND"], flags, q, sendh(0, msg_len, off), pl, psn))
        c.send(pkt(OP["READ_RESP"], flags, q, rresph(psn, off, msg_len), pl,
                   psn))
    # a middle packet without payload
    c.send(pkt(w, 0, q, writeh(va, rk, 64, 32), b"", psn))
    # READ_REQ with payload
    c.send(pkt(OP["READ_REQ"], FL, q, readh(va, rk, 8), pl, psn))


def _bad_write(c, va, rkey, length, off=0, msg_len=None, n=1):
    q, psn = c.qpn(), c.psn()
    msg_len = length if msg_len is None else msg_len
    pl = bytes([JUNK]) * length
    for i in range(n):
        flags = (F_FIRST if off == 0 else 0) | \
                (F_LAST if off + length == msg_len else 0)
        c.send(pkt(OP["WRITE"], flags, q, writeh(va, rkey, msg_len, off),
                   pl, psn + i), gap=0.01)


def case_write_rkey(c):
    """WRITEs at the expected PSN with keys that do not exist."""
    for rk in (0, 0xFFFFFFFF, c.rkey ^ 0x100, c.rkey ^ 0x1, c.rkey + 0x10000):
        _bad_write(c, c.va, rk, 64)


def case_write_wrap(c):
    """va + offset wrapping 2^64, with the right rkey."""
    _bad_write(c, 2**64 - 32, c.rkey, 64)
    _bad_write(c, 2**64 - 1, c.rkey, 2)
    _bad_write(c, c.va, c.rkey, 64, off=64, msg_len=128)  # not FIRST
    _bad_write(c, 2**64 - 64, c.rkey, 64, off=64, msg_len=128)


def case_write_bounds(c):
    """The right rkey, ranges outside the MR."""
    va, n = c.va, c.mrlen
    _bad_write(c, va + n - 8, c.rkey, 64)
    _bad_write(c, va + n, c.rkey, 64)
    _bad_write(c, va - 64, c.rkey, 64)
    _bad_write(c, va - 8, c.rkey, 64)
    _bad_write(c, va, c.rkey, 64, off=n, msg_len=n + 64)
    _bad_write(c, 0, c.rkey, 64)


def case_read_2g(c):
    q, psn, va, rk = c.qpn(), c.psn(), c.va, c.rkey
    for ln, v in ((MAX_MSG, va), (MAX_MSG, 0), (MAX_MSG + 1, va),
                  (0xFFFFFFFF, va), (c.mrlen + 1, va), (64, 2**64 - 32)):
        c.send(pkt(OP["READ_REQ"], FL, q, readh(v, rk, ln), b"", psn),
               gap=0.01)


def case_atomic(c):
    q, psn, va, rk = c.qpn(), c.psn(), c.va, c.rkey
    for v, k in ((va + 1, rk), (va + 4, rk), (va + c.mrlen, rk),
                 (va - 8, rk), (2**64 - 8, rk), (va, rk ^ 0x100)):
        c.send(pkt(OP["FETCH_ADD"], FL, q, atomich(v, 0x0101010101010101, 0,
                                                    k), b"", psn), gap=0.01)
        c.send(pkt(OP["CMP_SWAP"], FL, q, atomich(v, 2**64 - 1, 0, k), b"",
                   psn), gap=0.01)


def case_send_junk(c):
    """SENDs that select receive WQEs far away or overflow them."""
    q, psn = c.qpn(), c.psn()
    pl = bytes([JUNK]) * 1024
    for rmsn, ml, off in ((1000, 1024, 0), (0xFFFFFFFF, 1024, 0),
                          (0, 64 << 10, 32 << 10), (0, 1 << 20, 0),
                          (0, MAX_MSG, MAX_MSG - 1024), (5, 1024, 0)):
        fl = (F_FIRST if off == 0 else 0) | \
             (F_LAST if off + len(pl) == ml else 0)
        c.send(pkt(OP["SEND"], fl, q, sendh(rmsn, ml, off), pl, psn),
               gap=0.01)
        c.send(pkt(OP["SEND_INV"], fl, q, sendh(rmsn, ml, off, 0xFFFFFFFF),
                   pl, psn), gap=0.01)
    c.send(pkt(OP["WRITE_IMM"], FL, q, writeh(c.va, c.rkey, 64, 0, 1 << 31,
                                               1), pl[:64], psn), gap=0.01)


def case_ack(c):
    """ACKs and NAKs for PSNs the target never sent."""
    q = c.qpn()
    rng = random.Random(c.a.seed)
    base = c.psn(c.a.qp) if c.a.psn is None else c.a.psn
    ones = bytes([0xFE]) + bytes([0xFF]) * 31
    allp = [(i, 0, rng.randrange(65536), rng.randrange(1 << 32))
            for i in range(16)]
    for cum in (base, base + 1, base + 255, base + 256, base + 100000,
                base - 1, base - 300, base ^ 0x80000000, 0, 0xFFFFFFFF):
        for syn in range(5):
            c.send(pkt(OP["ACK"], 0, q, ackh(
                cum, nak=cum + rng.randrange(300), syn=syn, sack=ones,
                npaths=16, paths=allp, fair=rng.choice((0, 1, 0xFFFF)),
                rwnd=rng.choice((0, 1, 0xFFFF)), rnr=31,
                tsecr=rng.randrange(1 << 32), delay=0xFFFF)), gap=0.002)
    # syndromes beyond the defined ones
    for syn in (5, 0x7F, 0xFF):
        c.send(pkt(OP["ACK"], 0, q, ackh(base, syn=syn)))
    # bit 0 of the SACK set (cum_psn itself "received")
    c.send(pkt(OP["ACK"], 0, q, ackh(base, sack=bytes([1]) + bytes(31))))


def case_ack_npaths255(c):
    q, psn = c.qpn(), c.psn()
    recs = [(i % 16, 0, 1, 1) for i in range(255)]
    for npaths, rr in ((255, recs), (255, recs[:16]), (17, recs[:17]),
                       (16, recs[:15]), (200, [])):
        body = ackh(psn, npaths=npaths, paths=rr)
        c.send(pkt(OP["ACK"], 0, q, body))


def case_unsolicited(c):
    """Responses to requests that were never made."""
    q, psn = c.qpn(), c.psn()
    pl = bytes([JUNK]) * 512
    for rp in (psn, psn - 1, psn + 7, 0, 0xFFFFFFFF):
        c.send(pkt(OP["READ_RESP"], FL, q, rresph(rp, 0, 512), pl, psn),
               gap=0.005)
        c.send(pkt(OP["READ_RESP"], F_LAST, q, rresph(rp, 512, 1024), pl,
                   psn + 1), gap=0.005)
        c.send(pkt(OP["ATOMIC_RESP"], FL, q, aresph(2**64 - 1, rp), b"",
                   psn + 2), gap=0.005)


def case_probe(c):
    q = c.qpn()
    for i in range(c.a.count or 2000):
        c.send(pkt(OP["PROBE"], F_ACKREQ if i & 1 else 0, q, b"",
                   psn=i * 7))


def case_ud(c):
    """UD datagrams to an RC QP, and UD junk."""
    q = c.qpn()
    pl = bytes([JUNK]) * 256
    for qk in (0, 0x11111111, 0x80010000):
        c.send(pkt(OP["UD_SEND"], FL, q, udh(1, qk), pl))
        c.send(pkt(OP["UD_SEND_IMM"], FL | F_SOLICIT, q, udh(1, qk, 3), pl))
    c.send(pkt(OP["UD_SEND"], FL, q, udh(1, 0), pl, psn=5))  # psn != 0


def case_gsi(c):
    """Datagrams to QP1 (the kernel's GSI QP, owned by ib_mad)."""
    rng = random.Random(c.a.seed)
    for i in range(c.a.count or 200):
        qk = 0x80010000 if i % 4 else rng.randrange(1 << 32)
        n = rng.choice((0, 1, 24, 255, 256, 257, 1024, 2048, 4096))
        pl = bytes(rng.randrange(256) for _ in range(n))
        if n >= 24 and i % 3 == 0:
            # MAD-shaped: base_version 1, mgmt_class, class_version, method
            pl = bytes([1, rng.choice((0x01, 0x03, 0x04, 0x81, 0x07)),
                        rng.randrange(4), rng.randrange(256)]) + pl[4:]
        op = OP["UD_SEND"] if i & 1 else OP["UD_SEND_IMM"]
        c.send(pkt(op, FL, 1, udh(rng.randrange(1 << 24), qk, i), pl))


def case_random(c):
    """Seeded junk: raw random bytes, and random packets with valid BTH
    version/opcode and a valid ICRC aimed at the target QP or at QPNs
    that do not exist."""
    rng = random.Random(c.a.seed)
    q, psn = c.qpn(), c.psn()
    ops = sorted(EXT)
    for i in range(c.a.count or 3000):
        kind = i % 3
        if kind == 0:
            n = rng.choice((rng.randrange(0, 64), rng.randrange(0, 1500)))
            c.send(bytes(rng.randrange(256) for _ in range(n)))
            continue
        op = rng.choice(ops)
        ext = bytearray(rng.randrange(256) for _ in range(EXT[op]))
        npl = 0
        if op == OP["ACK"]:
            npaths = rng.choice((0, 1, 4, 16, rng.randrange(256)))
            ext[20] = npaths
            ext += bytes(rng.randrange(256) for _ in
                         range(8 * min(npaths, 20)))
        elif op in (1, 2, 3, 4, 5, 7, 0x0b, 0x0c):
            npl = rng.choice((0, 1, 16, 64, 1024, rng.randrange(1500)))
        payload = bytes([JUNK]) * npl
        dq = q if kind == 1 else c.free_qpn(rng)
        flags = rng.choice((FL, FL, F_FIRST, F_LAST, 0,
                            rng.randrange(256)))
        p = bth(op, flags, dq, psn + rng.randrange(-8, 300),
                rng.randrange(1 << 32), rng.choice((npl, npl,
                                                    rng.randrange(65536))),
                rng.choice((0, 1, 2, 3, rng.randrange(256))))
        c.send(icrc(p + bytes(ext) + payload))


def _pcap_payloads(path, dport):
    """UDP payloads with destination port @dport from a pcap file."""
    out = []
    with open(path, "rb") as f:
        gh = f.read(24)
        if len(gh) < 24:
            return out
        magic = struct.unpack("<I", gh[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            end = "<"
        elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
            end = ">"
        else:
            raise SystemExit("%s: not a pcap file (pcapng?)" % path)
        linktype = struct.unpack(end + "I", gh[20:24])[0]
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                break
            incl = struct.unpack(end + "IIII", rh)[2]
            d = f.read(incl)
            if linktype == 1:  # Ethernet
                if len(d) < 14:
                    continue
                et = struct.unpack(">H", d[12:14])[0]
                off = 14
                if et == 0x8100:
                    et = struct.unpack(">H", d[16:18])[0]
                    off = 18
            elif linktype == 113:  # Linux cooked
                et = struct.unpack(">H", d[14:16])[0]
                off = 16
            else:
                continue
            if et == 0x0800:
                ihl = (d[off] & 0xF) * 4
                if d[off + 9] != 17:
                    continue
                u = off + ihl
            elif et == 0x86DD:
                if d[off + 6] != 17:
                    continue
                u = off + 40
            else:
                continue
            sport, dp, ulen = struct.unpack(">HHH", d[u:u + 6])
            if dp == dport:
                out.append(d[u + 8:u + ulen])
    return out


def case_replay(c):
    """Resend a captured valid stream (default 3 times, in order and
    shuffled)."""
    pl = _pcap_payloads(c.a.pcap, c.a.port)
    if not pl:
        raise SystemExit("replay: no metaroce packets in %s" % c.a.pcap)
    print("replay: %d captured packets" % len(pl))
    rng = random.Random(c.a.seed)
    for r in range(c.a.count or 3):
        seq = list(pl)
        if r % 2:
            rng.shuffle(seq)
        for p in seq:
            c.send(p, gap=0.001)


def case_dup(c):
    """On the target QP: a new WRITE of 0x11 at offset A (placed), the same
    PSN again with 0x22 (duplicate: must not be placed), older PSNs with
    0x33 at B, PSNs beyond the 256-packet window with 0x44 at B + 0x4000 *
    k (none placed), then the next PSN with 0x55 at C (placed: the QP
    still works). The scenario checks MR[A]=0x11, MR[B, B+64K)=fill,
    MR[C]=0x55."""
    q, psn, va, rk = c.qpn(), c.psn(), c.va, c.rkey
    A, B, C = 0x10000, 0x20000, 0x30000
    n = 256

    def w(p, off, byte):
        c.send(pkt(OP["WRITE"], FL | F_ACKREQ, q, writeh(va + off, rk, n, 0),
                   bytes([byte]) * n, p), gap=0.05)
    w(psn, A, 0x11)
    time.sleep(0.3)
    w(psn, A, 0x22)
    w(psn, A, 0x22)
    w(psn - 1, B, 0x33)
    w(psn - 200, B, 0x33)
    w(psn - 0x7FFFFFFF, B, 0x33)
    # cum is psn + 1 now: the window is [psn + 1, psn + 256]
    w(psn + 1 + 256, B + 0x4000, 0x44)
    w(psn + 1000, B + 0x8000, 0x44)
    w(psn ^ 0x80000000, B + 0xC000, 0x44)
    time.sleep(0.3)
    w(psn + 1, C, 0x55)


def case_spoof(c):
    """Everything a QP could be made to do, from whoever sends this (peer
    validation: none of it may come from anyone but the QP's peer). WRITEs
    of JUNK at the expected PSN and the next ones (the first lands on a QP
    that accepts it), SENDs for the first receive WQEs, READ_REQ, atomics,
    an ACK and a PROBE. Without --info: to --qpn at --psn, rkey/va 0."""
    q, psn, va, rk = c.qpn(), c.psn(), c.va, c.rkey
    n = c.a.count or 8
    pl = bytes([JUNK]) * 256
    for k in range(n):
        c.send(pkt(OP["WRITE"], FL | F_ACKREQ, q,
                   writeh(va + k * 256, rk, 256, 0), pl, psn + k), gap=0.002)
    for k in range(4):
        c.send(pkt(OP["SEND"], FL | F_ACKREQ, q, sendh(k, 256, 0), pl,
                   psn + n + k), gap=0.002)
    c.send(pkt(OP["WRITE_IMM"], FL, q, writeh(va, rk, 256, 0, 0, 7), pl,
               psn + n + 4))
    c.send(pkt(OP["READ_REQ"], FL, q, readh(va, rk, 256), b"", psn + n + 5))
    c.send(pkt(OP["FETCH_ADD"], FL, q, atomich(va + 4096, 0x0101010101010101,
                                                0, rk), b"", psn + n + 6))
    c.send(pkt(OP["CMP_SWAP"], FL, q, atomich(va + 4104, 0, 2**64 - 1, rk),
               b"", psn + n + 7))
    c.send(pkt(OP["ACK"], 0, q, ackh(psn + 5000)))
    c.send(pkt(OP["PROBE"], F_ACKREQ, q, b""))
    if c.refused:
        print("spoof: the kernel refused: %s" % c.refused)


def case_ack_anchor(c):
    """ACKs (syndrome ACK) with a cumulative PSN 5000 past the target QP's
    own initial PSN (psn.I of --info): an RTR QP that adopted its PSN
    space from one would send its READ responses where its peer does not
    expect them."""
    q = c.qpn()
    base = int(c.info.get("psn.%d" % c.a.qp, 0)) if c.a.psn is None \
        else c.a.psn
    for k in range(c.a.count or 3):
        c.send(pkt(OP["ACK"], 0, q, ackh(base + 5000 + k)), gap=0.01)


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--dst", default="192.0.2.2")
    ap.add_argument("--port", type=int, default=19791)
    ap.add_argument("--info", help="mrc_target info file of the target")
    ap.add_argument("--peer-info", help="info file of the target's peer "
                    "(its psn.I is what target QP I expects)")
    ap.add_argument("--qp", type=int, default=0, help="target QP index")
    ap.add_argument("--qpn", type=lambda s: int(s, 0), default=None,
                    help="target QP number instead of --qp's")
    ap.add_argument("--bind", help="source address to bind to")
    ap.add_argument("--freebind", action="store_true",
                    help="bind even to a non-local --bind address")
    ap.add_argument("--raw-src", help="IPv4 source written by hand "
                    "(raw socket, CAP_NET_RAW)")
    ap.add_argument("--psn", type=lambda s: int(s, 0), default=None,
                    help="PSN to use instead of the expected one")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=0)
    ap.add_argument("--avoid", default="", help="QPNs never to aim at")
    ap.add_argument("--pcap")
    ap.add_argument("--pps", type=int, default=1000,
                    help="packets per second at most (0: unpaced)")
    ap.add_argument("--out", help="append records (2-byte big-endian "
                    "length, packet) to this file instead of sending: "
                    "the input format of selftests/fuzz/fuzz_rx")
    a = ap.parse_args()
    c = Ctx(a)
    if a.peer_info:
        with open(a.peer_info) as f:
            for line in f:
                k, _, v = line.strip().partition(" ")
                if k.startswith("psn."):
                    c.info["peer_" + k] = v
        c.avoid |= {int(v) for k, v in c.info.items()
                    if k.startswith("qpn.")}
    t0 = time.time()
    CASES[a.case](c)
    print("%s: %d packets in %.1f s" % (a.case, c.n, time.time() - t0))


if __name__ == "__main__":
    main()
