/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Portability layer of the metaroce transport core.
 *
 * The core (kernel/core/) builds unchanged in three places: metaroce.ko,
 * the KUnit suites (UML) and the userspace unit tests/fuzzers. Under
 * __KERNEL__ this maps to the kernel's own headers; in userspace it
 * provides the same names (u8..u64, s32, cpu_to_be32, get_unaligned_be32,
 * min_t, likely, ...) on top of libc.
 */
#ifndef MRC_TYPES_H
#define MRC_TYPES_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/compiler.h>
#include <linux/minmax.h>
#include <linux/build_bug.h>
#include <asm/byteorder.h>
#include <linux/version.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)	/* moved out of asm/ */
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif
#include <linux/math64.h>

/* u64 / u32 that also links on 32-bit kernels */
#define mrc_div_u64(a, b)	div_u64((a), (b))

#else /* userspace */

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <endian.h>
#include <linux/types.h>	/* __be16, __be32, __be64, __u8 ... */

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#define cpu_to_be16(x)	((__be16)htobe16(x))
#define cpu_to_be32(x)	((__be32)htobe32(x))
#define cpu_to_be64(x)	((__be64)htobe64(x))
#define be16_to_cpu(x)	((u16)be16toh(x))
#define be32_to_cpu(x)	((u32)be32toh(x))
#define be64_to_cpu(x)	((u64)be64toh(x))

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

#define min_t(t, a, b)	((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b)	((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#define clamp_t(t, v, lo, hi)	min_t(t, max_t(t, v, lo), hi)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define mrc_div_u64(a, b)	((u64)(a) / (u32)(b))
#define BUILD_BUG_ON(c)	_Static_assert(!(c), #c)

/* Byte-level big-endian accessors: no alignment assumed. */
static inline u16 get_unaligned_be16(const void *p)
{
	const u8 *b = p;

	return (u16)((u16)b[0] << 8 | b[1]);
}

static inline u32 get_unaligned_be32(const void *p)
{
	const u8 *b = p;

	return (u32)b[0] << 24 | (u32)b[1] << 16 | (u32)b[2] << 8 | b[3];
}

static inline u64 get_unaligned_be64(const void *p)
{
	const u8 *b = p;

	return (u64)get_unaligned_be32(b) << 32 | get_unaligned_be32(b + 4);
}

static inline void put_unaligned_be16(u16 v, void *p)
{
	u8 *b = p;

	b[0] = v >> 8;
	b[1] = (u8)v;
}

static inline void put_unaligned_be32(u32 v, void *p)
{
	u8 *b = p;

	b[0] = v >> 24;
	b[1] = (u8)(v >> 16);
	b[2] = (u8)(v >> 8);
	b[3] = (u8)v;
}

static inline void put_unaligned_be64(u64 v, void *p)
{
	put_unaligned_be32((u32)(v >> 32), p);
	put_unaligned_be32((u32)v, (u8 *)p + 4);
}

#endif /* __KERNEL__ */

#endif /* MRC_TYPES_H */
