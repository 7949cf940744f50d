#!/bin/bash
# Build the Debian packages (`make deb`) into build/deb/:
#   metaroce-dkms_VERSION_all.deb               module source + dkms.conf
#                                               (DKMS builds it on install
#                                               for every kernel with headers)
#   ibverbs-provider-metaroce_VERSION_amd64.deb libmetaroce-rdmav34.so +
#                                               /etc/libibverbs.d/metaroce.driver
# The version is VERSION's (one place; dkms.conf reads it too). The provider
# is built first by scripts/build-provider.sh against the rdma-core source
# that scripts/setup.sh fetched (rdma-core is not part of the source
# package); then the tree's source files (tracked or new, not ignored) are
# staged into build/deb/src/metaroce-VERSION and dpkg-buildpackage builds
# the binary packages there. Lintian runs on the result unless NO_LINTIAN=1.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/deb
VERSION=$(tr -d ' \n' <"$ROOT/VERSION")
STAGE=$OUT/src/metaroce-$VERSION

log() { printf '[deb] %s\n' "$*"; }
die() { printf '[deb] error: %s\n' "$*" >&2; exit 1; }

[[ $VERSION =~ ^[0-9][0-9A-Za-z.+~]*$ ]] || die "bad VERSION '$VERSION'"
for t in dpkg-buildpackage dh dh_dkms; do
	command -v "$t" >/dev/null || die "$t not found: run scripts/setup.sh"
done

bash "$ROOT/scripts/build-provider.sh"

log "staging $STAGE"
rm -rf "$OUT/src" "$OUT"/*.deb
mkdir -p "$STAGE"
(cd "$ROOT" && git ls-files -co --exclude-standard -z -- \
	Makefile Kbuild VERSION dkms.conf README.md include kernel debian \
	providers/metaroce/metaroce.driver |
	xargs -0 cp --parents -t "$STAGE" --)
install -D -m 644 "$ROOT/build/provider/libmetaroce-rdmav34.so" \
	"$STAGE/build/provider/libmetaroce-rdmav34.so"

desc=$(cd "$ROOT" && git describe --always --dirty 2>/dev/null || echo unknown)
cat >"$STAGE/debian/changelog" <<CL
metaroce ($VERSION) unstable; urgency=medium

  * Built from the metaroce tree at $desc.

 -- metaroce maintainers <maintainers@users.noreply.a-seed-255ce398.example>  $(date -R)
CL

log "dpkg-buildpackage ($VERSION, tree $desc)"
(cd "$STAGE" && dpkg-buildpackage -b -us -uc >"$OUT/src/build.log" 2>&1) ||
	{ tail -40 "$OUT/src/build.log" >&2; die "dpkg-buildpackage failed (see $OUT/src/build.log)"; }
mv "$OUT"/src/*.deb "$OUT"/
for d in "$OUT"/*.deb; do
	log "built ${d#"$ROOT"/}"
done

if [ "${NO_LINTIAN:-0}" != 1 ] && command -v lintian >/dev/null; then
	log "lintian"
	lintian --fail-on error,warning "$OUT"/*.deb
fi
