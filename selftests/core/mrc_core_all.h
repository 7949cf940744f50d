/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every core test body, included into one translation unit by the KUnit
 * suite file (mrc_core_kunit.c) and the userspace runner
 * (selftests/unit/runner.c). Add a new test_*.c here, to
 * MRC_CORE_ALL_SUITES and to kunit_test_suites() in mrc_core_kunit.c.
 */
#ifndef MRC_CORE_ALL_H
#define MRC_CORE_ALL_H

#include "mrc_test.h"
#include "test_seq.c"
#include "test_crc.c"
#include "test_hdr.c"
#include "test_sack.c"
#include "test_rtt.c"
#include "test_cc.c"
#include "test_path.c"
#include "test_worder.c"
#include "test_rspq.c"
#include "test_reo.c"
#include "test_responder.c"
#include "test_completer.c"
#include "test_requester.c"

#define MRC_CORE_ALL_SUITES						\
	{ &seq_suite, &crc_suite, &hdr_suite, &sack_suite, &rtt_suite,	\
	  &cc_suite, &path_suite, &reo_suite, &worder_suite, &rspq_suite,	\
	  &responder_suite, &completer_suite, &requester_suite }

#endif /* MRC_CORE_ALL_H */
