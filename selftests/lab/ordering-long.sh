#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ordering-long: ordering.sh with 5000 iterations of each test per
# condition (CI runs 500) and a third, harsher condition: 50% of the
# packets reordered behind 5 ms, 2% lost, 2% duplicated, both directions.
# About 10x CI's ordering on the stock kernel (~50 min), more on the
# debug kernel. ORDER_ITERS and ORDER_CONDS override, as in ordering.sh.
# lab: long (see scripts/test.sh)
export ORDER_ITERS=${ORDER_ITERS:-5000}
export ORDER_CONDS=${ORDER_CONDS:-delay 2ms reorder 25%;delay 1ms reorder 10% loss 1% duplicate 1%;delay 5ms reorder 50% loss 2% duplicate 2%}
export LAB_NAME=${LAB_NAME:-ordering-long}
exec bash "$(dirname "$0")/ordering.sh" "$@"
