#!/usr/bin/env bash
# Makes sure the system fonts that documents, charts and diagrams fall
# back to for scripts the bundled Latin faces lack (CJK, Hebrew, Arabic,
# Devanagari, Thai, symbols and emoji) are installed: Debian's Noto fonts,
# Droid Sans Fallback and Nanum Gothic (CJK and Hangul in TrueType, which
# PDFs embed) and Symbola.
# With --tests, also LibreOffice, which the visual corpus renders Word
# files and workbooks with, and the fonts it sets them in. Installs them
# when missing and running as root; otherwise says what is missing and
# goes on: the renderers work without them, showing U+FFFD for what they
# cannot draw. SWITCHYARD_FONT_DIR names other font directories instead.
set -euo pipefail

apt_tag=fonts
# shellcheck source=scripts/apt.sh
. "$(dirname "$0")/apt.sh"

missing=()
have() { [ -n "$(find /usr/share/fonts /usr/local/share/fonts -name "$1" -print -quit 2>/dev/null)" ]; }
have NotoSansHebrew-Regular.ttf || missing+=(fonts-noto-core)
have 'NotoSansCJK-Regular.tt?' || missing+=(fonts-noto-cjk)
have 'DroidSansFallback*.ttf' || missing+=(fonts-droid-fallback)
have NanumGothic.ttf || missing+=(fonts-nanum)
have 'Symbola*.ttf' || missing+=(fonts-symbola)
have DejaVuSans.ttf || missing+=(fonts-dejavu-core)
# The renderers' tests read PDFs back and look at their pages with poppler.
command -v pdftotext >/dev/null || missing+=(poppler-utils)
# The visual corpus (tools/render/corpus) renders Word files and
# workbooks to pages with LibreOffice, headless.
if [ "${1:-}" = --tests ]; then
	command -v soffice >/dev/null || missing+=(libreoffice-writer-nogui libreoffice-calc-nogui)
	# The corpus lets LibreOffice use these packages' fonts only
	# (officePackages in tools/render/corpus/fonts_test.go). Two of them
	# come only as recommendations, so they are named here: Liberation 2,
	# the Arial it substitutes, with Hebrew (chromium's Liberation 1.x
	# has the same file names and no Hebrew), and Noto Sans Mono, its
	# Consolas.
	[ -n "$(find /usr/share/fonts /usr/local/share/fonts -path '*/liberation2/LiberationSans-Regular.ttf' -print -quit 2>/dev/null)" ] || missing+=(fonts-liberation2)
	have NotoSansMono-Regular.ttf || missing+=(fonts-noto-mono)
	# The PDF renderer's tests check its tagged structure with qpdf.
	command -v qpdf >/dev/null || missing+=(qpdf)
fi

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
if can_install; then
	apt_install "${missing[@]}"
else
	echo "fonts: not installed: ${missing[*]}; non-Latin text will show as U+FFFD (install them, or set SWITCHYARD_FONT_DIR)" >&2
fi
