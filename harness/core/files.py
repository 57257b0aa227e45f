"""Files written whole or not at all, and never through a link.

Every file the harness replaces (meta.json, reports, plots, caches) is written to
a temporary file beside it, flushed to disk, then renamed over the old one: a
reader, a crash or a full disk leaves the old file or the new one, never half of
one. The rename replaces a symlink at the path instead of writing through it, and
the temporary file is created with mode 0666 less the umask (``mkstemp`` makes
0600, which hid shared caches from the group).
"""

from __future__ import annotations

import errno
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

Writer = Callable[[BinaryIO], None]


def write_atomic(path: Path | str, data: bytes | str | Writer, *, sync: bool = True):
    """Replace ``path`` with ``data`` (bytes, text as UTF-8, or a function that
    writes to a binary file). OSError naming ``path`` on failure (full disk, file
    size limit, no permission); the temporary file is removed on any error."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    except OSError as err:
        raise _naming(err, path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            if callable(data):
                data(fh)
            else:
                fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError):
            raise _naming(err, path) from None
        raise


def append_durably(path: Path | str, data: bytes, header: bytes = b"") -> None:
    """Append ``data`` to ``path`` in one write and fsync it (``header`` first when
    the file is new or empty). OSError naming ``path`` on failure, also when it is
    a symlink (never written through)."""
    path = Path(path)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as err:
        if err.errno == errno.ELOOP:
            why = "is a symbolic link; not written through (remove it)"
            raise OSError(errno.ELOOP, why, str(path)) from None
        raise _naming(err, path) from None
    try:
        if header and os.fstat(fd).st_size == 0:
            data = header + data
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError as err:
        raise _naming(err, path) from None
    finally:
        os.close(fd)


def _naming(err: OSError, path: Path) -> OSError:
    """The same error, naming the file the caller meant (not a temporary name)."""
    if err.errno is None:
        return OSError(f"{path}: {err}")
    return OSError(err.errno, os.strerror(err.errno), str(path))


def real_dir(path: Path | str) -> Path:
    """``path`` as a real directory, created if missing; OSError (ELOOP) when it
    is a symlink: files are never written through one."""
    path = Path(path)
    if path.is_symlink():
        why = "is a symbolic link; not written through (remove it)"
        raise OSError(errno.ELOOP, why, str(path))
    path.mkdir(parents=True, exist_ok=True)
    return path
