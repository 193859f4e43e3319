"""plexity_plugins installs and works in the environments our users have, built here for real.

Each test runs a script of scripts/env/ that makes a new virtual environment the way a user
would and checks the result there (the scripts say what they check):

- a datatrove user's, with the oldest datatrove pyproject.toml allows:
  ``pip install "datatrove[processing]==<lower bound>" "plexity_plugins[datatrove]"`` (datatrove's
  ``processing`` extra pins trafilatura < 1.12): datatrove's own ``WarcReader`` works there (our
  extra brings faust-cchardet and python-magic), ``plexity run --executor ray`` says in one line
  that Ray is missing (exit 2); then with datatrove's ``io`` extra too, the datatrove, executor,
  extractor and sample-WARC tests and a ``plexity run`` of the sample WARC run in it.  (The
  newest datatrove is the one scripts/setup.sh installs: the whole suite runs with it.)
- Debian's own Python with the pip its ``python3 -m venv`` brings, not upgraded (Debian 12: 23.0.1, too
  old to match lxml's ``html-clean`` extra; Debian 13: 25.1.1): ``pip install .``, then ``plexity clean``
  writes every record; a front end whose extra is missing names the command that installs it, which works
  as written.
- a wheel built from the checkout (what ``python -m build`` makes), installed into another environment: the same,
  with KenLM's licences in it and the wheel file named for a missing extra.

Our extension is compiled once, by Debian's pip from a fresh copy of the checkout (the proof that
a user's ``pip install .`` builds it); the datatrove environment installs a copy of that built
folder with its own pip, which reuses the compiled extension, and so does the wheel's build.  A few
minutes in all (kenlm comes from pip's wheel cache, which the set-up filled); ``-m "not environments"``
leaves them out of a quick run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from helpers import warc_record_types

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.environments


def run_script(name: str, work: Path, **env: str) -> str:
    result = subprocess.run(["bash", str(REPO / "scripts" / "env" / name), str(work)], capture_output=True,
                            text=True, timeout=1500, env={**os.environ, **env})
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"scripts/env/{name} failed:\n{output[-6000:]}"
    return output


def stock_venv_pip() -> str:
    """The pip version that Debian's `/usr/bin/python3 -m venv` installs (its ensurepip's wheel)."""
    return subprocess.run(["/usr/bin/python3", "-c", "import ensurepip; print(ensurepip.version())"],
                          capture_output=True, text=True, check=True).stdout.strip()


def oldest_datatrove() -> str:
    """The lower bound of the datatrove extra in pyproject.toml (``datatrove>=X``)."""
    return re.search(r'"datatrove>=([0-9.]+)"', (REPO / "pyproject.toml").read_text()).group(1)


@pytest.fixture(scope="module")
def stock_pip(tmp_path_factory) -> tuple[Path, str]:
    """scripts/env/stock_pip.sh run once: (its work folder, its output).  Its src/ is the copy of the
    checkout Debian's pip built our extension in."""
    work = tmp_path_factory.mktemp("stock-pip")
    return work, run_script("stock_pip.sh", work)


def test_the_oldest_datatrove_we_support_with_its_processing_extra_runs_the_datatrove_tests(tmp_path, stock_pip):
    oldest = oldest_datatrove()
    built, _ = stock_pip
    output = run_script("datatrove_processing.sh", tmp_path, DATATROVE_VERSION=f"=={oldest}",
                        BUILT_SOURCE=str(built / "src"))
    installed = next(line.split()[1] for line in output.splitlines() if re.match(r"datatrove \d", line))
    assert installed.split(".")[:len(oldest.split("."))] == oldest.split("."), installed
    version = next(line.split()[1] for line in output.splitlines() if line.startswith("trafilatura "))
    major, minor = (int(x) for x in version.split(".")[:2])
    assert (major, minor) < (1, 12), f"datatrove[processing] should have brought trafilatura < 1.12, got {version}"
    assert " passed" in output and " failed" not in output
    assert "plexity run: " in output and "environment OK" in output
    assert "datatrove WarcReader: 12 documents" in output  # the sample's 12 HTML pages
    # the command that installs Ray there: that environment's pip, from the folder it was installed from
    venv, src = tmp_path / "venv" / "bin" / "python", tmp_path / "src"
    assert (f"without Ray: plexity run: error: plexity run --executor ray needs Ray, which is not installed in this "
            f"environment: {venv} -m pip install '{src}[ray]'") in output


def test_debian_stock_pip_installs_us_and_cleaning_the_sample_warc_keeps_every_record(stock_pip):
    work, output = stock_pip
    # the pip Debian's own `python3 -m venv` brings, not upgraded: 23.0.1 on Debian 12, 25.1.1 on Debian 13
    assert f"pip {stock_venv_pip()} from {work / 'venv'}" in output, "expected the pip Debian's venv brings"
    assert "lxml.html.clean importable" in output
    assert "plexity clean: 27 of 27 records written" in output
    # a missing extra's message names a command that works as written (this venv's pip, the source folder)
    assert f"the fix it names works: {work / 'venv' / 'bin' / 'python'} -m pip install '{work / 'src'}[web]'" in output


def test_a_wheel_built_from_the_checkout_carries_kenlms_licences_and_a_missing_extra_names_the_wheel(tmp_path,
                                                                                                     stock_pip):
    built, _ = stock_pip
    shutil.copytree(built / "src", tmp_path / "src")  # (its times kept: pip reuses the extension built there)
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(tmp_path / "venv")], check=True)
    bin_dir = tmp_path / "venv" / "bin"
    pip = [str(bin_dir / "python"), "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(tmp_path / "dist"), str(tmp_path / "src")], check=True,
                   capture_output=True, timeout=600)
    wheel = next((tmp_path / "dist").glob("plexity_plugins-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    licences = f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info/licenses/native/third_party/kenlm"
    assert {f"{licences}/LICENSE", f"{licences}/COPYING", f"{licences}/util/double-conversion/LICENSE"} <= set(names)
    assert any(name.startswith("plexity_plugins/runtime/_native") for name in names)
    subprocess.run([*pip, "install", "--no-compile", str(wheel)], check=True, capture_output=True, timeout=600)

    cleaned = tmp_path / "cleaned"
    subprocess.run([str(bin_dir / "plexity"), "clean", str(REPO / "examples" / "sample.warc.gz"), "--output-dir",
                    str(cleaned), "-q"], check=True, cwd=tmp_path, timeout=300)
    assert len(warc_record_types(cleaned / "sample.warc.gz")) == 27 == len(warc_record_types(
        REPO / "examples" / "sample.warc.gz"))
    said = subprocess.run([str(bin_dir / "plexity"), "serve", "--port", "0"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    fix = said.stderr.strip().rpartition("not installed: ")[2]
    # (this environment's Python: bin/python or bin/python3, as the entry point's first line names it)
    assert said.returncode != 0 and re.fullmatch(rf"{re.escape(str(bin_dir))}/python3? -m pip install "
                                                 rf"'{re.escape(str(wheel))}\[web\]'", fix), said.stderr
    subprocess.run(fix, shell=True, check=True, capture_output=True, cwd="/", timeout=600)  # as written
    subprocess.run([str(bin_dir / "plexity"), "serve", "--help"], check=True, capture_output=True, timeout=120)
