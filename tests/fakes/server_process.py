"""The fake Messages API server in a process of its own, as the real API is on another machine.

A benchmark of our own overhead with an instant model must not count the stand-in's work: inside the measured
process the server's threads take 13-19 ms of CPU per chapter and hold the GIL our event loop needs. Here the
server runs in a child process (``python -m tests.fakes.server_process MODULE:FUNCTION``, the function scripts
the server's replies), prints its base URL and serves until its standard input closes.

    with ServerProcess("tests.benchmarks.pipeline:script_instant") as server:
        ...  # LLMClient(..., base_url=server.base_url)
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Protocol

from tests.fakes.anthropic_server import FakeAnthropicServer

REPO = Path(__file__).resolve().parents[2]


class Served(Protocol):
    """A fake server, in this process (:class:`FakeAnthropicServer`) or another (:class:`ServerProcess`):
    what the client needs of it."""

    @property
    def base_url(self) -> str: ...


class ServerProcess:
    """A child process serving the fake API, scripted by ``script`` ("module:function", the function takes
    the :class:`FakeAnthropicServer`); ``base_url`` once entered."""

    def __init__(self, script: str) -> None:
        self.script = script
        self.base_url = ""
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> ServerProcess:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        }
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.fakes.server_process", self.script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=REPO,
        )
        assert self._process.stdout is not None
        self.base_url = self._process.stdout.readline().strip()
        if not self.base_url.startswith("http://127.0.0.1:"):
            self.__exit__()
            raise RuntimeError(f"the fake server process did not start ({self.base_url!r})")
        return self

    def __exit__(self, *exc: object) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def main(argv: list[str]) -> int:
    module, _, function = argv[0].partition(":")
    script = getattr(importlib.import_module(module), function)
    with FakeAnthropicServer() as server:
        script(server)
        print(server.base_url, flush=True)
        sys.stdin.read()  # serve until the parent closes our standard input (or dies)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
