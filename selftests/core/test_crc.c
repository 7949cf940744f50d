// SPDX-License-Identifier: GPL-2.0
/* CRC32C known vectors (RFC 3720 B.4 and the "check" value). */
#include "mrc_test.h"
#include "crc32c.h"

MRC_TEST(crc_check_value)
{
	MRC_EXPECT_EQ(mrc_crc32c("123456789", 9), 0xe3069283U);
	MRC_EXPECT_EQ(mrc_crc32c("", 0), 0);
}

MRC_TEST(crc_rfc3720)
{
	u8 buf[32];
	u32 i;

	memset(buf, 0, sizeof(buf));
	MRC_EXPECT_EQ(mrc_crc32c(buf, 32), 0x8a9136aaU);
	memset(buf, 0xff, sizeof(buf));
	MRC_EXPECT_EQ(mrc_crc32c(buf, 32), 0x62a8ab43U);
	for (i = 0; i < 32; i++)
		buf[i] = i;
	MRC_EXPECT_EQ(mrc_crc32c(buf, 32), 0x46dd794eU);
	for (i = 0; i < 32; i++)
		buf[i] = 31 - i;
	MRC_EXPECT_EQ(mrc_crc32c(buf, 32), 0x113fdb5cU);
}

MRC_TEST(crc_chaining)
{
	const char *s = "metaroce end-to-end integrity";
	u32 n = strlen(s), k;

	for (k = 0; k <= n; k++) {
		u32 c = mrc_crc32c_update(~0U, s, k);

		c = ~mrc_crc32c_update(c, s + k, n - k);
		MRC_EXPECT_EQ(c, mrc_crc32c(s, n));
	}
}

MRC_SUITE(crc,
	  MRC_CASE(crc_check_value),
	  MRC_CASE(crc_rfc3720),
	  MRC_CASE(crc_chaining));
