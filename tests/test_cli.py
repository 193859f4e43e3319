"""The `plexity` command line, run as a user runs it (a subprocess of the installed script)."""

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path


PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]


def plexity(*args, check=True, env=None):
    proc = subprocess.run([*PLEXITY, *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def last_number(stdout: str) -> float:
    return float(stdout.strip().splitlines()[-1])


def labelled(stdout: str, label: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith(label + ":"))


def test_the_parser_and_plexity_models_import_no_library_a_command_s_work_needs():
    """Every command builds every command's parser: its options' defaults come from light modules, and the
    libraries (warcio with fsspec, BlingFire with numpy, lxml, datatrove ...) are imported by the command that
    uses them.  (Before, each `plexity` command imported ~575 modules, ~0.3 s, before any work.)"""
    heavy = ("numpy", "blingfire", "lxml", "warcio", "fsspec", "datatrove", "trafilatura", "resiliparse", "kenlm",
             "scrapy", "starlette", "plexity_plugins.text.sentences", "plexity_plugins.scoring.scorer",
             "plexity_plugins.extractors.learned")
    code = ("import contextlib, io, sys\nfrom plexity_plugins.cli import main\n"
            "for argv in (['--help'], *([name, '--help'] for name in ('score', 'clean', 'models', 'train', "
            "'calibrate', 'serve', 'report', 'run')), ['models']):\n"
            "    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
            "        main(argv)\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r} or m in {heavy!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_score_prints_the_perplexity_on_the_last_line_with_plain():
    normal = last_number(plexity("score", "--plain", "this is normal text").stdout)
    junk = last_number(plexity("score", "--plain", "this is normal HTML PAGE BOI%& 678346 NOR text").stdout)
    assert normal * 10 <= junk


def test_score_labels_the_perplexity_and_says_which_threshold_applies_to_one_sentence():
    out = plexity("score", "This is normal text.").stdout
    assert labelled(out, "perplexity").startswith("perplexity: 139.")
    assert "sentence threshold: 1692.4, and this is at or below it" in out
    assert "--method sentences" in out and "trim" in out and "5269.3" in out
    assert "plexity clean on this text (method region): kept, 1 of 1 sentence(s) kept" in out


def test_score_of_a_fragment_says_what_plexity_clean_does_and_why_it_scores_high():
    # The first try: the fragment scores above the sentence threshold; the output says
    # so, says what clean does with it, and that the full stop matters.
    out = plexity("score", "this is normal text").stdout
    assert "sentence threshold: 1692.4, and this is above it" in out
    assert "plexity clean on this text (method region): dropped, 0 of 1 sentence(s) kept" in out
    assert "without its full stop" in out


def test_score_sentences_lists_each_sentence_under_a_header():
    lines = plexity("score", "--sentences", "The council met on Monday. Share on Facebook").stdout.splitlines()
    assert lines[0].split("\t") == ["perplexity", "tokens", "unknown", "sentence"]
    assert [line.split("\t")[-1] for line in lines[1:3]] == ["The council met on Monday.", "Share on Facebook"]
    float(lines[1].split("\t")[0])
    plain = plexity("score", "--sentences", "--plain", "The council met on Monday. Share on Facebook").stdout
    assert len(plain.splitlines()) == 3 and float(plain.splitlines()[-1]) > 0
    tabbed = plexity("score", "--sentences", "--plain", "The council\tmet on Monday.").stdout.splitlines()
    assert tabbed[0].split("\t")[1:] == ["6", "0", "The council met on Monday."]  # four columns still


def test_score_reads_stdin():
    proc = subprocess.run([*PLEXITY, "score", "--plain", "-"], input="The council met on Monday.",
                          capture_output=True, text=True)
    assert proc.returncode == 0 and last_number(proc.stdout) > 0


def test_score_takes_the_words_of_a_text_unquoted_too():
    quoted = plexity("score", "--plain", "The council met on Monday.")
    assert plexity("score", "--plain", "The", "council", "met", "on", "Monday.").stdout == quoted.stdout


def test_score_of_an_empty_text_is_an_error_not_nan(tmp_path):
    # `plexity score --document "$(cat page.txt)"` without page.txt: cat fails, the argument is empty
    proc = subprocess.run(["bash", "-c", f'{" ".join(PLEXITY)} score --document "$(cat {tmp_path}/page.txt)"'],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "nan" not in proc.stdout
    assert "the text argument is empty" in proc.stderr and "does FILE exist" in proc.stderr
    proc = subprocess.run([*PLEXITY, "score", "-"], input="  \n", capture_output=True, text=True)
    assert proc.returncode == 2 and "stdin is only whitespace: nothing to score" in proc.stderr
    assert "does FILE exist" not in proc.stderr  # (it was read from stdin already)
    # read from a file that is not there: the shell stops before plexity runs
    proc = subprocess.run(["bash", "-c", f"{' '.join(PLEXITY)} score --document - < {tmp_path}/page.txt"],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and proc.stdout == ""


def test_score_document_is_labelled():
    out = plexity("score", "--document", "The council approved the budget.").stdout
    assert out.startswith("document perplexity: ") and "model en-default" in out


def test_models_lists_the_embedded_model_and_the_paper_names(model_dir):
    out = plexity("models", env={"PLEXITY_MODEL_DIR": str(model_dir)}).stdout
    assert "en-default" in out and "plexity-tok-1" in out
    assert "bigrams-bnc" in out and "trigrams-cord19" in out
    assert plexity("models", "list", env={"PLEXITY_MODEL_DIR": str(model_dir)}).stdout == out


def test_unknown_model_is_a_clear_error_not_a_traceback():
    proc = plexity("score", "--model", "no-such-model", "text", check=False)
    assert proc.returncode == 2
    assert "unknown model 'no-such-model'" in proc.stderr and "Traceback" not in proc.stderr


def test_sentences_kept_are_those_written_out_a_document_dropped_whole_counts_as_dropped(tmp_path):
    # (the short document's sentence was kept by the filter, then the document dropped as too_short: it was
    # counted in sentences_kept, though no output held it; the datatrove step and Scrapy count the same)
    src = tmp_path / "in"
    src.mkdir()
    (src / "long.txt").write_text("The city council approved the budget on Tuesday after a long debate.\n"
                                  "The library opens in the spring.\n")
    (src / "short.txt").write_text("The library opens in the spring.\n")
    out = tmp_path / "out"
    proc = plexity("clean", src, "--output-dir", out, "--min-chars", "60", "--threshold", "1e9")
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["documents_dropped"] == 1 and stats["drop_reasons"] == {"too_short": 1}
    assert (out / "short.txt.txt").read_text() == ""  # (a document dropped whole: an empty output)
    assert "sentences dropped: 1 (32 characters)\n" in proc.stdout  # (no sample: the filter dropped none)
    assert stats["sentences_kept"] == 2 and stats["sentences_dropped"] == 1
    assert stats["chars_kept"] == len("The city council approved the budget on Tuesday after a long debate."
                                      "The library opens in the spring.")
    assert sum(stats["histogram"]["dropped_counts"].values()) == stats["sentences_dropped"]


def test_clean_text_and_html_files_into_relative_paths(tmp_path):
    src = tmp_path / "in"
    (src / "a").mkdir(parents=True)
    (src / "a" / "page.html").write_text(
        "<html><body><nav><a href='/'>Home</a> <a href='/news'>News</a></nav>"
        "<p>The city council approved the budget on Tuesday after a long debate.</p>"
        "<div>Share on Facebook</div></body></html>")
    with gzip.open(src / "a" / "notes.txt.gz", "wt") as f:
        f.write("The library opens in the spring.\nAccept all cookies\n")
    (src / "image.png").write_bytes(b"\x89PNG\r\n")
    out = tmp_path / "out"
    proc = plexity("clean", src, "--output-dir", out, "--extractor", "tags", "--write-dropped", "-q")
    html_out = (out / "a" / "page.html.txt").read_text()
    assert html_out == "The city council approved the budget on Tuesday after a long debate.\n"
    assert (out / "a" / "notes.txt.gz.txt").read_text() == "The library opens in the spring.\n"
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["files"] == 2 and stats["files_skipped"] == 1  # the PNG
    assert stats["documents"] == 2 and stats["sentences_dropped"] == 3
    assert stats["skip_reasons"] == {"unknown_file_type": 1}
    records = [json.loads(line) for line in (out / "plexity-dropped.jsonl").read_text().splitlines()]
    assert [r["source"] for r in records if r["reason"] == "unknown_file_type"] == [str(src / "image.png")]
    dropped = [r for r in records if "text" in r]
    assert sorted(d["text"] for d in dropped) == ["Accept all cookies", "Home News", "Share on Facebook"]
    assert {d["reason"] for d in dropped} == {"outside_main_content_region"}  # tags -> method "regions"
    assert stats["method"] == "regions" and all(d["perplexity"] > 0 for d in dropped)
    assert "3 dropped" in proc.stdout


def test_clean_annotate_marks_instead_of_dropping(tmp_path):
    (tmp_path / "t.txt").write_text("The library opens in the spring.\nAccept all cookies\n")
    proc = plexity("clean", tmp_path / "t.txt", "--output-dir", tmp_path / "out", "--annotate", "-q")
    text = (tmp_path / "out" / "t.txt.txt").read_text()
    assert text.startswith("The library opens in the spring.\n<ppl score=\"")
    assert text.endswith('">Accept all cookies</ppl>\n')
    assert "2 sentences: 1 marked to drop (50.0 %), none removed (--annotate)" in proc.stdout


def test_text_files_get_the_method_for_unextracted_text(tmp_path):
    # With the default extractor (dense, method "trim"), .txt input is not extracted,
    # so it is filtered with "region": junk between paragraphs goes too.
    (tmp_path / "t.txt").write_text("The library opens in the spring.\nShare on Facebook\n"
                                    "The council approved the budget on Tuesday.\n")
    plexity("clean", tmp_path / "t.txt", "--output-dir", tmp_path / "out", "-q")
    assert "Share on Facebook" not in (tmp_path / "out" / "t.txt.txt").read_text()
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert (stats["method"], stats["text_method"], stats["documents_text"]) == ("trim", "region", 1)


def test_the_summary_says_which_method_and_threshold_judged_text_files(tmp_path):
    # The "method trim, threshold ..., extractor learned" of pages is not what judged a text file's document: its
    # own method and threshold did, and the summary says so. A run of text files alone named the pages' settings
    # too, an extractor that read nothing among them; it names what judged its documents only.
    (tmp_path / "t.txt").write_text("The library opens in the spring.\nShare on Facebook\n")
    proc = plexity("clean", tmp_path / "t.txt", "--output-dir", tmp_path / "out", "-q")
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert (f"(model en-default; 1 from text files: not extracted, method region, "
            f"threshold {stats['text_threshold']:g})") in proc.stdout
    assert "extractor" not in proc.stdout and "trim" not in proc.stdout
    assert stats["text_threshold"] != stats["threshold"]


def test_invalid_utf8_in_files_is_counted_and_a_latin_1_file_is_read_as_latin_1(tmp_path):
    (tmp_path / "t.txt").write_bytes("The library opens in the spring. Café".encode() + b" \xff\xfe open.\n")
    (tmp_path / "latin.txt").write_bytes("The library opens in the spring. Café \xbd open.\n".encode("latin-1"))
    plexity("clean", tmp_path / "t.txt", tmp_path / "latin.txt", "--output-dir", tmp_path / "out", "-q")
    assert json.loads((tmp_path / "out" / "plexity-stats.json").read_text())["replaced_chars"] == 2
    assert (tmp_path / "out" / "latin.txt.txt").read_text(encoding="utf-8") == ("The library opens in the spring. "
                                                                                "Café ½ open.\n")


def test_a_utf_16_text_file_is_cleaned_as_text_not_as_replacement_characters(tmp_path):
    text = ("The council approved the budget for the new library on Tuesday evening. "
            "The library will open in the spring, the mayor said.\n")
    (tmp_path / "t.txt").write_bytes(text.encode("utf-16"))
    plexity("clean", tmp_path / "t.txt", "--output-dir", tmp_path / "out", "-q")
    assert (tmp_path / "out" / "t.txt.txt").read_text(encoding="utf-8") == text
    assert json.loads((tmp_path / "out" / "plexity-stats.json").read_text())["replaced_chars"] == 0


def test_outputs_never_overwrite_inputs_or_each_other(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.txt").write_text("The library opens in the spring.")
    (tmp_path / "b" / "x.txt").write_text("The council met on Monday.")
    proc = plexity("clean", tmp_path / "a" / "x.txt", tmp_path / "b" / "x.txt", "-o", tmp_path / "out", check=False)
    assert proc.returncode == 2 and "would both be written" in proc.stderr
    # an output folder that is a file is refused saying so
    (tmp_path / "a" / "file").write_text("")
    proc = plexity("clean", tmp_path / "a" / "x.txt", "-o", tmp_path / "a" / "file", check=False)
    assert proc.returncode == 2 and "is a file, not a folder" in proc.stderr
    # the same file named twice (by a glob and by name, or inside a folder given too) is read once
    proc = plexity("clean", tmp_path / "a" / "x.txt", tmp_path / "a" / "x.txt", tmp_path / "a", "-o", tmp_path / "once")
    assert json.loads((tmp_path / "once" / "plexity-stats.json").read_text())["files"] == 1
    sample = tmp_path / "s.warc.gz"
    sample.write_bytes((Path(__file__).parent.parent / "examples" / "sample.warc.gz").read_bytes())
    proc = plexity("clean", sample, "-o", tmp_path, check=False)
    assert proc.returncode == 2 and "would overwrite it" in proc.stderr
    assert sample.stat().st_size > 1000


def test_output_path_that_is_a_file_is_a_clear_error(tmp_path):
    (tmp_path / "t.txt").write_text("The library opens in the spring.")
    (tmp_path / "taken").write_text("")
    proc = plexity("clean", tmp_path / "t.txt", "-o", tmp_path / "taken", check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_missing_input_is_a_clear_error(tmp_path):
    proc = plexity("clean", tmp_path / "nope.warc.gz", "--output-dir", tmp_path / "out", check=False)
    assert proc.returncode == 2 and "does not exist" in proc.stderr


# -- damaged and hostile inputs -------------------------------------------------------------

def _article_warc(path, pages: int) -> None:
    import io
    import random

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    noise = random.Random(0)
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        for i in range(pages):
            body = (f"<html><body><p>The council met on day {i} and approved the budget.</p>"
                    f"<p>{noise.randbytes(2000).hex()}</p></body></html>").encode()
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(f"http://t/{i}", "response", payload=io.BytesIO(body),
                                                          http_headers=headers))


def test_a_truncated_warc_is_counted_and_named_with_the_record_it_stops_after(tmp_path):
    _article_warc(tmp_path / "cut.warc.gz", 6)
    data = (tmp_path / "cut.warc.gz").read_bytes()
    (tmp_path / "cut.warc.gz").write_bytes(data[:-1000])  # inside the last record's payload
    out = tmp_path / "out"
    proc = plexity("clean", tmp_path / "cut.warc.gz", "--output-dir", out, "--extractor", "tags", "-q")
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["records"] == 6 and stats["documents"] == 5 and stats["skip_reasons"] == {"truncated": 1}
    assert stats["damaged_file_details"] == [f"{tmp_path / 'cut.warc.gz'}: truncated after record 5"]
    assert "truncated after record 5" in proc.stdout and "truncated after record 5" in proc.stderr


def test_a_text_file_named_warc_is_called_text_counted_as_not_a_warc_and_writes_nothing(tmp_path):
    # nothing could be read: exit 1, with a last line that names the file and says what it is
    (tmp_path / "notes.warc").write_text("Shopping list: eggs, milk, bread.\n" * 10)
    out = tmp_path / "out"
    proc = plexity("clean", tmp_path / "notes.warc", "--output-dir", out, "-q", check=False)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (f"plexity clean: error: no input could be read: {tmp_path / 'notes.warc'}: "
                                            f"not a WARC file: a text file (it starts 'Shopping list: eggs, milk, bread. Shoppi')")
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["files"] == 0 and stats["files_skipped"] == 1 and stats["skip_reasons"] == {"not_a_warc": 1}
    assert not (out / "notes.warc").exists()


def test_an_unreadable_first_warc_does_not_stop_the_run(tmp_path):
    """It used to end the whole run: warcio's ArchiveLoadFailed, then a TypeError from
    get_record_offset() on a file that had no record."""
    (tmp_path / "a-random.warc.gz").write_bytes(os.urandom(3000))
    (tmp_path / "b-version.warc").write_bytes(b"WARC/9.9\r\nWARC-Type: response\r\nContent-Length: 0\r\n\r\n\r\n\r\n")
    _article_warc(tmp_path / "c-good.warc.gz", 2)
    out = tmp_path / "out"
    plexity("clean", tmp_path, "--output-dir", out, "--extractor", "tags", "-q")
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["skip_reasons"] == {"not_a_warc": 2} and stats["documents"] == 2 and stats["completed"]


def test_a_gzip_bomb_is_skipped_at_the_cap_with_bounded_memory(tmp_path):
    """An .html.gz and a WARC payload that would each inflate to 4 GiB: reading stops at
    --max-document-bytes, the documents are counted as too_large, and the process never holds
    the gigabytes."""
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    member = gzip.compress(bytes(2**24), compresslevel=9)  # 16 MiB of zeros in 16 kB
    (tmp_path / "bomb.html.gz").write_bytes(member * 256)  # gzip members concatenated: 4 GiB inflated
    with open(tmp_path / "bomb.warc.gz", "wb") as f:  # the same as a Content-Encoding: gzip payload
        writer = WARCWriter(f, gzip=True)
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
                                   protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record("http://t/bomb", "response", payload=io.BytesIO(member * 256),
                                                      http_headers=headers))
    (tmp_path / "page.html").write_text("<p>The council approved the budget for the new library on Tuesday.</p>")
    out = tmp_path / "out"
    # The peak is VmHWM, this process's own: getrusage's ru_maxrss carries over exec the RSS the
    # parent (pytest, grown by earlier tests) had when it forked, so it measured the parent.
    script = ("import sys\n"
              "from plexity_plugins.cli import main\n"
              f"code = main(['clean', {str(tmp_path)!r}, '--output-dir', {str(out)!r}, '-q', '--extractor', 'tags'])\n"
              "hwm = next(line for line in open('/proc/self/status') if line.startswith('VmHWM:'))\n"
              "print(int(hwm.split()[1]) // 1024, file=sys.stderr)\n"
              "sys.exit(code)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    peak_mb = int(proc.stderr.strip().splitlines()[-1])
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["skip_reasons"] == {"too_large": 2} and stats["documents"] == 1
    assert stats["max_document_bytes"] == 50_000_000
    assert not (out / "bomb.html.gz.txt").exists()
    assert peak_mb < 600, f"peak RSS {peak_mb} MB"
    print(f"peak RSS on two 4 GiB gzip bombs: {peak_mb} MB")


def test_clean_shows_what_it_dropped_with_examples(tmp_path):
    sample = Path(__file__).resolve().parents[1] / "examples" / "sample.warc.gz"
    out = plexity("clean", "-q", sample, "--output-dir", tmp_path / "out", "--extractor", "tags").stdout
    line = next(line for line in out.splitlines() if line.startswith("sentences dropped: "))
    assert "'Skip to main content' (19,440)" in line and line.count("(") >= 5
    assert "--write-dropped" in out  # where the full list is


def test_a_run_into_an_earlier_runs_folder_says_what_is_not_its_own(tmp_path):
    # Its stats count this run only: the earlier run's other outputs are named in a note, and
    # its log of dropped sentences, which would read as this run's, is removed.
    (tmp_path / "in").mkdir()
    for name in ("a", "b"):
        (tmp_path / "in" / f"{name}.txt").write_text("The library opens in the spring.\nShare on Facebook\n")
    (tmp_path / "c.txt").write_text("The council approved the budget on Tuesday.\n")
    out = tmp_path / "out"
    first = plexity("clean", tmp_path / "in", "--output-dir", out, "--write-dropped", "-q")
    assert "note:" not in first.stdout and (out / "plexity-dropped.jsonl").is_file()
    again = plexity("clean", tmp_path / "in", "--output-dir", out, "--write-dropped", "-q")
    assert "note:" not in again.stdout  # the same run again rewrites everything it wrote
    other = plexity("clean", tmp_path / "c.txt", "--output-dir", out, "-q")
    assert (f"note: {out} also holds 2 files this run did not write (an earlier run's? e.g. a.txt.txt): "
            f"plexity-stats.json counts this run only; the earlier run's plexity-dropped.jsonl was removed"
            in other.stdout)
    assert not (out / "plexity-dropped.jsonl").exists()
    assert json.loads((out / "plexity-stats.json").read_text())["files"] == 1


def test_clean_reads_the_text_files_train_reads():
    from plexity_plugins.cleaning.file_kinds import TEXT_SUFFIXES
    from plexity_plugins.training.corpora import TextReader

    assert TextReader.suffixes == TEXT_SUFFIXES and ".text" in TEXT_SUFFIXES


def test_the_dropped_log_names_a_document_written_empty(tmp_path):
    # (with --min-chars 0, plexity clean's default, an emptied document is written, empty: the
    # log says which and why, as it does for a dropped one)
    (tmp_path / "nav.html").write_text('<html><body><nav><a href="/">Home</a></nav></body></html>')
    plexity("clean", tmp_path / "nav.html", "-o", tmp_path / "out", "--write-dropped", "-q")
    rows = [json.loads(line) for line in (tmp_path / "out" / "plexity-dropped.jsonl").read_text().splitlines()]
    assert rows == [{"source": str(tmp_path / "nav.html"), "reason": "no_text_extracted",
                     "detail": "its output is written empty"}]
    assert (tmp_path / "out" / "nav.html.txt").read_text() == ""
