// SPDX-License-Identifier: GPL-2.0
/*
 * Userspace runner of the metaroce core tests (selftests/core/test_*.c).
 * Prints every failing expectation with file:line, one line per suite,
 * and ends with exactly one line "N passed, N failed" (test cases).
 * Exit status 1 if any case failed.
 *
 * Usage: runner [suite-substring]
 */
#include "mrc_core_all.h"

static struct mrc_test_suite *suites[] = MRC_CORE_ALL_SUITES;

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	unsigned int s, passed = 0, failed = 0;

	for (s = 0; s < ARRAY_SIZE(suites); s++) {
		struct mrc_test_case *c;
		unsigned int sp = 0, sf = 0;

		if (filter && !strstr(suites[s]->name, filter))
			continue;
		for (c = suites[s]->cases; c->name; c++) {
			struct mrc_test t = { .name = c->name };
			int i;

			c->fn(&t);
			for (i = 0; i < t.nalloc; i++)
				free(t.alloc[i]);
			if (t.failed) {
				printf("  not ok %s.%s (%d failed)\n",
				       suites[s]->name, c->name, t.failed);
				sf++;
			} else {
				sp++;
			}
		}
		printf("%s %s: %u passed, %u failed\n", sf ? "FAIL" : "ok  ",
		       suites[s]->name, sp, sf);
		passed += sp;
		failed += sf;
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
