// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites of the metaroce transport core: metaroce_core_seq, _crc,
 * _hdr, _sack, _rtt, _cc, _path, _reo, _worder, _rspq, _responder,
 * _completer, _requester. Built by scripts/kunit.sh into
 * UML with the kernel/core/ sources (-I include -I kernel/core -I selftests/core).
 */
#include "mrc_core_all.h"

kunit_test_suites(&seq_suite, &crc_suite, &hdr_suite, &sack_suite, &rtt_suite,
		  &cc_suite, &path_suite, &reo_suite, &worder_suite,
		  &rspq_suite, &responder_suite, &completer_suite,
		  &requester_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for the metaroce transport core");
