"""Reading a crawl's WARC from a WACZ against reading the WARC file itself.

    .venv/bin/python bench/wacz_reading.py [--copies 100] [--rounds 5]

Input (built in a temporary folder): examples/sample.warc.gz's records `--copies` times as one ``.warc.gz`` and as
one uncompressed ``.warc``, and WACZs of them (the WARC under archive/, as the WACZ specification lays it out):
stored (as WACZ writers store a WARC) and deflated (a WACZ repacked by ``zip``).  Each round, alternating, in this
process: every record read and judged by `WarcFile` (each HTML payload decoded, as ``plexity clean`` and ``plexity
run`` read them), from the file or from the WACZ's member (`WaczFile`).  The best of `--rounds` counts for each.  The
last line of stdout is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from plexity_plugins.io.wacz_files import WaczFile  # noqa: E402
from plexity_plugins.io.warc_files import WarcFile  # noqa: E402


def read_all(path: Path) -> tuple[int, float]:
    """(records read, seconds) for every record of the WARC at `path`, or of the WARC inside the WACZ at `path`."""
    started = time.perf_counter()
    with open(path, "rb") as f:
        if path.suffix == ".wacz":
            (member,) = WaczFile(f, path.name)
            records = sum(1 for _ in WarcFile(member.fileobj, name=member.name))
        else:
            records = sum(1 for _ in WarcFile(f, name=path.name))
    return records, time.perf_counter() - started


def build(folder: Path, copies: int) -> dict[str, Path]:
    gzipped = (REPO / "examples" / "sample.warc.gz").read_bytes() * copies  # (gzip members, one a record)
    files = {"warc.gz": folder / "crawl.warc.gz", "warc": folder / "crawl.warc"}
    files["warc.gz"].write_bytes(gzipped)
    files["warc"].write_bytes(gzip.decompress(gzipped))
    for name, source, method in (("wacz stored (warc.gz)", "warc.gz", zipfile.ZIP_STORED),
                                 ("wacz deflated (warc.gz)", "warc.gz", zipfile.ZIP_DEFLATED),
                                 ("wacz deflated (warc)", "warc", zipfile.ZIP_DEFLATED)):
        files[name] = folder / f"{name.replace(' ', '-').strip('()').replace('(', '')}.wacz"
        with zipfile.ZipFile(files[name], "w") as wacz:
            wacz.write(files[source], f"archive/{files[source].name}", compress_type=method)
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = build(Path(tmp), args.copies)
        best: dict[str, float] = {}
        records: dict[str, int] = {}
        for _ in range(args.rounds):
            for name, path in files.items():  # (alternating: each round reads every variant once)
                records[name], seconds = read_all(path)
                best[name] = min(best.get(name, seconds), seconds)
        sizes = {name: path.stat().st_size for name, path in files.items()}
    for name in files:
        print(f"{name:25} {records[name]:7,} records {sizes[name] / 1e6:7.1f} MB  {best[name]:6.2f} s  "
              f"{records[name] / best[name]:8,.0f} records/s")
    print(json.dumps({"copies": args.copies, "rounds": args.rounds, "records": records, "bytes": sizes,
                      "seconds": {name: round(value, 3) for name, value in best.items()}}))


if __name__ == "__main__":
    main()
