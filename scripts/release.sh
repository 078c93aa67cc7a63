#!/usr/bin/env bash
# make release: static release binaries with the version stamp, the
# container image as a tarball for docker load / podman load, and the
# SHA-256 sums of both in dist/. The image is assembled by deploy/image
# from the linux binary, with no container daemon and no registry.
# docs/operations.md, "Deploying".
#
#   RELEASE_TARGETS   os/arch pairs of the binaries (default below)
#   IMAGE_PLATFORM    platform of the image (default linux/amd64)
#   IMAGE_LAYOUT      set to 1 to also write the image as an OCI layout
#                     directory, for skopeo or crane to push
#   CA_CERTS          the CA bundle copied into the image (default
#                     Debian's, from the ca-certificates package)
#   SOURCE_DATE_EPOCH the image's timestamps (default: the commit's time)
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}
REVISION=${REVISION:-$(git rev-parse HEAD 2>/dev/null || true)}
# The commit's time, not the clock: the same commit gives the same image.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
TARGETS=${RELEASE_TARGETS:-linux/amd64 linux/arm64 darwin/arm64}
PLATFORM=${IMAGE_PLATFORM:-linux/amd64}
CA_CERTS=${CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
LDFLAGS="-s -w -X github.com/switchyardhq/switchyard/internal/version.stamped=$VERSION"
DIST=dist

build() { # os arch
	local out="$DIST/switchyard-$VERSION-$1-$2"
	echo "building $out"
	CGO_ENABLED=0 GOOS=$1 GOARCH=$2 "$GO" build -trimpath -ldflags "$LDFLAGS" -o "$out" ./cmd/switchyard
}

# Before the slow builds: without a CA bundle the image cannot be made.
if [ ! -s "$CA_CERTS" ]; then
	echo "release: $CA_CERTS is missing: the image needs it as its trust store." >&2
	echo "release: install Debian's ca-certificates package, or set CA_CERTS to a PEM bundle." >&2
	exit 1
fi

rm -rf "$DIST"
mkdir -p "$DIST"
for t in $TARGETS; do
	build "${t%/*}" "${t#*/}"
done

bin="$DIST/switchyard-$VERSION-${PLATFORM%/*}-${PLATFORM#*/}"
[ -f "$bin" ] || build "${PLATFORM%/*}" "${PLATFORM#*/}"
image="$DIST/switchyard-$VERSION-image.tar"
layout=()
if [ "${IMAGE_LAYOUT:-}" = 1 ]; then
	layout=(-layout "$DIST/switchyard-$VERSION-oci")
fi
echo "building $image ($PLATFORM)"
"$GO" run ./deploy/image -binary "$bin" -platform "$PLATFORM" -version "$VERSION" -revision "$REVISION" \
	-ca-certs "$CA_CERTS" -caddyfile Caddyfile.example -out "$image" ${layout[@]+"${layout[@]}"}

# The binaries and the image tarball; not the layout directory, whose
# blobs its own index names by digest.
(cd "$DIST" && for f in switchyard-*; do [ ! -f "$f" ] || sha256sum "$f"; done > SHA256SUMS)
echo "release: $DIST/"
ls -l "$DIST"
