"""A remote cluster, reached safely, and its faults (issue 24: TLS, items 5, 6, 7
and 13). One real TLS cluster on loopback (a scheduler and a worker started as a
user would, with certificates made here by openssl) serves the whole story:
a run over TLS, a client without certificates refused in one line, every worker
dying mid-run, then the scheduler dying mid-run, each a resumable stop. The
address checks need no cluster."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from plugins.tiny import make_dataset, walk
from test_dask_executor import real_cluster
from typer.testing import CliRunner

import harness
from harness import results as res
from harness.cli import app
from harness.measure import runner
from harness.measure.executors.dask import address as where
from harness.puzzle import goal_board, grid

distributed = pytest.importorskip("distributed", reason="needs the dask extra")


class _Records(logging.Handler):
    """Every log record handed to it, kept."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def one_line_error(result, *fragments: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def run_cli(tmp_path: Path, *args: str):
    return CliRunner().invoke(app, [
        "run", "--solvers", "bfs", "--datasets", "8-seeds", "--out", str(tmp_path),
        "--executor", "dask", *args,
    ])  # fmt: skip


@pytest.mark.parametrize(
    "scheduler, said",
    [
        ("foo://x:1", "--scheduler 'foo://x:1': unknown protocol 'foo://'"),
        ("", "--scheduler '': empty; give tcp://HOST:PORT or tls://HOST:PORT"),
        ("tcp://127.0.0.1", "expected tcp://HOST:PORT"),
        ("tcp://127.0.0.1:99999", "port '99999' is not a number from 1 to 65535"),
        ("tls://127.0.0.1:9", "tls:// needs the cluster's CA and a client certificate"),
        ("tcp://127.0.0.1:9", "--scheduler tcp://127.0.0.1:9: cannot connect"),
        # was "tcp://[:]:1 ... Name or service not known" (issue 35 item 15)
        ("tcp://[::1", "expected tcp://[IPV6]:PORT, e.g. tcp://[::1]:8786"),
        ("tcp://::1:8786", "an IPv6 address goes in brackets: tcp://[::1]:8786"),
        ("tcp://[nope]:1", "expected tcp://[IPV6]:PORT"),
        ("tcp://127.0.0.1:1_0", "port '1_0' is not a number from 1 to 65535"),
    ],
)
def test_bad_scheduler_addresses_are_one_line_at_once(tmp_path, scheduler, said):
    """Were internal errors; nothing listening took the 30 s connect timeout."""
    one_line_error(run_cli(tmp_path, "--scheduler", scheduler), said)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "banner, said",
    [
        (None, "accepts connections but sent no Dask handshake within 1.5 s"),
        (b"SSH-2.0-OpenSSH_9.2p1\r\n", "not a Dask scheduler: it answered 'SSH-2.0-'"),
        (b"HTTP/1.1 400 Bad Request\r\n\r\n",
         "not a Dask scheduler: it answered 'HTTP/1.1'"),  # fmt: skip
        (b"", "closed the connection without a Dask handshake"),
    ],
)
def test_a_port_that_is_no_scheduler_is_one_line_in_bounded_time(
    tmp_path, monkeypatch, banner, said
):
    """A silent port hung inside distributed.Client() (killed after 150 s); an SSH
    or HTTP banner was `internal error: MemoryError: Unable to allocate 3.07 EiB`
    (issue 35 item 8). A server socket on loopback plays each."""
    import socket
    import threading
    import time

    from harness.measure.executors.dask import client

    monkeypatch.setattr(client, "CONNECT_TIMEOUT", 1.5)
    server = socket.create_server(("127.0.0.1", 0))
    held = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            if banner is not None:
                conn.sendall(banner)
            if banner == b"":
                conn.close()
            else:
                held.append(conn)  # silent: kept open, never answering

    threading.Thread(target=serve, daemon=True).start()
    port = server.getsockname()[1]
    started = time.monotonic()
    try:
        one_line_error(run_cli(tmp_path, "--scheduler", f"tcp://127.0.0.1:{port}"),
                       f"--scheduler tcp://127.0.0.1:{port}: {said}")  # fmt: skip
    finally:
        server.close()
        for conn in held:
            conn.close()
    assert time.monotonic() - started < 30
    assert list(tmp_path.iterdir()) == []


def test_a_tls_port_that_never_shakes_hands_is_one_line_in_bounded_time(
    tmp_path, monkeypatch
):
    """A tls:// address whose server accepts TCP and never answers the TLS client
    hello (a TLS server speaks after the client, so the plain handshake probe
    cannot tell): the connect timeout ends it with one line (issue 35 item 8)."""
    import socket
    import time

    from harness.measure.executors.dask import client

    monkeypatch.setattr(client, "CONNECT_TIMEOUT", 1.5)
    tls = certificates(tmp_path)
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]  # the backlog accepts; nobody reads or writes
    out = tmp_path / "results"
    started = time.monotonic()
    try:
        one_line_error(
            run_cli(out, "--scheduler", f"tls://127.0.0.1:{port}", "--tls-ca",
                    tls[0], "--tls-cert", tls[1], "--tls-key", tls[2]),
            f"--scheduler tls://127.0.0.1:{port}: cannot reach a scheduler",
        )  # fmt: skip
    finally:
        server.close()
    assert time.monotonic() - started < 30
    assert not out.exists() or list(out.iterdir()) == []


def test_tls_files_need_a_tls_scheduler_and_plain_tcp_off_loopback_warns(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    one_line_error(
        run_cli(tmp_path, "--scheduler", "tcp://127.0.0.1:9", "--tls-ca", str(ca),
                "--tls-cert", str(ca)),
        "TLS certificates need a tls:// address",
    )  # fmt: skip
    one_line_error(
        run_cli(tmp_path, "--scheduler", "tls://127.0.0.1:9", "--tls-ca", str(ca)),
        "--tls-cert is missing",
    )
    # (no connection is made: the address is only parsed)
    for address in ("tcp://127.0.0.1:8786", "tcp://localhost:8786", "tls://10.0.0.5:1"):
        assert where.plain_warning(where.parse_address(address)) is None
    said = where.plain_warning(where.parse_address("tcp://10.0.0.5:8786"))
    assert said.startswith("--scheduler tcp://10.0.0.5:8786: plain tcp to another")


# ------------------------------------------------------------ the TLS cluster


def certificates(folder: Path) -> tuple[str, str, str]:
    """A throwaway CA and one certificate it signed (every endpoint shares it)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True,
                       capture_output=True, timeout=60)  # fmt: skip

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days",
            "2", "-subj", "/CN=npuzzle-test-ca")  # fmt: skip
    openssl("req", *ec, "-keyout", "key.pem", "-out", "cert.csr", "-subj",
            "/CN=127.0.0.1")  # fmt: skip
    openssl("x509", "-req", "-in", "cert.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "cert.pem", "-days", "2")  # fmt: skip
    return tuple(str(folder / f) for f in ("ca.pem", "cert.pem", "key.pem"))


KILLERS = '''
import os, signal
from harness.solver import register


@register("kills_workers", optimal=False, budget_seconds=30)
def kills_workers(start, goal, grid, *, counters, heuristic):
    """Kills the Dask worker that runs it and its nanny: no worker is left."""
    worker = os.getppid()
    with open(f"/proc/{worker}/stat") as fh:
        nanny = int(fh.read().rsplit(")", 1)[1].split()[1])
    os.kill(nanny, signal.SIGKILL)
    os.kill(worker, signal.SIGKILL)
    return None


@register("kills_scheduler", optimal=False, budget_seconds=30)
def kills_scheduler(start, goal, grid, *, counters, heuristic):
    os.kill(SCHEDULER_PID, signal.SIGKILL)
    return None
'''


def test_a_tls_cluster_runs_refuses_strangers_and_its_faults_stop_resumably(
    tmp_path, monkeypatch
):
    tls = certificates(tmp_path)
    flags = ["--tls-ca", tls[0], "--tls-cert", tls[1], "--tls-key", tls[2]]
    (tmp_path / "cluster").mkdir()
    with real_cluster(tmp_path / "cluster", workers=1, tls=tls) as (
        address, procs, _family
    ):
        assert address.startswith("tls://127.0.0.1:")
        out = tmp_path / "results"
        ok = run_cli(out, "--scheduler", address, *flags, "--repeats", "1",
                     "--no-memory", "-q", "--no-report")  # fmt: skip
        assert ok.exit_code == 0, ok.output
        run_dir = Path(ok.output.strip().splitlines()[-1])
        meta = res.read_meta(run_dir)
        assert meta["executors"][-1]["scheduler"] == address
        assert not any("plain tcp" in w for w in meta["warnings"])
        # a client without the cluster's certificates gets nowhere
        patience = "harness.measure.executors.dask.client.CONNECT_TIMEOUT"
        monkeypatch.setattr(patience, 3.0)
        stranger = run_cli(tmp_path / "s", "--scheduler", address.replace("tls", "tcp"))
        assert stranger.exit_code == 2  # TLS waits for the client to speak first:
        assert "sent no Dask handshake within 3 s" in stranger.output  # said so
        monkeypatch.setattr(patience, 60.0)

        # every worker dies mid-run: a resumable stop, not a silent wait
        plugin = tmp_path / "killers.py"
        plugin.write_text(KILLERS.replace("SCHEDULER_PID", str(procs[0].pid)))
        monkeypatch.setattr(
            "harness.measure.executors.dask.client.NO_WORKERS_SECONDS", 2.0
        )
        g = grid(2, 3)
        goal = goal_board("standard", g)
        one = make_dataset("one23", [walk(goal, g, 5, seed=3)], g, goal)
        common = dict(repeats=1, warmup=0, memory_pass=False, out=out,
                      executor="dask", scheduler=address, tls=tls,
                      plugins=[str(plugin)])  # fmt: skip
        with pytest.raises(runner.RunStopped, match="no Dask worker connected") as a:
            harness.run(["kills_workers"], [one], **common)
        assert res.read_meta(a.value.run_dir)["interrupted"]
        # a new worker; then the scheduler dies mid-run
        procs.append(subprocess.Popen(
            [str(Path(sys.executable).parent / "dask"), "worker", address,
             "--nthreads", "1", "--name", "w9", "--no-dashboard",
             "--tls-ca-file", tls[0], "--tls-cert", tls[1], "--tls-key", tls[2]],
            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        ))  # fmt: skip
        heard = _Records()  # Dask's client logged ~40 lines of traceback to stderr
        logging.getLogger("distributed.client").addHandler(heard)  # (issue 35)
        try:
            with pytest.raises(runner.RunStopped, match="lost the Dask scheduler") as b:
                harness.run(["kills_scheduler"], [one], **common)
        finally:
            logging.getLogger("distributed.client").removeHandler(heard)
        assert f"0 of 1 cells stored in {b.value.run_dir}" in str(b.value)
        assert heard.records == []  # our one `stopped:` line says it
        assert procs[0].poll() is not None  # (the scheduler is gone indeed)
        os.killpg(procs[-1].pid, signal.SIGTERM)
