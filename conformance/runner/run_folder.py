"""The run folder: where a run of the suites leaves what it writes (the run report, a multi-process
run's process logs and steps), and writing a file there in one step."""

from __future__ import annotations

import datetime as _dt
import os
import tempfile
from pathlib import Path
from typing import Mapping, Optional

from . import environment

ROOT = Path(__file__).resolve().parents[2]  # the checkout


def chosen(option: Optional[str], env: Mapping[str, str] = os.environ) -> Optional[Path]:
    """The run folder asked for (``--report-dir``, else ``$CONFORMANCE_REPORT_DIR``), or None."""
    picked = option or env.get(environment.REPORT_DIR)
    return Path(picked) if picked else None


def default(jax_version: str, backend: str) -> Path:
    """``reports/runs/<time>-jax-<version>-<backend>`` in the checkout."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return ROOT / "reports" / "runs" / f"{stamp}-jax-{jax_version}-{backend}"


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step: a reader sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
