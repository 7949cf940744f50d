#!/bin/bash
# Provider tests that need no RDMA device: the fast-path unit test (fake
# rings, ASan/UBSan) and the load test. Builds the provider first.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
HERE=$ROOT/providers/metaroce/tests
OUT=$ROOT/build/provider-tests

"$ROOT/scripts/build-provider.sh" >/dev/null
mkdir -p "$OUT"

# Same headers as the provider build; linked against the system libibverbs.
cc -std=gnu11 -g -O1 -Wall -Wextra -Wno-sign-compare -Wno-unused-parameter \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-I"$ROOT/build/rdma-core/include" -I/usr/include/libnl3 \
	-o "$OUT/ring-test" "$HERE/ring-test.c" -libverbs -lpthread
"$OUT/ring-test"

"$HERE/load-test.sh"
