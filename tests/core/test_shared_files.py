"""The one rule for files the harness creates where others may write (issue 35
items 1-3, "What to build" 2): at each such place a planted file and a planted
symlink are neither written through, nor read, nor imported."""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
from pathlib import Path

import pytest

from harness.core import files
from harness.core.cache import cache_dir
from harness.datasets import DatasetError, load_dataset, save_dataset
from harness.datasets.jsonl import save_streamed
from harness.measure.executors.dask import worker_side

PLUGIN = "MARK = 'shipped'\n"


@pytest.fixture
def victim(tmp_path) -> Path:
    path = tmp_path / "victim.txt"
    path.write_text("keep me")
    return path


@pytest.fixture
def own_tmp(tmp_path, monkeypatch) -> Path:
    """The temporary folder, moved here (nothing in the real /tmp is touched)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setattr(files, "_SCRATCH", {})
    return folder


def test_a_plugin_planted_for_a_dask_worker_is_never_imported(own_tmp, victim):
    """Item 1: a file pre-created at the copy's content-addressed path ran instead
    of the shipped plugin (`if not path.is_file()` kept it)."""
    digest = hashlib.sha256(PLUGIN.encode()).hexdigest()
    planted = "open(%r, 'w').write('ran')\n" % str(victim)
    old = own_tmp / "npuzzle-harness-plugins" / digest[:16] / "rtplug.py"
    old.parent.mkdir(parents=True)
    old.write_text(planted)  # where the copies went before
    private = own_tmp / f"npuzzle-harness-{os.geteuid()}" / "plugins"
    for name, plant in (("rtplug.py", planted), ("linked.py", None)):
        path = private / digest[:16] / name
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.parent.parent.chmod(0o700)
        path.parent.parent.parent.chmod(0o700)
        if plant is None:
            path.symlink_to(victim)
        else:
            path.write_text(plant)
    copies = worker_side._plugin_copies({"/a/rtplug.py": PLUGIN,
                                         "/a/linked.py": PLUGIN})  # fmt: skip
    for copy in copies.values():
        assert Path(copy).read_text() == PLUGIN and not Path(copy).is_symlink()
        assert Path(copy).parent.parent == private
    assert victim.read_text() == "keep me"
    assert os.stat(private).st_mode & 0o777 == 0o700


@pytest.mark.skipif(os.geteuid() != 0, reason="plants a folder of another user")
def test_a_private_folder_another_user_holds_is_not_used(own_tmp, victim):
    """Another user creates this user's folder name first: its content is never
    used; the copies go to a fresh private folder of this process's."""
    squatted = own_tmp / f"npuzzle-harness-{os.geteuid()}"
    (squatted / "plugins").mkdir(parents=True)
    os.chown(squatted, 12345, 12345)
    with pytest.raises(OSError, match="belongs to uid 12345"):
        files.private_dir(squatted)
    (copy,) = worker_side._plugin_copies({"p.py": PLUGIN}).values()
    assert squatted not in Path(copy).parents
    assert os.stat(Path(copy).parent.parent).st_mode & 0o777 == 0o700
    assert Path(copy).read_text() == PLUGIN


def test_private_dir_refuses_a_symlink_and_an_open_folder(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(OSError, match="symbolic link"):
        files.private_dir(tmp_path / "link")
    (tmp_path / "open").mkdir(mode=0o777)
    os.chmod(tmp_path / "open", 0o777)
    with pytest.raises(OSError, match="mode 0777"):
        files.private_dir(tmp_path / "open")
    made = files.private_dir(tmp_path / "new")
    assert os.stat(made).st_mode & 0o777 == 0o700


def test_the_cache_probe_never_writes_through_a_symlink(tmp_path, monkeypatch,
                                                        victim):  # fmt: skip
    """Item 2: `ln -s victim $NPUZZLE_CACHE/pdb/.probe-<pid>` left victim empty."""
    cache = tmp_path / "cache"
    (cache / "pdb").mkdir(parents=True)
    (cache / "pdb" / f".probe-{os.getpid()}").symlink_to(victim)
    (cache / "pdb" / ".probe").symlink_to(victim)
    monkeypatch.setenv("NPUZZLE_CACHE", str(cache))
    assert cache_dir("pdb") == cache / "pdb"
    assert victim.read_text() == "keep me"
    # a cache entry is replaced, never written through
    entry = cache / "pdb" / "3x3-table.bin"
    entry.symlink_to(victim)
    files.write_atomic(entry, b"table")
    assert entry.read_bytes() == b"table" and not entry.is_symlink()
    assert victim.read_text() == "keep me"


def test_a_cache_others_may_write_to_is_not_used(tmp_path, monkeypatch):
    """What is read from the cache is trusted (compiled kernels are code)."""
    cache = tmp_path / "cache"
    (cache / "pdb").mkdir(parents=True)
    monkeypatch.setenv("NPUZZLE_CACHE", str(cache))
    os.chmod(cache / "pdb", 0o777)
    assert cache_dir("pdb") is None
    os.chmod(cache / "pdb", 0o755)
    assert cache_dir("pdb") == cache / "pdb"


@pytest.mark.parametrize("streamed", [False, True])  # generate; import
def test_saving_a_dataset_never_writes_through_a_symlink(tmp_path, victim,
                                                         streamed):  # fmt: skip
    """Item 3: `ln -s victim OUT/.NAME.jsonl.<pid>.tmp` overwrote victim, and
    NAME.jsonl became a symlink."""
    ds = load_dataset("8-seeds")
    out = tmp_path / "out"
    out.mkdir()
    (out / f".{ds.name}.jsonl.{os.getpid()}.tmp").symlink_to(victim)
    (out / f"{ds.name}.jsonl").symlink_to(victim)
    if streamed:
        path = save_streamed(ds, iter(ds.instances), out, force=True)[0]
    else:
        path = save_dataset(ds, out, force=True)
    assert victim.read_text() == "keep me"
    assert not path.is_symlink() and load_dataset(path).checksum == ds.checksum


def test_a_full_disk_while_saving_a_dataset_leaves_no_temporary(tmp_path,
                                                                monkeypatch):  # fmt: skip
    """Item 3: on ENOSPC the .tmp file stayed behind."""

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    out = tmp_path / "out"
    with pytest.raises(DatasetError, match=f"cannot write {out}/8-seeds.jsonl: No sp"):
        save_dataset(load_dataset("8-seeds"), out)
    assert os.listdir(out) == []


def test_temporary_names_are_unpredictable_and_never_reused(tmp_path, victim):
    """A write probe and an atomic write's temporary file are created new (O_EXCL,
    O_NOFOLLOW) under 64 random bits: planting every pid-based name does nothing."""
    for pid in (os.getpid(), os.getppid()):
        (tmp_path / f".probe-{pid}").symlink_to(victim)
        (tmp_path / f".meta.json.{pid}.tmp").symlink_to(victim)
    assert files.can_write(tmp_path)
    files.write_atomic(tmp_path / "meta.json", "{}")
    assert victim.read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.is_symlink()) == [
        "meta.json", "victim.txt"]  # fmt: skip
