# Installing missing Debian packages, for the scripts that do so when they
# run as root. The script that sources this sets apt_tag, the word its
# messages start with, and may set apt_options for apt-get install.

can_install() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }

apt_updated=
apt_install() {
	if [ -z "$apt_updated" ]; then
		echo "$apt_tag: apt-get update" >&2
		apt-get update -qq >/dev/null
		apt_updated=1
	fi
	echo "$apt_tag: installing $*" >&2
	# shellcheck disable=SC2086 # apt_options is a list of words
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${apt_options:-} "$@" >/dev/null
}
