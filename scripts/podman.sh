#!/usr/bin/env bash
# Makes sure the container runtime that e2e/deploy runs the release image
# in is installed: Debian's podman (no daemon to start), and runc, which
# the test uses on hosts with hybrid cgroups, where podman's default
# runtime crun refuses to start containers (docs/operations.md,
# "Container"). Missing packages are installed when running as root;
# otherwise it stops and says what to run, because the image test fails
# without them.
set -euo pipefail

apt_tag=podman
# shellcheck source=scripts/apt.sh
. "$(dirname "$0")/apt.sh"

missing=()
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
if ! can_install; then
	cat >&2 <<MSG
The release image test (e2e/deploy, TestImageRunsInPodman) runs the image
in podman; not installed: ${missing[*]}. Install them
(sudo apt-get install ${missing[*]}) and run scripts/podman.sh again.
MSG
	exit 1
fi
apt_install "${missing[@]}"
