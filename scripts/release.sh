#!/usr/bin/env bash
# make release: static release binaries with the version stamp and their
# SHA-256 sums in dist/, then the container image as an OCI tarball built
# by ko (no Docker daemon). docs/operations.md, "Deploying".
#
#   RELEASE_TARGETS   os/arch pairs of the binaries (default below)
#   IMAGE_PLATFORM    platform of the image (default linux/amd64)
#   KO_DEFAULTBASEIMAGE  a mirror of the base image in deploy/ko/.ko.yaml
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}
TARGETS=${RELEASE_TARGETS:-linux/amd64 linux/arm64 darwin/arm64}
PLATFORM=${IMAGE_PLATFORM:-linux/amd64}
LDFLAGS="-s -w -X github.com/switchyardhq/switchyard/internal/version.stamped=$VERSION"
DIST=dist

rm -rf "$DIST"
mkdir -p "$DIST"
for t in $TARGETS; do
	os=${t%/*} arch=${t#*/}
	out="$DIST/switchyard-$VERSION-$os-$arch"
	echo "building $out"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$GO" build -trimpath -ldflags "$LDFLAGS" -o "$out" ./cmd/switchyard
done

KO=${KO:-$(command -v ko || true)}
if [ -z "$KO" ] && [ -x "$("$GO" env GOPATH)/bin/ko" ]; then
	KO="$("$GO" env GOPATH)/bin/ko"
fi
if [ -z "$KO" ]; then
	(cd "$DIST" && sha256sum switchyard-* > SHA256SUMS)
	echo "release: the binaries and SHA256SUMS are in $DIST/, but the image was not built: ko is not installed." >&2
	echo "release: install it with: go install github.com/google/ko@v0.18.1" >&2
	exit 1
fi

image="$DIST/switchyard-$VERSION-image.tar"
echo "building $image ($PLATFORM)"
if ! VERSION=$VERSION KO_CONFIG_PATH=deploy/ko KO_DOCKER_REPO=${KO_DOCKER_REPO:-ko.local/switchyard} \
	"$KO" build --push=false --bare --tarball="$image" --platform="$PLATFORM" \
	--tags="$VERSION" ./cmd/switchyard >"$DIST/ko.log" 2>&1; then
	sed 's/^/ko: /' "$DIST/ko.log" >&2
	rm -f "$image"
	(cd "$DIST" && sha256sum switchyard-* > SHA256SUMS)
	if grep -q "fetching base image" "$DIST/ko.log"; then
		echo "release: the image was not built: ko could not fetch its base image (deploy/ko/.ko.yaml) from its registry." >&2
		echo "release: ko needs that registry at build time; set KO_DEFAULTBASEIMAGE to a mirror it can reach." >&2
	else
		echo "release: the image was not built: ko failed (above)." >&2
	fi
	echo "release: the binaries and SHA256SUMS are in $DIST/." >&2
	exit 1
fi
rm -f "$DIST/ko.log"
(cd "$DIST" && sha256sum switchyard-* > SHA256SUMS)
echo "release: $DIST/"
ls -l "$DIST"
