"""What a Common Crawl WAT file cost `plexity run` (`WarcHtmlReader`), read to its end for no document, against the
skip by its name that replaced the reading.

    .venv/bin/python bench/wat_files.py [--records 50000] [--json-bytes 1500] [--rounds 3]

Input (built in a temporary folder with warcio, as Common Crawl writes a WAT): ``CC-MAIN-00000.warc.wat.gz``, a
``warcinfo`` record, then `--records` ``metadata`` records of ``application/json`` (an ``Envelope`` as Common Crawl's:
the WARC and HTTP headers of a record of its WARC, the page's title, metas and links), each about `--json-bytes`
bytes of JSON (its links' URLs random, so that it compresses as a crawl's do), each record a gzip member of its own.
Each round, alternating, in this process: the file read as `WarcHtmlReader` read it before (its `_read_warc`: every
record read, judged and counted, ``skipped_not_response``) and as it reads it now (`read_file`: skipped by its name,
``wat_file``).  The best of `--rounds` counts for each.  The last line of stdout is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import string
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from plexity_plugins.datatrove import WarcHtmlReader  # noqa: E402


def envelope(rng: random.Random, number: int, json_bytes: int) -> bytes:
    """A WAT record's JSON, about `json_bytes` long, shaped as Common Crawl's."""
    host = "".join(rng.choices(string.ascii_lowercase, k=10)) + ".example.org"
    url = f"https://{host}/page/{number}"
    links: list[dict] = []
    data = {"Container": {"Filename": "CC-MAIN-00000.warc.gz", "Compressed": True,
                          "Offset": str(number * 9000), "Gzip-Metadata": {"Deflate-Length": "9000"}},
            "Envelope": {"Format": "WARC", "WARC-Header-Length": "540", "Actual-Content-Length": "42000",
                         "WARC-Header-Metadata": {"WARC-Type": "response", "WARC-Target-URI": url,
                                                  "WARC-Date": "2024-05-18T01:02:03Z",
                                                  "WARC-Record-ID": f"<urn:uuid:{rng.getrandbits(128):032x}>"},
                         "Payload-Metadata": {"HTTP-Response-Metadata": {
                             "Response-Message": {"Status": "200", "Version": "HTTP/1.1", "Reason": "OK"},
                             "Headers": {"Content-Type": "text/html; charset=UTF-8", "Server": "nginx"},
                             "HTML-Metadata": {"Head": {"Title": f"Page {number} of {host}",
                                                        "Metas": [{"name": "viewport", "content": "width=device"}]},
                                               "Links": links}}}}}
    while len(json.dumps(data)) < json_bytes:
        path = "".join(rng.choices(string.ascii_lowercase + string.digits, k=rng.randint(8, 30)))
        links.append({"path": "A@/href", "url": f"https://{host}/{path}", "text": path[:12]})
    return json.dumps(data).encode()


def build(path: Path, records: int, json_bytes: int) -> None:
    from warcio.warcwriter import WARCWriter

    rng = random.Random(1)
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)  # (a gzip member a record, as Common Crawl writes them)
        writer.write_record(writer.create_warcinfo_record(path.name, {"format": "WARC File Format 1.1"}))
        for number in range(records):
            writer.write_record(writer.create_warc_record(
                f"https://example.org/{number}", "metadata", payload=io.BytesIO(envelope(rng, number, json_bytes)),
                warc_content_type="application/json"))


def read_before(folder: Path, name: str) -> tuple[dict, float]:
    """What the reader did with a WAT before: every record read (`_read_warc`, as `read_file` called it)."""
    reader = WarcHtmlReader(str(folder))
    started = time.perf_counter()
    with open(folder / name, "rb") as f:
        documents = sum(1 for _ in reader._read_warc(f, name))
    return {"documents": documents, **counters(reader)}, time.perf_counter() - started


def read_now(folder: Path, name: str) -> tuple[dict, float]:
    reader = WarcHtmlReader(str(folder))
    started = time.perf_counter()
    documents = sum(1 for _ in reader.read_file(name))
    return {"documents": documents, **counters(reader)}, time.perf_counter() - started


def counters(reader) -> dict:
    return {name: stat.total for name, stat in reader.stats.stats.items() if name != "time"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--json-bytes", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder, name = Path(tmp), "CC-MAIN-00000.warc.wat.gz"
        started = time.perf_counter()
        build(folder / name, args.records, args.json_bytes)
        built = time.perf_counter() - started
        best: dict[str, float] = {}
        counts: dict[str, dict] = {}
        for _ in range(args.rounds):
            for label, read in (("before (read to its end)", read_before), ("now (skipped by its name)", read_now)):
                counts[label], seconds = read(folder, name)
                best[label] = min(best.get(label, seconds), seconds)
                print(f"{label}: {seconds:.3f} s {counts[label]}", flush=True)
        print(json.dumps({"records": args.records, "json_bytes": args.json_bytes, "rounds": args.rounds,
                          "file_bytes": (folder / name).stat().st_size, "build_seconds": round(built, 1),
                          "seconds": {k: round(v, 4) for k, v in best.items()}, "counters": counts}))


if __name__ == "__main__":
    main()
