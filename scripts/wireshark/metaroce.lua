-- SPDX-License-Identifier: GPL-2.0
--
-- Wireshark / tshark dissector for the metaroce wire protocol, version 3
-- (Documentation/protocol.rst is normative; include/metaroce/wire.h and
-- kernel/core/hdr.c are the reference parser this file mirrors).
-- Version 2 added the BTH flag CUMACK and cum_lo; version 3 the request
-- epoch (protocol.rst "RNR and the request epoch"): BTH byte 3 is the path
-- (bits 0-3) and the epoch (bits 4-7: a request's request epoch, an ACK's
-- receive epoch), a syndrome ACK's nak_psn is the void PSN, and every ACK
-- carries rnr_timer (the responder's minimum RNR delay).
--
-- Decodes the BTH, every opcode extension (SENDH, WRITEH, READH, RRESPH,
-- ATOMICH, ARESPH, UDH, ACKH with its per-path records), the SACK bitmap
-- (every PSN beyond cum_psn it reports received), DSACK, NAK syndromes, and
-- checks the ICRC (CRC32C). Header rule violations that make a metaroce
-- receiver drop the packet are shown as "malformed" expert infos, a bad
-- ICRC as a checksum error, retransmissions (RETX flag) as "[RETX]" in the
-- Info column and a sequence note.
--
-- Use:
--   tshark -X lua_script:scripts/wireshark/metaroce.lua -r capture.pcap
--   wireshark -X lua_script:scripts/wireshark/metaroce.lua capture.pcap
-- or copy this file into ~/.local/lib/wireshark/plugins/ (Wireshark >= 3.6;
-- older: ~/.wireshark/plugins/).
--
-- Preferences (Edit > Preferences > Protocols > METAROCE, or tshark -o):
--   metaroce.udp_port    UDP port (module parameter udp_port; 19791)
--   metaroce.check_icrc  verify the ICRC (default on)
--
-- Display filter examples:
--   metaroce.flags.retx == 1            retransmissions
--   metaroce.opcode == 0x10             ACKs
--   metaroce.ack.syndrome != 0          NAKs
--   metaroce.epoch > 0                  requests/ACKs past an RNR NAK
--   metaroce.ack.syndrome == 0 && metaroce.ack.nak_psn != 0
--                                       ACKs with a void PSN
--   metaroce.icrc.status == 0           bad ICRC
--   metaroce.ack.sack.psn == 1234       ACKs that SACK PSN 1234
--   metaroce.dst_qpn == 17 && metaroce.psn == 1234
--
-- Works with the Lua 5.2 of Wireshark 3.x/4.0 (bit32) and with Lua >= 5.3
-- (native bit operators).

local DEFAULT_PORT = 19791

local mrc = Proto("metaroce", "metaroce transport")

-- ------------------------------------------------------------ bit helpers
local band, bxor, rshift
if bit32 then
	band, bxor, rshift = bit32.band, bit32.bxor, bit32.rshift
else
	-- Lua >= 5.3: the operators are syntax errors for a 5.2 parser,
	-- so compile them at run time.
	band = load("return function(a, b) return a & b end")()
	bxor = load("return function(a, b) return a ~ b end")()
	rshift = load("return function(a, n) return (a & 0xffffffff) >> n end")()
end

local TWO32 = 4294967296

-- ------------------------------------------------------------ CRC32C
-- Castagnoli, reflected polynomial 0x82F63B78, init and final XOR
-- 0xFFFFFFFF (iSCSI/SCTP). CRC32C("123456789") = 0xE3069283.
local crc_tab = {}
for n = 0, 255 do
	local c = n
	for _ = 1, 8 do
		if band(c, 1) ~= 0 then
			c = bxor(rshift(c, 1), 0x82F63B78)
		else
			c = rshift(c, 1)
		end
	end
	crc_tab[n] = c
end

local function crc32c(s)
	local crc = 0xFFFFFFFF
	local byte = string.byte
	local len = #s
	local i = 1
	while i <= len do
		-- string.byte of a chunk: far fewer calls than one per byte
		local j = i + 63
		if j > len then j = len end
		local t = { byte(s, i, j) }
		for k = 1, #t do
			crc = bxor(crc_tab[band(bxor(crc, t[k]), 0xFF)], rshift(crc, 8))
		end
		i = j + 1
	end
	return bxor(crc, 0xFFFFFFFF)
end
assert(crc32c("123456789") == 0xE3069283, "metaroce.lua: CRC32C self-test")

-- ------------------------------------------------------------ constants
local BTH_LEN, ICRC_LEN, ACKH_LEN, ACK_PATH_LEN = 24, 4, 56, 8
local MAX_PATHS, MAX_PAYLOAD, MAX_MSG = 16, 4096, 0x80000000

local OP = {
	SEND = 0x01, SEND_IMM = 0x02, SEND_INV = 0x03, WRITE = 0x04,
	WRITE_IMM = 0x05, READ_REQ = 0x06, READ_RESP = 0x07, CMP_SWAP = 0x08,
	FETCH_ADD = 0x09, ATOMIC_RESP = 0x0a, UD_SEND = 0x0b,
	UD_SEND_IMM = 0x0c, ACK = 0x10, PROBE = 0x11,
}
local op_names = {}
for k, v in pairs(OP) do op_names[v] = k end

-- extension length per opcode (ACK: fixed part only)
local EXT_LEN = {
	[0x01] = 16, [0x02] = 16, [0x03] = 16, [0x04] = 32, [0x05] = 32,
	[0x06] = 16, [0x07] = 16, [0x08] = 32, [0x09] = 32, [0x0a] = 16,
	[0x0b] = 16, [0x0c] = 16, [0x10] = ACKH_LEN, [0x11] = 0,
}
local HAS_PAYLOAD = {
	[0x01] = true, [0x02] = true, [0x03] = true, [0x04] = true,
	[0x05] = true, [0x07] = true, [0x0b] = true, [0x0c] = true,
}

local F_FIRST, F_LAST, F_ACKREQ, F_SOLICIT, F_RETX, F_UC, F_CUMACK =
	0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40
local F_ALL = 0x7f
local VERSION = 3
-- BTH byte 3 (version 3): the path in bits 0-3, the epoch in bits 4-7
local PATH_MASK, EPOCH_MASK = 0x0f, 0xf0
-- opcodes whose BTH epoch is the request epoch (the ACK's: receive epoch)
local IS_REQUEST = {
	[0x01] = true, [0x02] = true, [0x03] = true, [0x04] = true,
	[0x05] = true, [0x06] = true, [0x08] = true, [0x09] = true,
}

local syn_names = {
	[0] = "ACK", [1] = "RNR", [2] = "INV_REQ", [3] = "REM_ACCESS",
	[4] = "REM_OP",
}

-- IB-encoded RNR timer -> microseconds (kernel/comp.c, IB spec 9.7.5.2.8)
local rnr_us = {
	[0] = 655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
}

local icrc_status_names = { [0] = "Bad", [1] = "Good", [2] = "Unverified" }

-- ------------------------------------------------------------ fields
local f = {}
local function F(key, field) f[key] = field end

-- BTH
F("version", ProtoField.uint8("metaroce.version", "Version", base.DEC))
F("opcode", ProtoField.uint8("metaroce.opcode", "Opcode", base.HEX, op_names))
F("flags", ProtoField.uint8("metaroce.flags", "Flags", base.HEX))
F("f_first", ProtoField.bool("metaroce.flags.first", "FIRST", 8, nil, F_FIRST))
F("f_last", ProtoField.bool("metaroce.flags.last", "LAST", 8, nil, F_LAST))
F("f_ackreq", ProtoField.bool("metaroce.flags.ackreq", "ACKREQ", 8, nil, F_ACKREQ))
F("f_solicit", ProtoField.bool("metaroce.flags.solicit", "SOLICIT", 8, nil, F_SOLICIT))
F("f_retx", ProtoField.bool("metaroce.flags.retx", "RETX (retransmission)", 8, nil, F_RETX))
F("f_uc", ProtoField.bool("metaroce.flags.uc", "UC (unreliable connected)", 8, nil, F_UC))
F("f_cumack", ProtoField.bool("metaroce.flags.cumack", "CUMACK (cum_lo valid)", 8, nil, F_CUMACK))
F("f_undef", ProtoField.uint8("metaroce.flags.undefined", "Undefined bits", base.HEX, nil, 0x80))
F("path_id", ProtoField.uint8("metaroce.path_id", "Path ID", base.DEC, nil, PATH_MASK))
F("epoch", ProtoField.uint8("metaroce.epoch", "Epoch", base.DEC, nil, EPOCH_MASK))
F("dst_qpn", ProtoField.uint32("metaroce.dst_qpn", "Destination QP", base.DEC))
F("psn", ProtoField.uint32("metaroce.psn", "PSN", base.DEC))
F("ppsn", ProtoField.uint32("metaroce.ppsn", "Per-path PSN", base.DEC))
F("tsval", ProtoField.uint32("metaroce.tsval", "Timestamp (us)", base.DEC))
F("payload_len", ProtoField.uint16("metaroce.payload_len", "Payload length", base.DEC))
F("cum_lo", ProtoField.uint16("metaroce.cum_lo", "Cumulative ACK, low 16 bits", base.DEC))
F("reserved", ProtoField.bytes("metaroce.reserved", "Reserved"))
-- extensions (field names follow wire.h: <struct>.<member>)
F("rmsn", ProtoField.uint32("metaroce.rmsn", "RMSN", base.DEC))
F("msg_len", ProtoField.uint32("metaroce.msg_len", "Message length", base.DEC))
F("offset", ProtoField.uint32("metaroce.offset", "Offset", base.DEC))
F("imm", ProtoField.uint32("metaroce.imm", "Immediate data", base.HEX))
F("inv_rkey", ProtoField.uint32("metaroce.inv_rkey", "Rkey to invalidate", base.HEX))
F("va", ProtoField.uint64("metaroce.va", "Virtual address", base.HEX))
F("rkey", ProtoField.uint32("metaroce.rkey", "Rkey", base.HEX))
F("read_len", ProtoField.uint32("metaroce.read.len", "Read length", base.DEC))
F("req_psn", ProtoField.uint32("metaroce.req_psn", "Request PSN", base.DEC))
F("swap_add", ProtoField.uint64("metaroce.atomic.swap_add", "Swap / add", base.HEX))
F("compare", ProtoField.uint64("metaroce.atomic.compare", "Compare", base.HEX))
F("orig", ProtoField.uint64("metaroce.atomic.orig", "Original value", base.HEX))
F("src_qpn", ProtoField.uint32("metaroce.ud.src_qpn", "Source QP", base.DEC))
F("qkey", ProtoField.uint32("metaroce.ud.qkey", "Q_Key", base.HEX))
-- ACK
F("cum_psn", ProtoField.uint32("metaroce.ack.cum_psn", "Cumulative PSN", base.DEC))
-- a NAK's PSN; on a syndrome ACK (version 3) the void PSN (labelled so)
F("nak_psn", ProtoField.uint32("metaroce.ack.nak_psn", "NAK PSN", base.DEC))
F("tsecr", ProtoField.uint32("metaroce.ack.tsecr", "Timestamp echo (us)", base.DEC))
F("ack_delay", ProtoField.uint16("metaroce.ack.ack_delay", "ACK delay (us)", base.DEC))
F("fair_share", ProtoField.uint16("metaroce.ack.fair_share", "Fair share (0 = no cap)", base.DEC))
F("rwnd", ProtoField.uint16("metaroce.ack.rwnd", "Receive window", base.DEC))
F("syndrome", ProtoField.uint8("metaroce.ack.syndrome", "Syndrome", base.DEC, syn_names))
F("ts_path", ProtoField.uint8("metaroce.ack.ts_path", "Timestamp path", base.DEC))
F("npaths", ProtoField.uint8("metaroce.ack.npaths", "Path records", base.DEC))
F("rnr_timer", ProtoField.uint8("metaroce.ack.rnr_timer", "RNR timer", base.DEC))
F("rnr_us", ProtoField.uint32("metaroce.ack.rnr_delay_us", "RNR delay (us)", base.DEC))
F("dsack_off", ProtoField.int16("metaroce.ack.dsack_off", "DSACK offset", base.DEC))
F("dsack_psn", ProtoField.uint32("metaroce.ack.dsack_psn", "DSACK PSN (received twice)", base.DEC))
F("sack", ProtoField.bytes("metaroce.ack.sack", "SACK bitmap"))
F("sack_count", ProtoField.uint16("metaroce.ack.sack.count", "PSNs SACKed beyond cum", base.DEC))
F("sack_psn", ProtoField.uint32("metaroce.ack.sack.psn", "SACKed PSN", base.DEC))
F("sack_hole", ProtoField.uint32("metaroce.ack.sack.hole", "Missing PSN (below highest SACKed)", base.DEC))
F("path_rec", ProtoField.bytes("metaroce.ack.path", "Path record"))
F("p_id", ProtoField.uint8("metaroce.ack.path.id", "Path ID", base.DEC))
F("p_flags", ProtoField.uint8("metaroce.ack.path.flags", "Flags", base.HEX))
F("p_ce", ProtoField.uint16("metaroce.ack.path.ce_count", "CE count", base.DEC))
F("p_max_ppsn", ProtoField.uint32("metaroce.ack.path.max_ppsn", "Highest PPSN received", base.DEC))
-- payload and ICRC
F("payload", ProtoField.bytes("metaroce.payload", "Payload"))
F("icrc", ProtoField.uint32("metaroce.icrc", "ICRC", base.HEX))
F("icrc_calc", ProtoField.uint32("metaroce.icrc.calculated", "Calculated ICRC", base.HEX))
F("icrc_status", ProtoField.uint8("metaroce.icrc.status", "ICRC status", base.DEC, icrc_status_names))

local plist = {}
for _, v in pairs(f) do plist[#plist + 1] = v end
mrc.fields = plist

local ef = {
	retx = ProtoExpert.new("metaroce.retx.expert", "Retransmission (RETX)",
			       expert.group.SEQUENCE, expert.severity.NOTE),
	nak = ProtoExpert.new("metaroce.nak.expert", "NAK",
			      expert.group.RESPONSE_CODE, expert.severity.WARN),
	dsack = ProtoExpert.new("metaroce.dsack.expert", "DSACK: duplicate received",
				expert.group.SEQUENCE, expert.severity.NOTE),
	icrc_bad = ProtoExpert.new("metaroce.icrc.bad", "ICRC mismatch",
				   expert.group.CHECKSUM, expert.severity.ERROR),
	malformed = ProtoExpert.new("metaroce.malformed.expert", "Malformed (receiver drops it)",
				    expert.group.MALFORMED, expert.severity.ERROR),
	reserved = ProtoExpert.new("metaroce.reserved.expert", "Reserved field not zero",
				   expert.group.PROTOCOL, expert.severity.WARN),
}
mrc.experts = { ef.retx, ef.nak, ef.dsack, ef.icrc_bad, ef.malformed, ef.reserved }

-- ------------------------------------------------------------ preferences
mrc.prefs.udp_port = Pref.uint("UDP port", DEFAULT_PORT,
	"UDP destination port of metaroce (module parameter udp_port)")
mrc.prefs.check_icrc = Pref.bool("Check ICRC", true,
	"Verify the CRC32C ICRC of every packet")

local udp_table = DissectorTable.get("udp.port")
local cur_port = nil

local function register_port()
	local p = mrc.prefs.udp_port
	if cur_port == p then return end
	if cur_port then udp_table:remove(cur_port, mrc) end
	if p and p > 0 and p < 65536 then
		udp_table:add(p, mrc)
		cur_port = p
	else
		cur_port = nil
	end
end

function mrc.prefs_changed()
	register_port()
end

-- ------------------------------------------------------------ helpers
local function u32(tvb, off) return tvb(off, 4):uint() end

-- ranges of PSN offsets "+1,+3-+5" (for the bitmap's summary line)
local function ranges(list)
	local out, i = {}, 1
	while i <= #list do
		local j = i
		while j < #list and list[j + 1] == list[j] + 1 do j = j + 1 end
		if j == i then
			out[#out + 1] = "+" .. list[i]
		else
			out[#out + 1] = "+" .. list[i] .. "-+" .. list[j]
		end
		i = j + 1
	end
	return table.concat(out, ",")
end

-- segment rules (hdr.c mrc_check_segment)
local function check_segment(flags, msg_len, offset, plen, bad)
	local e = offset + plen
	if msg_len > MAX_MSG or e > msg_len then
		bad("offset + payload_len > msg_len or msg_len > 2^31")
		return
	end
	if (band(flags, F_FIRST) ~= 0) ~= (offset == 0) then
		bad("FIRST must be set iff offset == 0")
	end
	if (band(flags, F_LAST) ~= 0) ~= (e == msg_len) then
		bad("LAST must be set iff offset + payload_len == msg_len")
	end
	if band(flags, F_LAST) == 0 and plen == 0 then
		bad("non-LAST packet without payload")
	end
end

local function flag_names(flags)
	local n = {}
	if band(flags, F_FIRST) ~= 0 then n[#n + 1] = "FIRST" end
	if band(flags, F_LAST) ~= 0 then n[#n + 1] = "LAST" end
	if band(flags, F_ACKREQ) ~= 0 then n[#n + 1] = "ACKREQ" end
	if band(flags, F_SOLICIT) ~= 0 then n[#n + 1] = "SOLICIT" end
	if band(flags, F_RETX) ~= 0 then n[#n + 1] = "RETX" end
	if band(flags, F_UC) ~= 0 then n[#n + 1] = "UC" end
	if band(flags, F_CUMACK) ~= 0 then n[#n + 1] = "CUMACK" end
	if band(flags, 0x80) ~= 0 then n[#n + 1] = "?" end
	return table.concat(n, ",")
end

-- ------------------------------------------------------------ extensions
-- each returns: info suffix (string or nil)
local ext = {}

local function reserved(tree, tvb, off, len)
	local item = tree:add(f.reserved, tvb(off, len))
	for i = 0, len - 1 do
		if tvb(off + i, 1):uint() ~= 0 then
			item:add_proto_expert_info(ef.reserved)
			break
		end
	end
end

ext.send = function(tvb, t, op, flags, plen, bad)
	t:add(f.rmsn, tvb(0, 4))
	t:add(f.msg_len, tvb(4, 4))
	t:add(f.offset, tvb(8, 4))
	if op == OP.SEND_INV then
		t:add(f.inv_rkey, tvb(12, 4))
	else
		t:add(f.imm, tvb(12, 4))
	end
	check_segment(flags, u32(tvb, 4), u32(tvb, 8), plen, bad)
	return string.format("rmsn %u off %u/%u", u32(tvb, 0), u32(tvb, 8), u32(tvb, 4))
end

ext.write = function(tvb, t, op, flags, plen, bad)
	t:add(f.va, tvb(0, 8))
	t:add(f.rkey, tvb(8, 4))
	t:add(f.msg_len, tvb(12, 4))
	t:add(f.offset, tvb(16, 4))
	t:add(f.rmsn, tvb(20, 4))
	t:add(f.imm, tvb(24, 4))
	reserved(t, tvb, 28, 4)
	check_segment(flags, u32(tvb, 12), u32(tvb, 16), plen, bad)
	return string.format("off %u/%u", u32(tvb, 16), u32(tvb, 12))
end

ext.read = function(tvb, t, op, flags, plen, bad)
	t:add(f.va, tvb(0, 8))
	t:add(f.rkey, tvb(8, 4))
	t:add(f.read_len, tvb(12, 4))
	if band(flags, F_FIRST + F_LAST) ~= F_FIRST + F_LAST then
		bad("single-packet opcode without FIRST|LAST")
	end
	if u32(tvb, 12) > MAX_MSG then bad("read length > 2^31") end
	return string.format("len %u", u32(tvb, 12))
end

ext.rresp = function(tvb, t, op, flags, plen, bad)
	t:add(f.req_psn, tvb(0, 4))
	t:add(f.offset, tvb(4, 4))
	t:add(f.msg_len, tvb(8, 4))
	reserved(t, tvb, 12, 4)
	check_segment(flags, u32(tvb, 8), u32(tvb, 4), plen, bad)
	return string.format("req %u off %u/%u", u32(tvb, 0), u32(tvb, 4), u32(tvb, 8))
end

ext.atomic = function(tvb, t, op, flags, plen, bad)
	t:add(f.va, tvb(0, 8))
	t:add(f.swap_add, tvb(8, 8))
	t:add(f.compare, tvb(16, 8))
	t:add(f.rkey, tvb(24, 4))
	reserved(t, tvb, 28, 4)
	if band(flags, F_FIRST + F_LAST) ~= F_FIRST + F_LAST then
		bad("single-packet opcode without FIRST|LAST")
	end
	return nil
end

ext.aresp = function(tvb, t, op, flags, plen, bad)
	t:add(f.orig, tvb(0, 8))
	t:add(f.req_psn, tvb(8, 4))
	reserved(t, tvb, 12, 4)
	if band(flags, F_FIRST + F_LAST) ~= F_FIRST + F_LAST then
		bad("single-packet opcode without FIRST|LAST")
	end
	return string.format("req %u", u32(tvb, 8))
end

ext.ud = function(tvb, t, op, flags, plen, bad)
	t:add(f.src_qpn, tvb(0, 4))
	t:add(f.qkey, tvb(4, 4))
	t:add(f.imm, tvb(8, 4))
	reserved(t, tvb, 12, 4)
	if band(flags, bxor(F_ALL, F_SOLICIT)) ~= F_FIRST + F_LAST then
		bad("UD datagram flags must be FIRST|LAST[|SOLICIT]")
	end
	if u32(tvb, 0) > 0xffffff then bad("source QPN wider than 24 bits") end
	return string.format("src qp %u", u32(tvb, 0))
end

local EXT_FN = {
	[0x01] = ext.send, [0x02] = ext.send, [0x03] = ext.send,
	[0x04] = ext.write, [0x05] = ext.write, [0x06] = ext.read,
	[0x07] = ext.rresp, [0x08] = ext.atomic, [0x09] = ext.atomic,
	[0x0a] = ext.aresp, [0x0b] = ext.ud, [0x0c] = ext.ud,
}
local EXT_NAME = {
	[0x01] = "SENDH", [0x02] = "SENDH", [0x03] = "SENDH", [0x04] = "WRITEH",
	[0x05] = "WRITEH", [0x06] = "READH", [0x07] = "RRESPH",
	[0x08] = "ATOMICH", [0x09] = "ATOMICH", [0x0a] = "ARESPH",
	[0x0b] = "UDH", [0x0c] = "UDH", [0x10] = "ACKH",
}

-- ACKH and its path records; tvb starts at the ACKH. Returns info text.
local function dissect_ack(tvb, t, pinfo, root, avail, bad)
	local cum = u32(tvb, 0)
	local nak_psn = u32(tvb, 4)
	local syn = tvb(18, 1):uint()
	local npaths = tvb(20, 1):uint()
	local rnr = tvb(21, 1):uint()
	local dsack = tvb(22, 2):int()

	t:add(f.cum_psn, tvb(0, 4))
	local nak_item = t:add(f.nak_psn, tvb(4, 4))
	if syn == 0 then
		-- version 3: the PSN whose RNR refusal began the receive epoch
		nak_item:set_text(string.format(
			"Void PSN: %u (RNR refusal that began the receive epoch%s)",
			nak_psn, nak_psn == 0 and "; 0: none" or ""))
	end
	t:add(f.tsecr, tvb(8, 4))
	t:add(f.ack_delay, tvb(12, 2))
	t:add(f.fair_share, tvb(14, 2))
	t:add(f.rwnd, tvb(16, 2))
	local syn_item = t:add(f.syndrome, tvb(18, 1))
	t:add(f.ts_path, tvb(19, 1))
	t:add(f.npaths, tvb(20, 1))
	-- version 3: every ACK carries the responder's minimum RNR delay
	local rnr_item = t:add(f.rnr_timer, tvb(21, 1))
	rnr_item:add(f.rnr_us, tvb(21, 1), rnr_us[band(rnr, 31)]):set_generated()
	local ds_item = t:add(f.dsack_off, tvb(22, 2))

	local info
	if syn == 0 then
		info = string.format("ACK cum %u", cum)
		if nak_psn ~= 0 then
			info = info .. string.format(" void %u", nak_psn)
		end
	else
		local name = syn_names[syn] or string.format("syndrome %u", syn)
		info = string.format("NAK %s psn %u cum %u", name, nak_psn, cum)
		syn_item:add_proto_expert_info(ef.nak,
			string.format("NAK %s for PSN %u", name, nak_psn))
	end
	if syn > 4 then bad("syndrome > 4") end
	if tvb(19, 1):uint() >= MAX_PATHS then bad("ts_path >= 16") end

	if dsack ~= 0 then
		local dpsn = (cum + dsack) % TWO32
		ds_item:add(f.dsack_psn, tvb(22, 2), dpsn):set_generated()
		ds_item:add_proto_expert_info(ef.dsack,
			string.format("DSACK: PSN %u received twice", dpsn))
		info = info .. string.format(" dsack %u", dpsn)
	end

	-- SACK bitmap: bit i (byte i/8, mask 1 << i%8) = PSN cum + i
	local st = t:add(f.sack, tvb(24, 32))
	local set, highest = {}, nil
	for byte_i = 0, 31 do
		local b = tvb(24 + byte_i, 1):uint()
		if b ~= 0 then
			for bit_i = 0, 7 do
				if band(b, 2 ^ bit_i) ~= 0 then
					set[#set + 1] = byte_i * 8 + bit_i
				end
			end
		end
	end
	if #set > 0 and set[1] == 0 then
		bad("SACK bit 0 (cum_psn itself) set")
	end
	local sacked = {}
	for _, i in ipairs(set) do
		if i > 0 then sacked[#sacked + 1] = i end
	end
	local sk = st:add(f.sack_count, tvb(24, 32), #sacked)
	sk:set_generated()
	if #sacked > 0 then
		highest = sacked[#sacked]
		st:append_text(" (cum " .. ranges(sacked) .. ")")
		for _, i in ipairs(sacked) do
			local byte_i = math.floor(i / 8)
			sk:add(f.sack_psn, tvb(24 + byte_i, 1), (cum + i) % TWO32):set_generated()
		end
		-- missing PSNs: cum itself and every clear bit below the highest
		local is_set, holes = {}, {}
		for _, i in ipairs(sacked) do is_set[i] = true end
		for i = 0, highest - 1 do
			if not is_set[i] then holes[#holes + 1] = i end
		end
		local mt = st:add(tvb(24, 32), string.format(
			"Missing PSNs (below the highest SACKed): %u (cum %s)",
			#holes, ranges(holes)))
		mt:set_generated()
		for _, i in ipairs(holes) do
			mt:add(f.sack_hole, tvb(24 + math.floor(i / 8), 1),
			       (cum + i) % TWO32):set_generated()
		end
		info = info .. string.format(" sack %s", ranges(sacked))
	end

	-- path records
	if npaths > MAX_PATHS then
		bad("npaths > 16")
		return info
	end
	local need = ACKH_LEN + npaths * ACK_PATH_LEN
	if need > avail then
		bad(string.format("%u path records do not fit", npaths))
		return info
	end
	local seen = {}
	for i = 0, npaths - 1 do
		local o = ACKH_LEN + i * ACK_PATH_LEN
		local pid = tvb(o, 1):uint()
		local pt = t:add(f.path_rec, tvb(o, ACK_PATH_LEN))
		pt:set_text(string.format("Path %u: max PPSN %u, CE count %u",
			pid, u32(tvb, o + 4), tvb(o + 2, 2):uint()))
		pt:add(f.p_id, tvb(o, 1))
		pt:add(f.p_flags, tvb(o + 1, 1))
		pt:add(f.p_ce, tvb(o + 2, 2))
		pt:add(f.p_max_ppsn, tvb(o + 4, 4))
		if pid >= MAX_PATHS or seen[pid] then
			bad("path record id >= 16 or repeated")
		end
		seen[pid] = true
		if tvb(o + 1, 1):uint() ~= 0 then bad("path record flags not 0") end
	end
	return info
end

-- ------------------------------------------------------------ dissector
function mrc.dissector(tvb, pinfo, tree)
	local len = tvb:reported_length_remaining()
	local caplen = tvb:len()
	pinfo.cols.protocol:set("METAROCE")
	local root = tree:add(mrc, tvb())

	local problems = {}
	local function bad(msg) problems[#problems + 1] = msg end
	local function flush_problems(item, info)
		for _, p in ipairs(problems) do
			item:add_proto_expert_info(ef.malformed, "Malformed: " .. p)
		end
		if #problems > 0 then info = info .. " [MALFORMED]" end
		return info
	end

	if caplen < BTH_LEN or len < BTH_LEN + ICRC_LEN then
		root:add_proto_expert_info(ef.malformed,
			string.format("Malformed: truncated (%u bytes)", len))
		pinfo.cols.info:set("metaroce [truncated]")
		return len
	end

	local version = tvb(0, 1):uint()
	local op = tvb(1, 1):uint()
	local flags = tvb(2, 1):uint()
	local path = band(tvb(3, 1):uint(), PATH_MASK)	-- 0..15: all valid
	local epoch = rshift(band(tvb(3, 1):uint(), EPOCH_MASK), 4)
	local has_epoch = IS_REQUEST[op] or op == OP.ACK
	local qpn = u32(tvb, 4)
	local psn = u32(tvb, 8)
	local ppsn = u32(tvb, 12)
	local plen = tvb(20, 2):uint()
	local name = op_names[op] or string.format("OP_0x%02x", op)

	-- BTH
	local bt = root:add(tvb(0, BTH_LEN), "Base transport header")
	bt:add(f.version, tvb(0, 1))
	bt:add(f.opcode, tvb(1, 1))
	local fl = bt:add(f.flags, tvb(2, 1))
	fl:append_text(flags ~= 0 and " (" .. flag_names(flags) .. ")" or " (none)")
	fl:add(f.f_first, tvb(2, 1))
	fl:add(f.f_last, tvb(2, 1))
	fl:add(f.f_ackreq, tvb(2, 1))
	fl:add(f.f_solicit, tvb(2, 1))
	local retx_item = fl:add(f.f_retx, tvb(2, 1))
	fl:add(f.f_uc, tvb(2, 1))
	fl:add(f.f_cumack, tvb(2, 1))
	fl:add(f.f_undef, tvb(2, 1))
	bt:add(f.path_id, tvb(3, 1))
	if has_epoch then
		local ep = bt:add(f.epoch, tvb(3, 1))
		ep:append_text(op == OP.ACK and " (responder's receive epoch)" or
			" (request epoch)")
	elseif epoch ~= 0 then
		-- MUST be 0, but receivers ignore it
		bt:add(f.epoch, tvb(3, 1)):add_proto_expert_info(ef.reserved,
			"Epoch not 0 on a packet without one (ignored)")
	end
	bt:add(f.dst_qpn, tvb(4, 4))
	bt:add(f.psn, tvb(8, 4))
	bt:add(f.ppsn, tvb(12, 4))
	bt:add(f.tsval, tvb(16, 4))
	bt:add(f.payload_len, tvb(20, 2))
	local cumack = band(flags, F_CUMACK) ~= 0
	if cumack then
		bt:add(f.cum_lo, tvb(22, 2))
	else
		reserved(bt, tvb, 22, 2)
	end

	if version ~= VERSION then
		bad(string.format("version %u (not %u)", version, VERSION))
	end
	if band(flags, bxor(0xff, F_ALL)) ~= 0 then bad("undefined flag bits set") end
	if band(flags, F_UC) ~= 0 then
		if op ~= OP.SEND and op ~= OP.SEND_IMM and op ~= OP.WRITE and
		   op ~= OP.WRITE_IMM then
			bad("UC flag on an opcode UC does not use")
		end
		if band(flags, F_ACKREQ + F_RETX + F_CUMACK) ~= 0 then
			bad("UC flag together with ACKREQ, RETX or CUMACK")
		end
	end
	if cumack and (op == OP.ACK or op == OP.PROBE or op == OP.UD_SEND or
		       op == OP.UD_SEND_IMM) then
		bad("CUMACK on an unsequenced packet")
	end
	if qpn > 0xffffff then bad("dst_qpn wider than 24 bits") end
	if plen > MAX_PAYLOAD then bad("payload_len > 4096") end

	local info
	local is_retx = band(flags, F_RETX) ~= 0
	-- "path P" in the Info column, "path P epoch E" once the epoch is not 0
	local pathtxt = string.format("path %u", path)
	if has_epoch and epoch ~= 0 then
		pathtxt = pathtxt .. string.format(" epoch %u", epoch)
	end
	if op == OP.ACK then
		info = ""	-- filled by dissect_ack
	elseif op == OP.PROBE then
		info = string.format("PROBE psn %u path %u qp %u", psn, path, qpn)
	elseif op == OP.UD_SEND or op == OP.UD_SEND_IMM then
		info = string.format("%s path %u qp %u", name, path, qpn)
	else
		info = string.format("%s psn %u %s qp %u", name, psn, pathtxt, qpn)
	end

	local ext_len = EXT_LEN[op]
	if ext_len == nil or version ~= VERSION then
		if ext_len == nil then bad(string.format("unknown opcode 0x%02x", op)) end
		info = flush_problems(root, info)
		pinfo.cols.info:set(info)
		return len
	end
	if not HAS_PAYLOAD[op] and plen ~= 0 then
		bad("payload_len not 0 for an opcode without payload")
	end

	local hdr_len = BTH_LEN + ext_len
	if hdr_len + ICRC_LEN > len or hdr_len > caplen then
		bad(string.format("truncated: %u bytes, %s needs %u", len, name,
			hdr_len + ICRC_LEN))
		info = flush_problems(root, info)
		pinfo.cols.info:set(info)
		return len
	end

	local extra
	if op == OP.ACK then
		local at = root:add(tvb(BTH_LEN, ext_len), "ACK extension (ACKH)")
		local avail = math.min(caplen, len - ICRC_LEN) - BTH_LEN
		info = dissect_ack(tvb(BTH_LEN, avail), at, pinfo, root, avail, bad)
		local np = tvb(BTH_LEN + 20, 1):uint()
		if np <= MAX_PATHS then
			hdr_len = hdr_len + np * ACK_PATH_LEN
			if hdr_len <= caplen then
				at:set_len(ext_len + np * ACK_PATH_LEN)
			end
		end
		info = info .. string.format(" %s qp %u", pathtxt, qpn)
		if flags ~= 0 then bad("ACK flags not 0") end
		if psn ~= 0 or ppsn ~= 0 then
			-- MUST be 0, but the reference receiver does not check
			root:add_proto_expert_info(ef.reserved, "ACK psn/ppsn not 0")
		end
	elseif op == OP.PROBE then
		if band(flags, bxor(0xff, F_ACKREQ)) ~= 0 then
			bad("PROBE flags other than ACKREQ")
		end
		if ppsn ~= 0 then
			root:add_proto_expert_info(ef.reserved, "PROBE ppsn not 0")
		end
	else
		local et = root:add(tvb(BTH_LEN, ext_len),
			string.format("%s extension (%s)", name, EXT_NAME[op]))
		extra = EXT_FN[op](tvb(BTH_LEN, ext_len), et, op, flags, plen, bad)
		if (op == OP.UD_SEND or op == OP.UD_SEND_IMM) and (psn ~= 0 or ppsn ~= 0) then
			bad("UD datagram psn/ppsn not 0")
		end
	end
	if extra then info = info .. " " .. extra end
	if plen > 0 and HAS_PAYLOAD[op] then
		info = info .. string.format(" len %u", plen)
	end

	-- exact length rule: headers + payload + ICRC == UDP payload
	if hdr_len + plen + ICRC_LEN ~= len then
		bad(string.format("length %u != headers %u + payload_len %u + 4",
			len, hdr_len, plen))
	end

	-- payload
	local pay_end = len - ICRC_LEN
	if pay_end > hdr_len and hdr_len < caplen then
		local n = math.min(pay_end, caplen) - hdr_len
		if n > 0 then root:add(f.payload, tvb(hdr_len, n)) end
	end

	-- ICRC: the last 4 bytes of the UDP payload
	if caplen >= len then
		local icrc_tvb = tvb(len - ICRC_LEN, ICRC_LEN)
		local it = root:add(f.icrc, icrc_tvb)
		local got = icrc_tvb:uint()
		if mrc.prefs.check_icrc then
			local calc = crc32c(tvb:raw(0, len - ICRC_LEN))
			it:add(f.icrc_calc, icrc_tvb, calc):set_generated()
			if calc == got then
				it:append_text(" [correct]")
				it:add(f.icrc_status, icrc_tvb, 1):set_generated()
			else
				it:append_text(string.format(" [incorrect, should be 0x%08x]", calc))
				it:add(f.icrc_status, icrc_tvb, 0):set_generated()
				it:add_proto_expert_info(ef.icrc_bad,
					string.format("ICRC mismatch: 0x%08x, calculated 0x%08x (receiver drops it)",
						got, calc))
				info = info .. " [BAD ICRC]"
			end
		else
			it:add(f.icrc_status, icrc_tvb, 2):set_generated()
		end
	else
		-- snap length cut the packet: nothing to check
		root:add(f.icrc_status, 2):set_generated()
	end

	if is_retx then
		info = info .. " [RETX]"
		retx_item:add_proto_expert_info(ef.retx)
	end
	info = flush_problems(root, info)
	root:append_text(", " .. info)
	pinfo.cols.info:set(info)
	return len
end

register_port()
