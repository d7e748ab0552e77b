"""``python -m minitf.distributed.launch``: run one task of a cluster in this process.

Every process of a TF1 cluster runs a ``tf.train.Server`` for its task and
then serves: parameter servers do nothing else (``server.join()``), workers
serve while their own training loop runs.  This module is the first kind of
process — a task that only serves — started from the command line, the way a
launcher, a scheduler or a test starts a cluster::

    # the task comes from TF_CONFIG (what Kubernetes operators and schedulers set)
    TF_CONFIG='{"cluster": {"ps": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223"]},
                "task": {"type": "ps", "index": 0}}' python -m minitf.distributed.launch

    # or from the arguments
    python -m minitf.distributed.launch \\
        --cluster '{"ps": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223"]}' \\
        --job ps --task 0

Once the server listens it prints one line, ``READY grpc://host:port``, on
standard output (a parent waits for that line before it connects; an address
with port 0 shows the port the system chose), then serves until

* it receives ``SIGTERM`` or ``SIGINT`` (how schedulers stop a task), or
* its standard input is a pipe and that pipe reaches end-of-file: the process
  that started it went away, so no task outlives a crashed parent.  (A task
  started with its standard input on a terminal or ``/dev/null`` ignores it.)

It then stops the server (pending RPCs are cancelled) and exits with status
0.  A bad cluster or task is reported on standard error with status 2.

``--device-count CPU=1,GPU=0`` limits the task's devices
(``ConfigProto.device_count``).  Mirrors what TF1 users wrote by hand in
every ``ps.py``: ``server = tf.train.Server(...); server.join()``.
"""

import argparse
import json
import os
import signal
import stat
import sys
import threading

#: The line a task prints once it serves (followed by its target).
READY = "READY"


def parse_args(argv=None):
    """The command line's options (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m minitf.distributed.launch",
        description="Run one task of a minitf cluster (a tf.train.Server) until SIGTERM.")
    parser.add_argument("--cluster", help="the cluster as JSON, e.g. "
                        "'{\"ps\": [\"127.0.0.1:2222\"], \"worker\": [\"127.0.0.1:2223\"]}' "
                        "(default: TF_CONFIG's)")
    parser.add_argument("--job", help="this task's job (default: TF_CONFIG's task type)")
    parser.add_argument("--task", type=int, help="this task's index (default: TF_CONFIG's)")
    parser.add_argument("--device-count", default="",
                        help="devices per type, e.g. 'CPU=1,GPU=0' (ConfigProto.device_count)")
    return parser.parse_args(argv)


def _device_count(text):
    counts = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        kind, _, number = item.partition("=")
        try:
            counts[kind.strip().upper()] = int(number)
        except ValueError:
            raise ValueError("--device-count wants TYPE=N items, e.g. CPU=1,GPU=0; got %r"
                             % item) from None
    return counts


def make_server(args):
    """This task's started ``tf.train.Server``, from the arguments or ``TF_CONFIG``.

    Raises:
        ValueError: for a malformed cluster, or a task that it does not contain.
    """
    from minitf.distributed.server import Server  # grpc: only when a task starts
    from minitf.distributed.tf_config import server_from_tf_config
    from minitf.runtime.config import ConfigProto

    config = ConfigProto(device_count=_device_count(args.device_count))
    if args.cluster is None:
        if args.job is not None or args.task is not None:
            raise ValueError("--job and --task need --cluster (or use TF_CONFIG alone)")
        return server_from_tf_config(config=config)
    try:
        cluster = json.loads(args.cluster)
    except ValueError as error:
        raise ValueError("--cluster is not valid JSON (%s): %r" % (error, args.cluster)) from None
    return Server(cluster, job_name=args.job, task_index=args.task, config=config)


def _stdin_is_a_pipe():
    try:
        return stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


def _watch_stdin(stop):
    """Sets ``stop`` when standard input (a pipe from the parent) reaches EOF."""
    def watch():
        try:
            while os.read(sys.stdin.fileno(), 4096):
                pass
        except OSError:
            pass
        stop.set()
    threading.Thread(target=watch, name="minitf-launch-stdin", daemon=True).start()


def serve(server, stop, signalled):
    """Serves until ``stop`` is set or a signal arrived, then stops ``server``."""
    print("%s %s" % (READY, server.target), flush=True)
    # A signal handler must not touch locks the main thread may hold (an
    # Event's): it only appends to ``signalled``, which this loop polls.
    while not signalled and not stop.wait(0.2):
        pass
    server.stop()


def main(argv=None):
    """Runs the task; returns the exit status."""
    from minitf.framework import errors

    signalled = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda number, frame: signalled.append(number))
    try:
        server = make_server(parse_args(argv))
    except (ValueError, errors.OpError) as error:  # a bad cluster, a port in use
        print("minitf.distributed.launch: %s" % error, file=sys.stderr, flush=True)
        return 2
    stop = threading.Event()
    if _stdin_is_a_pipe():
        _watch_stdin(stop)
    serve(server, stop, signalled)
    return 0


if __name__ == "__main__":
    sys.exit(main())
