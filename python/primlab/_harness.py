"""Finding and running the `harness` binary, which generates every case and
judges every output: this package never computes an expected value or a
verdict itself."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import sysconfig

ENV = "PRIMLAB_HARNESS"


class HarnessError(RuntimeError):
    """The harness could not be found or did not run as it should."""


class HarnessRefused(HarnessError):
    """The harness exited 2: it refused its input (an unknown primitive or
    contract, a bad size, an unreadable folder). Its own message is kept whole."""


def _candidates() -> list[pathlib.Path]:
    found = []
    # A wheel built by `make python` installs the binary beside the
    # interpreter's scripts (maturin's `bindings = "bin"` puts it there), for
    # a virtual environment, a system and a `--user` install alike.
    schemes = [None, f"{os.name}_user"]
    for scheme in schemes:
        try:
            scripts = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        if scripts:
            found.append(pathlib.Path(scripts) / "harness")
    found.append(pathlib.Path(sys.executable).parent / "harness")
    # In a checkout (python/primlab/ two levels below the root): what cargo
    # built, the newer build first (an older one may predate the sources).
    root = pathlib.Path(__file__).resolve().parents[2]
    if (root / "harness" / "Cargo.toml").is_file():
        builds = [root / "target" / profile / "harness" for profile in ("release", "debug")]
        found += sorted(builds, key=lambda p: p.stat().st_mtime if p.is_file() else 0.0, reverse=True)
    return found


def harness_path() -> pathlib.Path:
    """The harness binary: `$PRIMLAB_HARNESS` when set (it must exist), else
    the one the wheel installed, else a checkout's `target/release` or
    `target/debug` build, whichever is newer. Raises HarnessError listing every place tried."""
    named = os.environ.get(ENV)
    if named:
        path = pathlib.Path(named)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise HarnessError(f"${ENV} names {path}, which is not an executable file")
        return path
    tried = _candidates()
    for path in tried:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise HarnessError(
        "primlab: no harness binary found; install the wheel (`make python`, then pip install target/wheels/...), "
        f"build it (`cargo build -p harness`) or set ${ENV}. Tried: " + ", ".join(str(p) for p in tried)
    )


def run(args: list[str]) -> subprocess.CompletedProcess:
    """Runs the harness with `args`; its exit status 0 (passed) and 1 (a
    check failed) are returned, anything else raises HarnessError with the
    harness's own message (it names what was wrong and the valid values)."""
    binary = harness_path()
    done = subprocess.run([str(binary), *args], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        message = (done.stderr.strip() or done.stdout.strip() or "(no message)").replace("\n", "\n  ")
        raise HarnessRefused(f"harness {' '.join(args[:2])} exited {done.returncode}:\n  {message}")
    return done
