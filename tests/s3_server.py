"""moto's S3 server on 127.0.0.1 for tests that read inputs from S3 (the [test] extra has moto and s3fs)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KEY, SECRET = "AKIAPROBE40", "probe40-secret-Zq8w"  # (any pair: moto's default server checks none)


class S3Server:
    """moto's S3 server in its own process on 127.0.0.1; `log` holds the requests it answered, one line each."""

    def __init__(self, **env):
        self.log: list[str] = []
        self.process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", "0"],
                                        env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True)
        for line in self.process.stdout:
            found = re.search(r"Running on (http://\S+)", line)
            if found:
                self.url = found.group(1)
                break
        else:
            raise RuntimeError(f"moto's server did not start (exit {self.process.wait()})")
        threading.Thread(target=lambda: self.log.extend(self.process.stdout), daemon=True).start()

    def fs(self, key=KEY, secret=SECRET) -> "s3fs.S3FileSystem":
        import s3fs

        return s3fs.S3FileSystem(key=key, secret=secret, client_kwargs={"endpoint_url": self.url},
                                 skip_instance_cache=True)

    def options(self, **more) -> dict:
        return {"key": KEY, "secret": SECRET, "client_kwargs": {"endpoint_url": self.url}, **more}

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)

    def listings(self) -> int:
        return sum("list-type=2" in line for line in self.log)


def clean_env(**variables) -> dict:
    """This environment without AWS settings of its own (no ~/.aws, no instance role looked for), and `variables`."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    return {**env, "HOME": "/nonexistent", "AWS_EC2_METADATA_DISABLED": "true", "PYTHONPATH": str(REPO), **variables}
