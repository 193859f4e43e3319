"""What a stranger gets who installs us otherwise than with scripts/setup.sh (docs/install.md, "Other ways to
install"): from a built sdist or wheel, from a git URL, with uv.

- The sdist holds what a build of it needs (the extension's sources, KenLM's among them, and the package's data:
  the embedded model, the learned reader's forest and card, the web demo's files) and KenLM's licences, which
  every wheel built from it carries; not a half set of the tests, which do not run without their helpers.
- A front end whose extra is missing names the command that installs it from what the package was installed from
  (PEP 610's direct_url.json, as pip 26.3 and uv 0.13.9 wrote it in those installs): the archive, the commit of
  the git URL, the folder (a local clone's too); with uv where uv made the environment without pip (its
  `python -m pip` is "No module named pip"), `uv add` in a uv project.  Each command was run as named in such an
  installation (docs/install.md).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from plexity_plugins.runtime.extras import extra_install_command

REPO = Path(__file__).resolve().parent.parent
BUILT = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc", "build", "*.egg-info")


def test_the_sdist_holds_the_sources_data_and_kenlm_licences_a_build_needs_and_no_tests(tmp_path):
    source = tmp_path / "checkout"  # (a copy: the build's egg-info must not land in the checkout)
    for name in ("native", "plexity_plugins"):
        shutil.copytree(REPO / name, source / name, ignore=BUILT)
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "tests/test_packaging.py"):
        (source / name).parent.mkdir(exist_ok=True)
        shutil.copy(REPO / name, source / name)
    # (listed before the build: setup.py imports native_sources.py, which writes its .pyc beside it where
    # PYTHONDONTWRITEBYTECODE is not set, as on a fresh machine)
    wanted = {str(path.relative_to(source)) for folder in ("native", "plexity_plugins")
              for path in (source / folder).rglob("*") if path.is_file()}
    subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", str(tmp_path / "dist")], cwd=source,
                   check=True, capture_output=True)
    sdist = next((tmp_path / "dist").glob("plexity_plugins-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
        pkg_info = tar.extractfile(f"{sdist.name.removesuffix('.tar.gz')}/PKG-INFO").read().decode()
    assert wanted - names == set()
    assert {"plexity_plugins/data/en-default/model.bin", "plexity_plugins/extractors/learned/forest.json",
            "native/third_party/kenlm/lm/model.cc", "setup.py"} <= names
    assert not [name for name in names if name.startswith("tests/")]
    licences = [line.split(": ", 1)[1] for line in pkg_info.splitlines() if line.startswith("License-File: ")]
    assert licences == ["LICENSE", "native/third_party/kenlm/LICENSE", "native/third_party/kenlm/COPYING",
                        "native/third_party/kenlm/COPYING.LESSER.3",
                        "native/third_party/kenlm/util/double-conversion/LICENSE",
                        "plexity_plugins/text/LICENSE.cc_net"]
    assert "License-Expression: Apache-2.0 AND LGPL-2.1-or-later AND BSD-3-Clause AND MIT AND CC-BY-SA-4.0" \
        in pkg_info.splitlines()


def test_a_wheel_or_sdist_installed_from_a_file_names_that_file_with_the_extra(tmp_path):
    wheel = tmp_path / "plexity_plugins-0.1.0-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"")
    record = {"archive_info": {"hash": "sha256=db44"}, "url": wheel.as_uri()}  # pip 26.3's
    assert extra_install_command("web", record, "pip", "/env/bin/python", "/env", has_pip=True) == \
        f"/env/bin/python -m pip install '{wheel}[web]'"
    wheel.unlink()  # gone since: the user is pointed to their checkout
    assert extra_install_command("web", record, "pip", "/env/bin/python", "/env", has_pip=True) == \
        '/env/bin/python -m pip install "PATH/TO/plexity_plugins[web]" (your plexity_plugins checkout)'


def test_a_git_install_names_the_commit_it_installed_and_a_local_clone_its_folder(tmp_path):
    commit = {"commit_id": "90011d36fa60ea21fc8c41c1b6a3ecb8d323d3ce", "vcs": "git"}
    record = {"url": "https://example.org/plexity_plugins.git", "vcs_info": commit}  # pip's, of `pip install git+URL`
    assert extra_install_command("web", record, "pip", "/env/bin/python", "/env", has_pip=True) == (
        "/env/bin/python -m pip install 'plexity_plugins[web] @ "
        "git+https://example.org/plexity_plugins.git@90011d36fa60ea21fc8c41c1b6a3ecb8d323d3ce'")
    # `pip install git+file:///...`: pip before 24.1 (Debian 12's 23.0.1) refuses `name @ git+file:///...`
    clone = tmp_path / "plexity_plugins"
    clone.mkdir()
    record = {"url": clone.as_uri(), "vcs_info": commit}
    assert extra_install_command("web", record, "pip", "/env/bin/python", "/env", has_pip=True) == \
        f"/env/bin/python -m pip install '{clone}[web]'"


def test_an_environment_uv_made_without_pip_is_told_uvs_command(tmp_path):
    checkout = tmp_path / "plexity_plugins"
    checkout.mkdir()
    record = {"url": checkout.as_uri(), "dir_info": {}}  # uv 0.13.9's, of `uv pip install ./plexity_plugins`
    venv = tmp_path / "venv"
    assert extra_install_command("web", record, "uv", f"{venv}/bin/python", str(venv), has_pip=False) == \
        f"uv pip install --python {venv}/bin/python '{checkout}[web]'"
    # with pip there (`uv venv --seed`), its pip; and so for pip's own installs
    assert extra_install_command("web", record, "uv", f"{venv}/bin/python", str(venv), has_pip=True) == \
        extra_install_command("web", record, "pip", f"{venv}/bin/python", str(venv), has_pip=True) == \
        f"{venv}/bin/python -m pip install '{checkout}[web]'"


def test_a_uv_project_is_told_uv_add_which_its_next_sync_keeps(tmp_path):
    checkout, project = tmp_path / "plexity_plugins", tmp_path / "proj"
    checkout.mkdir()
    (project / ".venv").mkdir(parents=True)
    (project / "uv.lock").write_text("version = 1\n")
    record = {"url": checkout.as_uri(), "dir_info": {"editable": False}}  # uv 0.13.9's, of `uv add ../checkout`
    python = f"{project}/.venv/bin/python"
    assert extra_install_command("web", record, "uv", python, str(project / ".venv"), has_pip=False) == \
        f"uv add --project {project} {checkout} --extra web"
    editable = {"url": checkout.as_uri(), "dir_info": {"editable": True}}  # `uv add --editable`
    assert extra_install_command("web", editable, "uv", python, str(project / ".venv"), has_pip=False) == \
        f"uv add --project {project} --editable {checkout} --extra web"
