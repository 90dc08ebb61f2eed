"""The run folder: where a run of the suites leaves what it writes (the run report, a multi-process
run's process logs and steps), and writing a file there in one step."""

from __future__ import annotations

import datetime as _dt
import os
import tempfile
from pathlib import Path
from typing import Mapping, Optional

from . import environment
from .devices import UsageError

ROOT = Path(__file__).resolve().parents[2]  # the checkout


def chosen(option: Optional[str], env: Mapping[str, str] = os.environ) -> Optional[Path]:
    """The run folder asked for (``--report-dir``, else ``$CONFORMANCE_REPORT_DIR``), or None."""
    picked = option or env.get(environment.REPORT_DIR)
    return Path(picked) if picked else None


def default(jax_version: str, backend: str) -> Path:
    """``reports/runs/<time>-jax-<version>-<backend>`` in the checkout."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return ROOT / "reports" / "runs" / f"{stamp}-jax-{jax_version}-{backend}"


MADE: set = set()  # the run folders this process made (a run that reports nothing takes its own back)


def check_usable(folder: Path, origin: str, create: bool = True) -> None:
    """Raise UsageError unless ``folder`` is (or, with ``create``, now is) a folder this process can
    write into; ``origin`` names where it was asked for (``--report-dir``). Without ``create`` (a run
    that writes nothing, such as ``--co``) nothing is made: the nearest existing parent is checked."""
    where = f"{origin} {folder}"
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{where}: is a file, not a folder (name a folder for the run report)")
    if create:
        if not folder.exists():
            MADE.add(folder.absolute())
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"{where}: cannot be made ({e.strerror}: {e.filename})") from None
    existing = next(p for p in (folder, *folder.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise UsageError(f"{where}: cannot be made ({existing} is a file)")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{where}: not writable ({existing})")


def file_mode() -> int:
    """The mode a new file gets here (0644 under the usual umask 022): readable by an artifact
    uploader or a colleague, unlike a temporary file's 0600."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step: a reader sees the old file or the new one. The
    folder is made if missing; the file gets ``file_mode()``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
