# .ci/chromium.sh — install Debian's chromium for the browser test of the HTML report.
#
# Meant to be sourced (". .ci/chromium.sh") by .ci/run, as root, on Debian, with no
# standard input; it also works when run with sh. It is idempotent: when
# /usr/bin/chromium already starts it installs nothing. On success it exports
# AGENTIDEM_CHROMIUM=/usr/bin/chromium, which internal/render's browser test uses
# (the test also finds /usr/bin/chromium by itself). It never changes the caller's
# shell options and never exits the caller's shell.

agentidem_chromium_setup() (
	export DEBIAN_FRONTEND=noninteractive
	if [ -x /usr/bin/chromium ] && /usr/bin/chromium --version </dev/null >/dev/null 2>&1; then
		exit 0
	fi
	echo "chromium.sh: installing chromium from Debian's packages" >&2
	apt-get update -qq </dev/null >&2 || exit 1
	# fonts-liberation gives the screenshot readable glyphs without recommends.
	apt-get install -y -qq --no-install-recommends chromium fonts-liberation </dev/null >&2 || exit 1
	/usr/bin/chromium --version </dev/null >/dev/null 2>&1 || exit 1
)

if agentidem_chromium_setup; then
	export AGENTIDEM_CHROMIUM=/usr/bin/chromium
	echo "chromium.sh: $(/usr/bin/chromium --version </dev/null 2>/dev/null)" >&2
else
	echo "chromium.sh: could not install chromium; the browser test of internal/render will be skipped" >&2
fi
unset -f agentidem_chromium_setup
