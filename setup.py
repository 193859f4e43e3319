"""Build of the compiled hot path, plexity_plugins.runtime._native (everything else is in pyproject.toml).

The extension is native/plexity_native.cpp and native/learned_reader.cpp (the learned reader) plus KenLM's query code (native/third_party/kenlm: the
lm/ and util/ sources of the kenlm 0.3.0 sdist, LGPL-2.1, unmodified), compiled in so
that tokenising and scoring a page is one C++ loop.  Sources are compiled in parallel
(one job per CPU): KenLM alone is ~40 files.

If the extension cannot be built, the package still installs and runs the same
algorithm in pure Python (slower); set PLEXITY_REQUIRE_NATIVE=1 to make that an error.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
KENLM = Path("native") / "third_party" / "kenlm"


def kenlm_sources() -> list[str]:
    sources = []
    for folder in ("util/double-conversion", "util", "lm"):
        for path in sorted((HERE / KENLM / folder).glob("*.cc")):
            if not path.name.endswith(("test.cc", "main.cc")):
                sources.append(str(path.relative_to(HERE)))
    return sources


class ParallelBuildExt(build_ext):
    """build_ext that compiles one extension's sources in parallel and tolerates failure."""

    def build_extension(self, ext):
        compiler = self.compiler
        serial_compile = compiler.compile

        def parallel_compile(sources, output_dir=None, macros=None, include_dirs=None, debug=0,
                             extra_preargs=None, extra_postargs=None, depends=None):
            macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
                output_dir, macros, include_dirs, sources, depends, extra_postargs)
            cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)

            def one(obj):
                src, ext_ = build[obj]
                compiler._compile(obj, src, ext_, cc_args, extra_postargs, pp_opts)

            with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
                list(pool.map(one, objects))
            return objects

        compiler.compile = parallel_compile
        try:
            super().build_extension(ext)
        except Exception as error:  # noqa: BLE001 - any compiler failure
            if os.environ.get("PLEXITY_REQUIRE_NATIVE"):
                raise
            print(f"WARNING: plexity_plugins.runtime._native not built ({error}); the pure-Python path "
                  f"will be used (same results, slower)", file=sys.stderr)
        finally:
            compiler.compile = serial_compile


def sources_fingerprint() -> str:
    """native_sources.fingerprint of native/ (loaded by its path: the package is not built yet)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("native_sources", HERE / "plexity_plugins/runtime/native_sources.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.fingerprint(HERE / "native")


native = Extension(
    "plexity_plugins.runtime._native",
    sources=["native/plexity_native.cpp", "native/learned_reader.cpp", *kenlm_sources()],
    include_dirs=[str(KENLM)],
    define_macros=[("KENLM_MAX_ORDER", "6"), ("NDEBUG", None), ("HAVE_CLOCKGETTIME", None),
                   ("PLEXITY_NATIVE_SOURCES", f'"{sources_fingerprint()}"')],  # (`_native.SOURCES`)
    # (-ffp-contract=off: no fused multiply-adds, so the compiled reader's sums round as forest.py's do on every
    # processor; GCC 12 for aarch64 fused 16 in learned_reader.cpp without it; on x86-64 the module is the same bytes)
    extra_compile_args=["-std=c++17", "-O3", "-g0", "-w", "-ffp-contract=off"],
    extra_link_args=["-g0"],
    libraries=["rt"],
    language="c++",
)

setup(ext_modules=[native], cmdclass={"build_ext": ParallelBuildExt})
