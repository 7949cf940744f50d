/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tiny test macros shared by the metaroce core tests.
 *
 * The test bodies (selftests/core/test_*.c) are written once and built two
 * ways, both by #including every body into one translation unit through
 * mrc_core_all.h:
 *
 *  - KUnit (UML): selftests/core/mrc_core_kunit.c is the only file to
 *    compile, together with every kernel/core/ source, with include paths
 *    -I include -I kernel/core -I selftests/core. It registers the
 *    suites metaroce_core_{seq,crc,hdr,sack,rtt,cc,path,replay} with
 *    kunit_test_suites(). CONFIG_LIBCRC32C must be enabled (crc32c.c
 *    calls the library crc32c()).
 *  - userspace: selftests/unit/runner.c (make -C selftests/unit) with
 *    ASan/UBSan.
 *
 * Inside a test body use only:
 *   MRC_TEST(fn) { ... }            define a test case
 *   MRC_EXPECT_EQ(a, b), MRC_EXPECT_NE, MRC_EXPECT_TRUE(c), MRC_EXPECT_FALSE,
 *   MRC_EXPECT_MEMEQ(a, b, n)      non-fatal checks (integers compared as
 *                                  long long)
 *   MRC_ASSERT_TRUE(c)              fatal: ends the test case
 *   MRC_ALLOC(ptr)                  zeroed heap object for big state,
 *                                  freed after the case (kernel stacks
 *                                  are small)
 *   MRC_SUITE(name, MRC_CASE(fn), ...)   declares suite "metaroce_core_"name
 *                                  as the object name##_suite
 */
#ifndef MRC_TEST_H
#define MRC_TEST_H

#ifdef __KERNEL__

#include <kunit/test.h>
#include <linux/slab.h>

#define MRC_TEST(fn)	static void fn(struct kunit *test)
#define MRC_EXPECT_EQ(a, b) \
	KUNIT_EXPECT_EQ(test, (long long)(a), (long long)(b))
#define MRC_EXPECT_NE(a, b) \
	KUNIT_EXPECT_NE(test, (long long)(a), (long long)(b))
#define MRC_EXPECT_TRUE(c)	KUNIT_EXPECT_TRUE(test, !!(c))
#define MRC_EXPECT_FALSE(c)	KUNIT_EXPECT_FALSE(test, !!(c))
#define MRC_EXPECT_MEMEQ(a, b, n) \
	KUNIT_EXPECT_EQ(test, memcmp((a), (b), (n)), 0)
#define MRC_ASSERT_TRUE(c)	KUNIT_ASSERT_TRUE(test, !!(c))
#define MRC_ALLOC(ptr) do {						\
	(ptr) = kunit_kzalloc(test, sizeof(*(ptr)), GFP_KERNEL);	\
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, (ptr));			\
} while (0)
#define MRC_CASE(fn)	KUNIT_CASE(fn)
#define MRC_SUITE(sname, ...)						\
	static struct kunit_case sname##_cases[] = { __VA_ARGS__, {} };	\
	static struct kunit_suite sname##_suite = {			\
		.name = "metaroce_core_" #sname,			\
		.test_cases = sname##_cases,				\
	}

#else /* userspace */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MRC_TEST_MAX_ALLOC	16

struct mrc_test {
	const char *name;
	int failed;
	int nalloc;
	void *alloc[MRC_TEST_MAX_ALLOC];
};

struct mrc_test_case {
	const char *name;
	void (*fn)(struct mrc_test *test);
};

struct mrc_test_suite {
	const char *name;
	struct mrc_test_case *cases;
};

static inline void mrc_test_fail(struct mrc_test *test, const char *file,
				 int line, const char *what, long long a,
				 long long b)
{
	test->failed++;
	printf("    FAIL %s:%d: %s: %s (%lld vs %lld)\n", file, line,
	       test->name, what, a, b);
}

static inline void *mrc_test_alloc(struct mrc_test *test, size_t sz)
{
	void *p = calloc(1, sz);

	if (!p || test->nalloc >= MRC_TEST_MAX_ALLOC) {
		fprintf(stderr, "mrc_test: allocation failed\n");
		abort();
	}
	test->alloc[test->nalloc++] = p;
	return p;
}

#define MRC_TEST(fn)	static void fn(struct mrc_test *test)
#define MRC_CMP_(a, op, b) do {						\
	long long a_ = (long long)(a), b_ = (long long)(b);		\
	if (!(a_ op b_))						\
		mrc_test_fail(test, __FILE__, __LINE__,			\
			      #a " " #op " " #b, a_, b_);		\
} while (0)
#define MRC_EXPECT_EQ(a, b)	MRC_CMP_(a, ==, b)
#define MRC_EXPECT_NE(a, b)	MRC_CMP_(a, !=, b)
#define MRC_EXPECT_TRUE(c)	MRC_CMP_(!!(c), ==, 1)
#define MRC_EXPECT_FALSE(c)	MRC_CMP_(!!(c), ==, 0)
#define MRC_EXPECT_MEMEQ(a, b, n)	MRC_CMP_(memcmp((a), (b), (n)), ==, 0)
#define MRC_ASSERT_TRUE(c) do {						\
	if (!(c)) {							\
		mrc_test_fail(test, __FILE__, __LINE__,			\
			      "assert " #c, 0, 1);			\
		return;							\
	}								\
} while (0)
#define MRC_ALLOC(ptr)	((ptr) = mrc_test_alloc(test, sizeof(*(ptr))))
#define MRC_CASE(fn)	{ #fn, fn }
#define MRC_SUITE(name, ...)						\
	static struct mrc_test_case name##_cases[] = { __VA_ARGS__,	\
						       { NULL, NULL } };\
	static struct mrc_test_suite name##_suite = {			\
		"metaroce_core_" #name, name##_cases			\
	}

#endif /* __KERNEL__ */

#include "mrc_types.h"

/* A seeded 64-bit LCG for randomized cases: same sequence everywhere. */
static inline u32 mrc_test_rnd(u64 *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return (u32)(*state >> 33);
}

#endif /* MRC_TEST_H */
