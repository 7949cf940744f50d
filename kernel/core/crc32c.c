// SPDX-License-Identifier: GPL-2.0
/*
 * CRC32C for the metaroce ICRC. See crc32c.h.
 */
#include "crc32c.h"

#ifdef __KERNEL__

#include <linux/crc32c.h>

u32 mrc_crc32c_update(u32 crc, const void *buf, u32 len)
{
	return crc32c(crc, buf, len);
}

#else

/*
 * Half-byte table for the reflected Castagnoli polynomial 0x82F63B78:
 * entry n is the CRC register after shifting nibble n through 4 rounds.
 */
static const u32 mrc_crc_tab4[16] = {
	0x00000000, 0x105ec76f, 0x20bd8ede, 0x30e349b1,
	0x417b1dbc, 0x5125dad3, 0x61c69362, 0x7198540d,
	0x82f63b78, 0x92a8fc17, 0xa24bb5a6, 0xb21572c9,
	0xc38d26c4, 0xd3d3e1ab, 0xe330a81a, 0xf36e6f75,
};

u32 mrc_crc32c_update(u32 crc, const void *buf, u32 len)
{
	const u8 *p = buf;

	while (len--) {
		crc ^= *p++;
		crc = mrc_crc_tab4[crc & 0xf] ^ (crc >> 4);
		crc = mrc_crc_tab4[crc & 0xf] ^ (crc >> 4);
	}
	return crc;
}

#endif
