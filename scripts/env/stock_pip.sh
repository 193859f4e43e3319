#!/usr/bin/env bash
# Debian's own Python and the pip its `python3 -m venv` brings, not upgraded (Debian 12: 23.0.1;
# Debian 13: 25.1.1): `pip install .`, then `plexity clean` of the sample WARC must write every record.
# (Debian 12's pip does not match lxml's "html-clean" extra to "html_clean": plexity_plugins names
# lxml_html_clean itself, so trafilatura's `import lxml.html.clean` works.)
#
#   bash scripts/env/stock_pip.sh [WORK_DIR]
#
# Needs Debian's python3, python3-venv and python3-dev (scripts/ci/70-environments.sh).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:-$(mktemp -d)}"
mkdir -p "$work"

/usr/bin/python3 -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip --version
log="$work/pip.log"
source "$repo/scripts/lib.sh"
copy_checkout "$repo" "$work/src"
kenlm_first "$py" "$log"
echo "env: pip install . with $("$py" -m pip --version | cut -d' ' -f1-2) (no upgrade)"
if ! PLEXITY_REQUIRE_NATIVE=1 "$py" -m pip install -q --disable-pip-version-check "$work/src" >"$log" 2>&1; then
  cat "$log" >&2; echo "env: pip install failed" >&2; exit 1
fi
"$py" -c "import lxml.html.clean, trafilatura; print('lxml.html.clean importable; trafilatura', trafilatura.__version__)"
for module in scrapy datatrove starlette matplotlib sentencepiece; do
  if "$py" -c "import $module" 2>/dev/null; then
    echo "env: $module came with the core install" >&2; exit 1
  fi
done

# Front ends whose extra is missing fail and name the extra to install: a command in one line,
# an import with MissingExtraError's one-line message (the last line of the traceback).
expect_extra() {  # expect_extra EXTRA LINES_ALLOWED COMMAND...
  local extra="$1" lines="$2"; shift 2
  local out status=0
  out="$("$@" 2>&1)" || status=$?
  # (the command that installs it here: this venv's pip, from the folder it was installed from)
  if ((status == 0)) || ! tail -1 <<<"$out" | grep -qF "$py -m pip install '$work/src[$extra]'" \
     || { [[ "$lines" == 1 ]] && (($(wc -l <<<"$out") > 1)); }; then
    echo "env: '$*' should fail naming [$extra]; exit $status, said:" >&2; echo "$out" >&2; exit 1
  fi
  echo "missing extra [$extra]: $(tail -1 <<<"$out")"
}
cd "$work"  # (not the checkout: `python -c` would import its source tree, not the installed package)
expect_extra scrapy any "$py" -c "import plexity_plugins.scrapy"
expect_extra datatrove any "$py" -c "import plexity_plugins.datatrove"
expect_extra web 1 "$work/venv/bin/plexity" serve --port 0
expect_extra datatrove 1 "$work/venv/bin/plexity" run "$repo/examples/sample.warc.gz" --output-dir "$work/run" --executor local
expect_extra ccnet 1 "$work/venv/bin/plexity" models import x --tokenizer ccnet --sp-model "$repo/README.md" \
  --kenlm "$repo/plexity_plugins/data/en-default/model.bin"

# What the message says to run works as said, from another folder: then the front end starts.
said="$("$work/venv/bin/plexity" serve --port 0 2>&1 || true)"
fix="${said##*not installed: }"
(cd / && eval "$fix" >"$work/fix.log" 2>&1) || { cat "$work/fix.log" >&2; echo "env: '$fix' failed" >&2; exit 1; }
"$work/venv/bin/plexity" serve --help >/dev/null
echo "the fix it names works: $fix"

rm -rf "$work/cleaned"
(cd "$work" && "$work/venv/bin/plexity" clean "$repo/examples/sample.warc.gz" --output-dir "$work/cleaned" -q)
"$py" - "$repo/examples/sample.warc.gz" "$work/cleaned/sample.warc.gz" <<'PY'
import sys
from warcio.archiveiterator import ArchiveIterator
def records(path):
    with open(path, "rb") as f:
        return [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI")) for r in ArchiveIterator(f)]
src, out = records(sys.argv[1]), records(sys.argv[2])
print(f"plexity clean: {len(out)} of {len(src)} records written")
assert len(out) == len(src) == 27, (len(src), len(out))
assert [u for _, u in out] == [u for _, u in src]
PY
echo "env: Debian stock pip environment OK"
