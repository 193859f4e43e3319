"""Optional dependencies: each framework or tool is an extra of the package.

    pip install ./plexity_plugins                # the scorer and `plexity clean`
    pip install "./plexity_plugins[datatrove]"   # datatrove steps, `plexity run`
    pip install "./plexity_plugins[scrapy]"      # the Scrapy pipeline and add-on
    pip install "./plexity_plugins[web]"         # `plexity serve`
    pip install "./plexity_plugins[report]"      # `plexity report`'s histogram PNG
    pip install "./plexity_plugins[ccnet]"       # CCNet / edugp SentencePiece models
    pip install "./plexity_plugins[ray]"         # `plexity run --executor ray` (with datatrove)
    pip install "./plexity_plugins[remote]"      # http(s):// and s3:// inputs (hf:// comes with datatrove)
    pip install "./plexity_plugins[all]"         # everything

A front end whose extra is missing stops with one line naming the extra and the command that
installs it where the user stands (`install_extra_command`: this environment's pip, or uv's where uv
made it, and what the package was installed from), never with a traceback from deep inside an import
(`MissingExtraError`, an ImportError).
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
from pathlib import Path

from ..errors import ExecutorUnavailable, MissingExtraError

# extra -> the top-level modules it brings
EXTRAS = {
    "datatrove": ("datatrove", "orjson"),
    "scrapy": ("scrapy", "itemadapter"),
    "web": ("starlette", "uvicorn"),
    "report": ("matplotlib",),
    "ccnet": ("sentencepiece",),  # CCNet / edugp models (plexity_plugins.text.model_tokenizers)
    "ray": ("ray",),
    "remote": ("aiohttp", "s3fs"),  # fsspec's http(s) and s3 filesystems (see require_protocol)
}


def direct_url_record() -> dict | None:
    """The installation's PEP 610 record (direct_url.json); for a source tree run without installing, one naming
    that tree as an editable folder; None when neither (a wheel from an index)."""
    import json
    from importlib import metadata

    try:
        record = metadata.distribution("plexity_plugins").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        record = None
        tree = Path(__file__).resolve().parents[2]
        if (tree / "pyproject.toml").is_file():
            return {"url": tree.as_uri(), "dir_info": {"editable": True}}
    return json.loads(record) if record else None


def install_source(record: dict | None) -> tuple[str | None, str]:
    """(what plexity_plugins was installed from, as an installer is given it again; how: "folder", "editable",
    "archive", "vcs"), by its PEP 610 record: a folder (a local git clone's too) or an archive (wheel, sdist) that is
    still there, or a VCS URL at the commit installed (``git+https://...@<commit>``); (None, "") when none of these (a
    wheel from an index, a file since removed)."""
    from urllib.parse import unquote, urlparse

    if not record or "url" not in record:
        return None, ""
    url = urlparse(record["url"])
    path = Path(unquote(url.path))
    vcs = record.get("vcs_info")
    # (a local clone is named as its folder: pip before 24.1 refuses `name @ git+file:///...`, "Invalid URL")
    if vcs and not (url.scheme == "file" and path.is_dir()):
        return f"{vcs['vcs']}+{record['url']}@{vcs['commit_id']}", "vcs"
    if url.scheme == "file" and path.is_dir():
        return str(path), "editable" if record.get("dir_info", {}).get("editable") else "folder"
    if url.scheme == "file" and path.is_file():
        return str(path), "archive"
    return None, ""


def install_extra_command(extra: str) -> str:
    """The command that installs `extra` into the environment running now, from what plexity_plugins was installed
    from (it is not on PyPI), editable again when it was (so a checkout's editable install stays one): this
    environment's pip; uv's where uv made it without pip (`uv add` in a uv project, whose next sync would undo a
    `uv pip install`)."""
    from importlib import metadata

    try:
        installer = (metadata.distribution("plexity_plugins").read_text("INSTALLER") or "").strip()
    except metadata.PackageNotFoundError:
        installer = ""
    return extra_install_command(extra, direct_url_record(), installer, sys.executable, sys.prefix,
                                 has_pip=importlib.util.find_spec("pip") is not None)


def extra_install_command(extra: str, record: dict | None, installer: str, python: str, prefix: str,
                          has_pip: bool) -> str:
    """`install_extra_command` for an installation recorded as `record` (PEP 610) by `installer` (its INSTALLER:
    "pip", "uv"), in the environment at `prefix` whose Python is `python`."""
    source, kind = install_source(record)
    quote = shlex.quote
    if source is None:
        requirement, hint = f'"PATH/TO/plexity_plugins[{extra}]"', " (your plexity_plugins checkout)"
    elif kind == "vcs":
        requirement, hint = quote(f"plexity_plugins[{extra}] @ {source}"), ""
    else:
        requirement, hint = quote(f"{source}[{extra}]"), ""
    editable = kind == "editable"
    editable_option = "-e " if editable else ""
    uv_made = installer == "uv" or not has_pip
    project = Path(prefix).parent
    if uv_made and source is not None and Path(prefix).name == ".venv" and (project / "uv.lock").is_file():
        return (f"uv add --project {quote(str(project))} {'--editable ' if editable else ''}{quote(source)} "
                f"--extra {extra}")
    if installer == "uv" and not has_pip:
        return f"uv pip install --python {quote(python)} {editable_option}{requirement}{hint}"
    return f"{quote(python)} -m pip install {editable_option}{requirement}{hint}"


def require_extra(extra: str, what: str) -> None:
    """Raise MissingExtraError, naming `extra` and the command that installs it, unless its
    modules can be imported."""
    missing = [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtraError(f"{what} needs {', '.join(missing)}, not installed: {install_extra_command(extra)}")


def require_executor(executor: str, what: str) -> None:
    """Raise ExecutorUnavailable, in one line naming what is missing and how to get it, unless
    `executor` ("slurm", "ray") can be used from here; before anything is written or launched."""
    import shutil

    if executor == "slurm" and shutil.which("sbatch") is None:
        raise ExecutorUnavailable(
            f"{what} needs Slurm's sbatch, which is not on PATH: run it on a login node of a Slurm cluster "
            f"(or install Slurm's client on a machine that has the cluster's slurm.conf: "
            f"apt-get install slurm-client on Debian)")
    if executor == "ray":
        missing = [name for name in EXTRAS["ray"] if importlib.util.find_spec(name) is None]
        if missing:
            raise ExecutorUnavailable(f"{what} needs Ray, which is not installed in this environment: "
                                      f"{install_extra_command('ray')}")


def kenlm_tools_install_command() -> str:
    """The one command that installs KenLM's lmplz and build_binary (`plexity train` needs them),
    as the user can run it from where they stand: with the absolute path of the checkout this
    package runs from (the README's set-up installs it editable), else as run from the root of a
    plexity_plugins checkout."""
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[2]
    setup = checkout / "scripts" / "setup.sh"
    if setup.is_file() and (checkout / "pyproject.toml").is_file():
        return f"bash {setup} --kenlm-tools"
    return "bash scripts/setup.sh --kenlm-tools"


def kenlm_module_install_command() -> str:
    """The command that installs kenlm's Python module into the environment running now: scripts/kenlm_module.py
    of the checkout this package runs from (on Python 3.13+ it compiles kenlm from C++ that Cython 3 generates
    again, which `pip install kenlm` does not), else as run from the root of a plexity_plugins checkout."""
    script = Path(__file__).resolve().parents[2] / "scripts" / "kenlm_module.py"
    if script.is_file():
        return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    return f"{shlex.quote(sys.executable)} scripts/kenlm_module.py, run from the root of a plexity_plugins checkout,"


def is_url(spec: str) -> bool:
    """Whether `spec` names a file or folder by an fsspec URL (``s3://``, ``hf://``, ``https://``
    ...) rather than a local path (``file://`` counts as local)."""
    from fsspec.core import split_protocol

    protocol, _ = split_protocol(spec)
    return protocol not in (None, "file", "local") and len(protocol) > 1  # (C:\ is a path)


_URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'\"]*):[^/\s@'\"]*@")


def without_password(text: str) -> str:
    """`text` with the password of every URL in it (``https://user:password@host/...``) written ``***``: what
    a run shows or records of its input (its logs, its settings record, executor.json, its messages)."""
    return _URL_PASSWORD.sub(r"\1:***@", text)


def local_path(spec: str) -> str:
    """The path a local URL names, else `spec` (without importing fsspec: `plexity clean` of pages imports no
    library of remote files). A ``file://`` URI is read as RFC 8089 and Python's ``Path.as_uri()`` write it
    (``file:///data/my%20crawl`` is ``/data/my crawl``; ``file://localhost/data`` is ``/data``), as Scrapy reads
    its feeds' URIs; a ``file://`` URI of another host is a ValueError; fsspec's ``local://data`` is ``data``.
    The one reading of every front end's paths: the command line's inputs and folders, Scrapy's
    PLEXITY_DROPPED_FILE."""
    if spec[:len("local://")].lower() == "local://":
        return spec[len("local://"):]
    if spec[:len("file://")].lower() != "file://":
        return spec
    import urllib.parse
    import urllib.request

    parsed = urllib.parse.urlparse(spec)
    if parsed.netloc not in ("", "localhost"):
        raise ValueError(f"{spec!r} is a file:// URI of another host ({parsed.netloc}); give a path on this machine, "
                         f"file:///path or /path")
    return urllib.request.url2pathname(parsed.path)


def require_protocol(url: str, what: str) -> None:
    """Raise MissingExtraError unless fsspec can open `url` (its filesystem's package is
    installed), or ValueError if no fsspec filesystem has its protocol."""
    from fsspec.core import split_protocol
    from fsspec.registry import get_filesystem_class

    protocol, _ = split_protocol(url)
    try:
        get_filesystem_class(protocol)
    except ImportError as exc:  # fsspec's message names the package: "Install s3fs to access S3"
        raise MissingExtraError(f"{what}: {url} needs a package that is not installed ({exc}): "
                                f"{install_extra_command('remote')}") from None
    except ValueError as exc:
        raise ValueError(f"{what}: {url}: {exc}") from None
