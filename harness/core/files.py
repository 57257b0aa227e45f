"""Files written whole or not at all, and never through a link: the one rule for
every file the harness creates, above all in places other users can write to
(the temporary folder, a cache, a dataset's output folder).

- A file the harness replaces (meta.json, reports, plots, caches, datasets) is
  written to a temporary file beside it, created with ``O_CREAT|O_EXCL|O_NOFOLLOW``
  under an unpredictable name (so nothing planted there, file or symlink, is ever
  opened), flushed to disk, then renamed over the old one: a reader, a crash or a
  full disk leaves the old file or the new one, never half of one, and the rename
  replaces a symlink at the path instead of writing through it. The temporary file
  has mode 0666 less the umask (``mkstemp`` makes 0600, which hid shared caches
  from the group) and is removed on any error.
- A write probe (:func:`can_write`) is such a temporary file too.
- A new directory that must appear complete or not at all (a merged run) is
  filled under a temporary name and renamed into place (:func:`building_dir`).
- Code the harness writes in order to import it (plugin copies on Dask workers)
  lives in a private folder (:func:`private_dir`: 0700, owned by this user,
  checked before use) and is checked against its content hash before it is used.
"""

from __future__ import annotations

import atexit
import errno
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

Writer = Callable[[BinaryIO], None]


def write_atomic(path: Path | str, data: bytes | str | Writer, *, sync: bool = True):
    """Replace ``path`` with ``data`` (bytes, text as UTF-8, or a function that
    writes to a binary file). OSError naming ``path`` on failure (full disk, file
    size limit, no permission); the temporary file is removed on any error."""
    path = Path(path)
    fd, tmp = _create_temp(path)
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


def _create_temp(path: Path) -> tuple[int, Path]:
    """A new empty file beside ``path`` under a name nobody can guess (64 random
    bits), opened for writing: (fd, its path). Never opens what is already there:
    a planted file or symlink makes it fail (EEXIST), not write through it."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(tmp, flags, 0o666), tmp
    except OSError as err:
        raise _naming(err, path) from None


def can_write(folder: Path | str) -> bool:
    """Whether a file can be created in ``folder`` (probed with a temporary file
    under an unpredictable name, removed at once: nothing there is written)."""
    try:
        fd, tmp = _create_temp(Path(folder) / ".probe")
    except OSError:
        return False
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:
        pass
    return True


def _naming(err: OSError, path: Path) -> OSError:
    """The same error, naming the file the caller meant (not a temporary name)."""
    if err.errno is None:
        return OSError(f"{path}: {err}")
    return OSError(err.errno, os.strerror(err.errno), str(path))


@contextmanager
def building_dir(path: Path | str) -> Iterator[Path]:
    """A new directory ``path`` that appears whole or not at all: the block fills a
    temporary directory beside it (an unpredictable name), renamed over ``path``
    when the block ends; on any error both are removed and nothing is left.
    FileExistsError naming ``path`` when it exists already (it is never reused)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.mkdir()  # holds the name while the temporary directory fills
    try:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        tmp.mkdir()
    except BaseException:
        path.rmdir()
        raise
    try:
        yield tmp
        os.replace(tmp, path)  # over the empty directory that held the name
    except BaseException as err:
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            path.rmdir()
        except OSError:
            pass
        if isinstance(err, OSError):  # named as it would have been, not as tmp
            name = str(err.filename or path)
            if name.startswith(str(tmp)):
                name = str(path) + name[len(str(tmp)) :]
            raise _naming(err, Path(name)) from None
        raise


def real_dir(path: Path | str) -> Path:
    """``path`` as a real directory, created if missing; OSError (ELOOP) when it
    is a symlink: files are never written through one."""
    path = Path(path)
    if path.is_symlink():
        why = "is a symbolic link; not written through (remove it)"
        raise OSError(errno.ELOOP, why, str(path))
    path.mkdir(parents=True, exist_ok=True)
    return path


def check_owned(path: Path | str, *, private: bool) -> None:
    """OSError naming ``path`` unless it is a directory owned by this user that no
    other user can write to (``private``: that only this user can enter, 0700).
    What other users can write to, they can plant files in."""
    path = Path(path)
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        why = "is a symbolic link; not used (remove it)"
        raise OSError(errno.ELOOP, why, str(path))
    if not stat.S_ISDIR(st.st_mode):
        raise OSError(errno.ENOTDIR, "is not a directory", str(path))
    if st.st_uid != os.geteuid():
        why = f"belongs to uid {st.st_uid}, not to you (uid {os.geteuid()}); not used"
        raise OSError(errno.EPERM, why, str(path))
    loose = st.st_mode & (0o077 if private else 0o002)
    if loose:
        mode = stat.S_IMODE(st.st_mode)
        want = "0700" if private else "not writable by others"
        why = f"has mode {mode:04o} (expected {want}); not used (chmod it)"
        raise OSError(errno.EPERM, why, str(path))


def private_dir(path: Path | str) -> Path:
    """``path`` as a directory only this user can enter (0700, owned by this user),
    created if missing; OSError naming it when it exists otherwise (a symlink,
    another user's, open to others): never used then."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    check_owned(path, private=True)
    return path


_SCRATCH: dict[str, Path] = {}


def private_temp_dir(name: str) -> Path:
    """This user's private folder ``<temp>/npuzzle-harness-<uid>/<name>`` (see
    :func:`private_dir`); when another user holds that name first, a fresh private
    folder of this process's instead (removed at exit): a squatter can delay
    nothing but a cache's reuse."""
    base = Path(tempfile.gettempdir()) / f"npuzzle-harness-{os.geteuid()}"
    try:
        return private_dir(private_dir(base) / name)
    except OSError:
        if name not in _SCRATCH:
            _SCRATCH[name] = Path(tempfile.mkdtemp(prefix=f"npuzzle-harness-{name}-"))
            atexit.register(shutil.rmtree, _SCRATCH[name], ignore_errors=True)
        return _SCRATCH[name]
