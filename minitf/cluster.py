"""``python -m minitf.cluster``: start a whole TF1 cluster on this machine.

A TensorFlow 1.x cluster is not one program but several processes, one per
**task**: the parameter servers (job ``ps``) hold the variables, the workers
(job ``worker``) each build the same graph and run training steps against them
("between-graph replication"), and worker 0, the **chief**, also initializes
the variables and writes checkpoints.  Every process runs the *same* script;
what tells one apart from another is the ``TF_CONFIG`` environment variable,
which a launcher sets for each (Kubernetes operators, batch schedulers and
Cloud ML Engine all did exactly this)::

    TF_CONFIG='{"cluster": {"ps": ["127.0.0.1:41001"],
                            "worker": ["127.0.0.1:41002", "127.0.0.1:41003"]},
                "task": {"type": "worker", "index": 1}}'

The script reads it back (:mod:`minitf.distributed.tf_config`) and so runs
unchanged on a laptop or a cluster::

    server = server_from_tf_config()             # this task's tf.train.Server
    if TFConfigClusterResolver().task_type == "ps":
        server.join()                             # parameter servers only serve
    with tf.device(tf.train.replica_device_setter(cluster=server.server_def.cluster)):
        ...                                       # variables on /job:ps
    with tf.Session(server.target) as sess: ...

This module is that launcher, for one machine::

    python -m minitf.cluster --ps 1 --workers 3 -- python examples/train.py --steps 100

It picks free loopback ports (``127.0.0.1``), starts one process per task
with its ``TF_CONFIG`` — the parameter servers first, the workers once every
parameter server listens (at most ``--ps-wait`` seconds) — and copies each process's output line by line,
prefixed with its task (``[worker:0] loss 0.25``; standard error stays on
standard error).  ``--backup N`` adds N workers beyond ``--workers`` (TF1's
backup workers, whose gradients ``SyncReplicasOptimizer`` may drop) and
exports ``MINITF_BACKUP_WORKERS=N`` to every task.

When it stops:

* the chief exits: the cluster's work is done.  Parameter servers never exit
  by themselves in TF (``server.join()`` serves for ever), so the launcher
  stops every task still running — ``SIGTERM``, then ``SIGKILL`` after
  ``--grace`` seconds — and exits with the chief's status;
* any other task fails (a non-zero status) before the chief ends: the chief
  would wait for it for ever, so the launcher stops the cluster and exits with
  that task's status.  A non-chief worker that finishes with status 0 is
  normal and the rest go on;
* the launcher receives ``SIGINT`` (Ctrl-C) or ``SIGTERM``: it stops every
  task and exits with ``128 + signal``.

Each task runs in a session (process group) of its own, so Ctrl-C at the
terminal reaches only the launcher, which then stops the tasks, and a task's
own subprocesses are stopped with it.  POSIX only.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from minitf.distributed.shared_memory import unlink_segments_of

#: The environment variable that tells every task how many backup workers there are.
BACKUP_WORKERS_ENV = "MINITF_BACKUP_WORKERS"

#: How often the launcher looks at its tasks and signals, in seconds.
_POLL_SECONDS = 0.05


def parse_args(argv=None):
    """The launcher's options and the task command (everything after ``--``).

    Raises:
        SystemExit: (from argparse) for bad options or a missing command.
    """
    parser = argparse.ArgumentParser(
        prog="python -m minitf.cluster",
        usage="%(prog)s [--ps N] [--workers N] [--backup N] [--ps-wait S] [--grace S] "
              "-- COMMAND [ARGS...]",
        description="Start one local process per task of a TF1 cluster, each with its TF_CONFIG.")
    parser.add_argument("--ps", type=int, default=1, help="parameter server tasks (default 1)")
    parser.add_argument("--workers", type=int, default=1, help="worker tasks (default 1)")
    parser.add_argument("--backup", type=int, default=0,
                        help="extra backup worker tasks; exported as %s" % BACKUP_WORKERS_ENV)
    parser.add_argument("--ps-wait", type=float, default=30.0,
                        help="seconds to wait for the ps tasks to listen before starting "
                             "the workers (default 30)")
    parser.add_argument("--grace", type=float, default=5.0,
                        help="seconds between SIGTERM and SIGKILL when stopping tasks (default 5)")
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv:
        at = argv.index("--")
        options, command = argv[:at], argv[at + 1:]
    else:
        options, command = argv, []
    args = parser.parse_args(options)
    if not command:
        parser.error("no command: write it after '--', e.g. -- python train.py")
    if args.ps < 0 or args.workers < 1 or args.backup < 0:
        parser.error("need --ps >= 0, --workers >= 1 and --backup >= 0")
    args.command = command
    return args


def free_ports(count, host="127.0.0.1"):
    """``count`` distinct ports on ``host`` that nothing listens on right now.

    All sockets stay bound until every port is chosen, so the ports differ;
    another program could still take one before its task binds it (the usual,
    small race of picking ports for others).
    """
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((host, 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def make_cluster(ps, workers, host="127.0.0.1"):
    """``{"ps": [...], "worker": [...]}`` on free ports of ``host`` (``ps`` may be 0)."""
    ports = iter(free_ports(ps + workers, host))
    cluster = {}
    if ps:
        cluster["ps"] = ["%s:%d" % (host, next(ports)) for _ in range(ps)]
    cluster["worker"] = ["%s:%d" % (host, next(ports)) for _ in range(workers)]
    return cluster


def tf_config(cluster, task_type, index):
    """The ``TF_CONFIG`` JSON text of task ``task_type:index`` of ``cluster``."""
    return json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}})


class Task:
    """One running task: its process and the threads that copy its output."""

    def __init__(self, task_type, index, command, env):
        self.name = "%s:%d" % (task_type, index)
        self.process = subprocess.Popen(
            command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
        self.copiers = [_start_copier(self.process.stdout, sys.stdout, self.name),
                        _start_copier(self.process.stderr, sys.stderr, self.name)]

    def signal(self, signum):
        """Sends ``signum`` to the task's process group (the task and its children)."""
        try:
            os.killpg(self.process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass  # already gone

    def finish_output(self, timeout=2.0):
        """Waits (a bounded time) until the task's last output lines are copied."""
        deadline = time.monotonic() + timeout
        for copier in self.copiers:
            copier.join(max(0.0, deadline - time.monotonic()))


_output_lock = threading.Lock()


def _start_copier(pipe, out, name):
    """Copies ``pipe`` to ``out`` line by line, each line prefixed ``[name] ``."""
    prefix = "[%s] " % name

    def copy():
        with pipe:
            for raw in iter(pipe.readline, b""):
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                with _output_lock:
                    out.write(prefix + line + "\n")
                    out.flush()

    thread = threading.Thread(target=copy, name="minitf-cluster-" + name, daemon=True)
    thread.start()
    return thread


def _say(message):
    with _output_lock:
        sys.stderr.write("[cluster] %s\n" % message)
        sys.stderr.flush()


def exit_status(returncode):
    """A child's ``returncode`` as a shell would report it (``-15`` → ``143``)."""
    return 128 - returncode if returncode < 0 else returncode


def stop_tasks(tasks, grace):
    """Stops every task still running: ``SIGTERM``, then ``SIGKILL`` after ``grace``
    seconds; reaps them all."""
    running = [task for task in tasks if task.process.poll() is None]
    for task in running:
        task.signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for task in running:
        try:
            task.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _say("%s did not stop in %gs after SIGTERM: SIGKILL" % (task.name, grace))
            task.signal(signal.SIGKILL)
            task.process.wait()
    for task in tasks:
        task.signal(signal.SIGKILL)  # a task's own subprocesses left in its group
        task.finish_output()
        unlink_segments_of(task.process.pid)  # what it lent and could not take back


def _listening(address):
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=0.5):
            return True
    except OSError:
        return False


def _wait_until_listening(tasks, addresses, timeout, signalled):
    """Waits until every address accepts connections, at most ``timeout``
    seconds; returns early when a task exits or a signal arrived (the caller
    deals with both)."""
    deadline = time.monotonic() + timeout
    waiting = list(addresses)
    while waiting and time.monotonic() < deadline:
        if signalled or any(task.process.poll() is not None for task in tasks):
            return
        waiting = [address for address in waiting if not _listening(address)]
        if waiting:
            time.sleep(_POLL_SECONDS)
    if waiting:
        _say("%s not listening after %gs: starting the workers anyway"
             % (", ".join(waiting), timeout))


def run_cluster(args):
    """Starts the cluster of ``args``, waits for it to end, stops it; returns
    the launcher's exit status (see the module docstring)."""
    workers = args.workers + args.backup
    cluster = make_cluster(args.ps, workers)
    _say("cluster %s; chief worker:0" % json.dumps(cluster))

    # A signal handler only records the signal: the loop below acts on it.
    signalled = []
    previous = {signum: signal.signal(signum, lambda number, frame: signalled.append(number))
                for signum in (signal.SIGINT, signal.SIGTERM)}
    tasks = []
    try:
        for task_type in ("ps", "worker"):
            if task_type == "worker":
                # minitf's master asks every task it uses for its devices at
                # the first step and fails on one not yet listening, where
                # TF's waits: let the parameter servers come up first.
                _wait_until_listening(tasks, cluster.get("ps", []), args.ps_wait, signalled)
            for index in range(len(cluster.get(task_type, []))):
                env = dict(os.environ, TF_CONFIG=tf_config(cluster, task_type, index),
                           PYTHONUNBUFFERED="1")
                env[BACKUP_WORKERS_ENV] = str(args.backup)
                tasks.append(Task(task_type, index, args.command, env))
        chief = next(task for task in tasks if task.name == "worker:0")
        status = None
        reported = set()
        while status is None:
            if signalled:
                _say("received signal %d: stopping the cluster" % signalled[0])
                status = 128 + signalled[0]
                break
            if chief.process.poll() is not None:
                status = exit_status(chief.process.returncode)
                _say("chief worker:0 exited with status %d: stopping the cluster" % status)
                break
            for task in tasks:
                code = task.process.poll()
                if code is None or task.name in reported:
                    continue
                reported.add(task.name)
                if code != 0:
                    status = exit_status(code)
                    _say("%s failed with status %d before the chief ended: stopping the "
                         "cluster" % (task.name, status))
                    break
                _say("%s exited with status 0" % task.name)
            time.sleep(_POLL_SECONDS)
        return status
    finally:
        stop_tasks(tasks, args.grace)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def main(argv=None):
    """Runs the launcher; returns its exit status."""
    args = parse_args(argv)
    try:
        return run_cluster(args)
    except OSError as error:  # the command could not be started
        _say("cannot start %r: %s" % (args.command, error))
        return 127


if __name__ == "__main__":
    sys.exit(main())
