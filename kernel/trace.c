// SPDX-License-Identifier: GPL-2.0
/* metaroce tracepoints: the one place they are instantiated (trace.h). */
#define METAROCE_TP_INTERNAL
#include "obj.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

static_assert(METAROCE_DROP_MALFORMED == 0 && METAROCE_DROP_ICRC == 1 &&
	      METAROCE_DROP_NOQP == 2 && METAROCE_DROP_NOTREADY == 3 &&
	      METAROCE_DROP_PEER == 4);
