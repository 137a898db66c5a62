#!/usr/bin/env bash
# Browser check of the HTML report, in headless Chromium.
#
#   scripts/check_html.sh [--update-docs]
#
# 1. Installs Debian's `chromium` when it is missing (apt-get; the CI machine
#    is root). If that fails outside CI (CI unset) the check is skipped with
#    a message and exit 0; in CI it fails.
# 2. Runs `cargo run --release --example report_gallery`, which writes every
#    format into target/report-gallery/ (report.html: the example's 14 sites;
#    large.html: 10,000 synthetic sites).
# 3. Opens report.html#selftest and large.html#selftest headless. The page's
#    self-test checks that every link resolves, one row and one section per
#    site, that clicking headers sorts correctly and a click on a name opens
#    its section, and that no name injected an element or ran a script; it
#    writes PASS or FAIL: reason into #selftest, which is read from the DOM.
# 4. Saves screenshots of the report and of the flamegraph under
#    target/report-gallery/; with --update-docs, copies the report's to
#    docs/report.png (the picture the README shows).
#
# Prints one summary line; exits non-zero when a check fails.
set -euo pipefail

cd "$(dirname "$0")/.."
out=target/report-gallery
update_docs=0
for arg in "$@"; do
    case "$arg" in
        --update-docs) update_docs=1 ;;
        *) echo "usage: scripts/check_html.sh [--update-docs]" >&2; exit 2 ;;
    esac
done

find_chromium() {
    command -v chromium || command -v chromium-browser || command -v google-chrome || true
}

browser=$(find_chromium)
if [ -z "$browser" ]; then
    echo "check_html: chromium not found; installing Debian's chromium"
    if { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/tmp/check_html_apt.log 2>&1; then
        browser=$(find_chromium)
    fi
    if [ -z "$browser" ]; then
        tail -5 /tmp/check_html_apt.log >&2 || true
        if [ -z "${CI:-}" ]; then
            echo "check_html: SKIPPED: chromium could not be installed (see /tmp/check_html_apt.log); CI would fail here"
            exit 0
        fi
        echo "check_html: FAIL: chromium could not be installed" >&2
        exit 1
    fi
fi

mkdir -p "$out"
if ! cargo run --quiet --release --example report_gallery -- --out "$out" >"$out/example.log" 2>&1; then
    cat "$out/example.log" >&2
    echo "check_html: FAIL: the report_gallery example did not run" >&2
    exit 1
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
log="$out/chromium.log"
: >"$log"
chrome() {
    timeout 180 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" "$@" 2>>"$log"
}

# The self-test's verdict for one page: prints it, returns 0 on PASS.
selftest() {
    local page=$1 verdict
    verdict=$(chrome --virtual-time-budget=5000 --dump-dom "file://$PWD/$out/$page#selftest" |
        grep -o '<p id="selftest"[^>]*>[^<]*' | sed 's/^<p[^>]*>//' || true)
    echo "${verdict:-FAIL: no verdict in the page (script did not run or did not finish)}"
    [[ "$verdict" == PASS* ]]
}

status=0
small=$(selftest report.html) || status=1
echo "check_html: report.html: $small"

start=$(date +%s%N)
large=$(selftest large.html) || status=1
large_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "check_html: large.html: $large (browser run ${large_ms} ms)"
ready=$(sed -n 's/.*page ready at \([0-9]*\) ms.*/\1/p' <<<"$large")
if [ -n "$ready" ] && [ "$ready" -gt 3000 ]; then
    echo "check_html: warning: the 10,000-site page took ${ready} ms to open (aim: well under 3 s)"
fi

chrome --hide-scrollbars --window-size=1280,900 --virtual-time-budget=2000 \
    --screenshot="$PWD/$out/report.png" "file://$PWD/$out/report.html" >/dev/null || status=1
chrome --hide-scrollbars --window-size=1280,700 --virtual-time-budget=2000 \
    --screenshot="$PWD/$out/flamegraph.png" "file://$PWD/$out/report.svg" >/dev/null || status=1
for png in report.png flamegraph.png; do
    [ -s "$out/$png" ] || { echo "check_html: FAIL: no screenshot $out/$png" >&2; status=1; }
done
if [ "$update_docs" = 1 ] && [ -s "$out/report.png" ]; then
    mkdir -p docs
    cp "$out/report.png" docs/report.png
    echo "check_html: copied $out/report.png to docs/report.png"
fi

if [ "$status" = 0 ]; then
    echo "check_html: PASS: report.html and large.html (10,000 sites, ${ready:-?} ms to open) pass their browser self-test; screenshots in $out/"
else
    echo "check_html: FAIL (chromium log: $log)"
fi
exit "$status"
