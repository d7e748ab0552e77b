"""Clusters for the distributed tests: servers in this process, tasks in processes of their own.

Everything listens on 127.0.0.1 at ports the system says are free.  A test
that starts something stops it: :func:`in_process_cluster` stops its servers,
:class:`TaskProcesses` kills and reaps its processes (also when the test
fails or times out half-way), and every wait here has a bound.

A task in a process of its own is started with the launcher,
``python -m minitf.distributed.launch --cluster JSON --job J --task N``, which
prints ``READY grpc://host:port`` once it serves; its standard input is a
pipe from this process, so it also exits if the test runner dies.
"""

import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time

import minitf as tf
from minitf.distributed.shared_memory import unlink_segments_of  # noqa: F401 (tests import it here)

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Seconds a task process has to print READY (Python, minitf and grpc import first).
START_TIMEOUT = 60.0


def free_ports(count):
    """``count`` distinct free TCP ports on 127.0.0.1 (all bound at once, then freed)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def loopback_cluster(**tasks_per_job):
    """``{"ps": ["127.0.0.1:p0"], "worker": [...]}`` with ``tasks_per_job`` tasks per job."""
    ports = iter(free_ports(sum(tasks_per_job.values())))
    return {job: ["127.0.0.1:%d" % next(ports) for _ in range(count)]
            for job, count in tasks_per_job.items()}


@contextlib.contextmanager
def in_process_cluster(**tasks_per_job):
    """Starts one ``tf.train.Server`` per task in this process; yields
    ``{(job, index): server}`` and stops them all afterwards."""
    cluster = tf.train.ClusterSpec(loopback_cluster(**tasks_per_job))
    servers = {}
    try:
        for job in cluster.jobs:
            for index in cluster.task_indices(job):
                servers[(job, index)] = tf.train.Server(cluster, job, index)
        yield servers
    finally:
        for server in servers.values():
            server.stop()


def rpc_methods_called(monkeypatch):
    """The list of gRPC methods this process calls from now on (``Stub._callable`` tapped)."""
    from minitf.distributed import rpc
    called = []
    callable_of = rpc.Stub._callable

    def recording(stub, kind, method):
        called.append(method)
        return callable_of(stub, kind, method)
    monkeypatch.setattr(rpc.Stub, "_callable", recording)
    return called


def over_the_wire(target):
    """``target`` spelled with ``localhost``: the same server, reached through its port.

    A session whose master is in its own process calls it directly (TF's
    LocalMaster), found by the exact target string; a test that means to
    send ``RunStep`` over gRPC uses this spelling.
    """
    assert target.startswith("grpc://127.0.0.1:")
    return target.replace("127.0.0.1", "localhost", 1)


def launch_command(cluster, job, index):
    """The command line of the launcher for one task (its GPU devices left out)."""
    return [sys.executable, "-m", "minitf.distributed.launch", "--cluster", json.dumps(cluster),
            "--job", job, "--task", str(index), "--device-count", "GPU=0"]


class TaskProcess:
    """One task of ``cluster`` served by the launcher in a process of its own.

    Args:
        cluster: the cluster as a dict of address lists.
        job, index: the task.
    """

    def __init__(self, cluster, job, index):
        self.cluster = cluster
        self.job = job
        self.index = index
        self.address = cluster[job][index]
        self.target = "grpc://" + self.address
        self.process = None
        self.start()

    def start(self, timeout=START_TIMEOUT):
        """Starts the process (again) and waits for its READY line.

        Raises:
            RuntimeError: if it exits or stays silent for ``timeout`` seconds
                (it is killed then).
        """
        # stderr goes to a file: a pipe nobody reads could fill up and block the task.
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            launch_command(self.cluster, self.job, self.index), cwd=REPO_ROOT,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        line = _read_line(self.process.stdout, timeout)
        if not line.startswith(b"READY "):
            self.kill()
            raise RuntimeError("task %s:%d did not start (%r); its stderr:\n%s"
                               % (self.job, self.index, line, self.stderr_text()))
        assert line.split()[1].decode() == self.target, line

    def stderr_text(self):
        """What the process wrote on its standard error so far."""
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    @property
    def pid(self):
        return self.process.pid

    def pause(self):
        """SIGSTOP: the process hangs (its sockets stay open, nothing answers)."""
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self):
        os.kill(self.pid, signal.SIGCONT)

    def kill(self):
        """SIGKILL, and reap it."""
        if self.process.poll() is None:
            self.resume()  # a stopped process dies of SIGKILL too; SIGCONT is harmless
            self.process.kill()
        self._reap()

    def terminate(self, timeout=10.0):
        """SIGTERM (a clean stop); returns the exit status (killed after ``timeout``)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self._reap()
        return self.process.returncode

    def restart(self):
        """Kills the process and starts a new one at the same address (a new incarnation)."""
        self.kill()
        self.start()

    def _reap(self):
        self.process.wait(10.0)
        for stream in (self.process.stdin, self.process.stdout, self.stderr):
            if stream is not None and not stream.closed:
                stream.close()
        unlink_segments_of(self.process.pid)


def _read_line(stream, timeout):
    """One line of ``stream``, waiting at most ``timeout`` seconds (b"" on EOF or timeout)."""
    deadline = time.monotonic() + timeout
    line = b""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        while not line.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                return line
            chunk = os.read(stream.fileno(), 1)
            if not chunk:
                return line
            line += chunk
    return line


class TaskProcesses:
    """The task processes of one test (a fixture): all killed and reaped at the end."""

    def __init__(self):
        self._tasks = []

    def start(self, cluster, job, index):
        task = TaskProcess(cluster, job, index)
        self._tasks.append(task)
        return task

    def start_all(self, cluster):
        """One process per task of ``cluster``; returns ``{(job, index): TaskProcess}``."""
        return {(job, index): self.start(cluster, job, index)
                for job, addresses in cluster.items() for index in range(len(addresses))}

    def close(self):
        for task in self._tasks:
            if task.process is not None:
                task.kill()
