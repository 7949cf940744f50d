// SPDX-License-Identifier: GPL-2.0
#include "ep.h"
void scn_rc(void)
{
	scn_stream();
}
