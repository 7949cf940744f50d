/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78) for the ICRC.
 * In the kernel this is the library crc32c() (hardware accelerated when
 * available); in userspace a table-driven implementation. Both give the
 * same results: mrc_crc32c("123456789", 9) == 0xE3069283.
 */
#ifndef MRC_CRC32C_H
#define MRC_CRC32C_H

#include "mrc_types.h"

/*
 * Raw update, kernel crc32c() semantics: no pre/post inversion. Chain
 * calls to checksum discontiguous buffers (e.g. skb fragments).
 */
u32 mrc_crc32c_update(u32 crc, const void *buf, u32 len);

/* Standard CRC32C of one buffer: ~update(~0, buf, len). */
static inline u32 mrc_crc32c(const void *buf, u32 len)
{
	return ~mrc_crc32c_update(~0U, buf, len);
}

#endif /* MRC_CRC32C_H */
