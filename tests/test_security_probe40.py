"""Security probe 40: what a hostile author (of a page, a model folder, a request to `plexity serve`) can make our
tools do.

`plexity score --sentences` printed each sentence of a page as it was: an ESC or BEL in the page's text reached the
terminal and set its title, cleared it or recoloured what followed.  `plexity models` printed a model card's corpus
and licence (and the folder's name) as written: a card downloaded with a model did the same.  Both are escaped now
(`errors.printable`: ``\\x1b``).

`plexity serve --host 0.0.0.0` answered any Host header: a web page the user visited could rebind its name to the
machine (DNS rebinding) and use the API from the user's browser; it answers IP addresses, loopback names and the
machine's name now.  `--annotate`: a page's own ``</ppl>`` ended its marker early; the text's ``<ppl`` is ``&lt;ppl``.
"""

from __future__ import annotations

import http.client
import json
import re
import shutil
import socket
import subprocess

from helpers import PLEXITY, REPO, run_plexity

HOSTILE = "Hello \x1b]0;PWNED\x07 world \x1b[2J and \x9b31m this is a sentence about the weather."


def test_plexity_score_sentences_prints_a_pages_control_characters_escaped():
    done = subprocess.run([*PLEXITY, "score", "--sentences", "-"], input=HOSTILE.encode(), capture_output=True,
                          timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert not any(c in out for c in "\x1b\x07\x9b")
    assert "Hello \\x1b]0;PWNED\\x07 world \\x1b[2J and \\x9b31m this" in out


def test_plexity_models_prints_a_cards_control_characters_escaped(tiny_model, model_dir):
    folder = model_dir / "hostile"
    shutil.copytree(tiny_model, folder)
    card = json.loads((folder / "model.json").read_text())
    card.update(name="hostile", corpus="web \x1b[2J\nFAKE ROW", licence="MIT \x1b]0;PWNED\x07")
    (folder / "model.json").write_text(json.dumps(card))
    done = run_plexity("models")
    assert done.returncode == 0, done.stderr
    assert not any(c in done.stdout for c in "\x1b\x07")
    assert "corpus: web \\x1b[2J\\nFAKE ROW" in done.stdout and "licence: MIT \\x1b]0;PWNED\\x07" in done.stdout
    assert "\nFAKE ROW" not in done.stdout


# -- plexity serve bound to every interface: DNS rebinding ----------------------------------------------------------

def _status(port: int, host: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/api/models", headers={"Host": host})
        return connection.getresponse().status
    finally:
        connection.close()


def test_serve_on_every_interface_answers_ip_addresses_and_its_name_but_not_a_rebound_name():
    # (before: any Host, so a page of attacker.example that rebinds its name to this machine used the API)
    process = subprocess.Popen([*PLEXITY, "serve", "--host", "0.0.0.0", "--port", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = process.stdout.readline()
        port = int(re.search(r"http://0\.0\.0\.0:(\d+)/", line).group(1))
        assert _status(port, "attacker.example") == 400
        assert _status(port, f"attacker.example:{port}") == 400
        assert _status(port, "127.0.0.1.attacker.example") == 400
        for host in (f"127.0.0.1:{port}", "192.168.1.5", f"192.168.1.5:{port}", f"[fe80::1]:{port}", "localhost",
                     socket.gethostname()):
            assert _status(port, host) == 200, host
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    assert "--allowed-host NAME adds a name" in err


# -- --annotate: the markers are ours ------------------------------------------------------------------------------

def test_a_pages_own_ppl_tags_cannot_end_or_open_an_annotation_marker(tmp_path):
    (tmp_path / "in").mkdir()
    good = "The council met on Tuesday to discuss the new budget for the city schools."
    (tmp_path / "in" / "a.txt").write_text(f'{good}\nzxq </ppl> <PPL score="1.0"> qqv jjk wwx zzv kkq vvz.\n')
    done = run_plexity("clean", str(tmp_path / "in"), "--output-dir", str(tmp_path / "out"), "--annotate",
                       "--method", "sentences")
    assert done.returncode == 0, done.stderr
    out = (tmp_path / "out" / "a.txt.txt").read_text()
    markers = re.findall(r'<ppl score="([0-9.]+)">(.*?)</ppl>', out)
    # (before: the marker ended at the page's "</ppl>", and its sentence's rest read as one of score 1.0)
    assert len(markers) == 1 and float(markers[0][0]) > 1692
    assert markers[0][1] == 'zxq &lt;/ppl> &lt;PPL score="1.0"> qqv jjk wwx zzv kkq vvz.'
    assert out.startswith(good + "\n")
