"""``python -m minitf.cluster``: the local launcher of a TF1 cluster.

Each test runs the launcher as a subprocess on loopback ports, with bounded
timeouts, and checks that every process it started is gone afterwards (each
task writes its pid to a file).
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import minitf as tf
from minitf import cluster as launcher

ROOT = Path(__file__).resolve().parents[1]

# A task: ps tasks start their server and block in server.join(); workers print
# their task, then exit with the status given for them (or block for ever).
TASK_SCRIPT = textwrap.dedent("""
    import json, os, sys, time
    from minitf.distributed.tf_config import TFConfigClusterResolver, server_from_tf_config

    pid_file, chief_status, worker_mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    resolver = TFConfigClusterResolver()
    name = "%s:%d" % (resolver.task_type, resolver.task_id)
    config = json.loads(os.environ["TF_CONFIG"])
    print("task", name, "of", json.dumps(config["cluster"], sort_keys=True), flush=True)
    print("backup", os.environ["MINITF_BACKUP_WORKERS"], flush=True)
    print("to stderr", name, file=sys.stderr, flush=True)
    with open(pid_file, "a") as f:  # after the output: the chief waits for these lines
        f.write("%s %d\\n" % (name, os.getpid()))
    if resolver.task_type == "ps":
        server_from_tf_config().join()
    if worker_mode == "block":
        time.sleep(600)
    if resolver.task_id == 0:  # the chief ends last: every task has written its line
        tasks = len(config["cluster"]["ps"]) + len(config["cluster"]["worker"])
        deadline = time.monotonic() + 20
        while len(open(pid_file).read().splitlines()) < tasks and time.monotonic() < deadline:
            time.sleep(0.05)
        sys.exit(chief_status)
    sys.exit(0)
""")


@pytest.fixture
def task_script(tmp_path):
    path = tmp_path / "task.py"
    path.write_text(TASK_SCRIPT)
    return path


def launch(*options, command):
    return subprocess.Popen(
        [sys.executable, "-m", "minitf.cluster", "--grace", "2", *options, "--", *command],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_pids(pid_file):
    if not pid_file.exists():
        return {}
    return {name: int(pid) for name, pid in
            (line.split() for line in pid_file.read_text().splitlines() if line.strip())}


def assert_all_gone(pids, timeout=5.0):
    """Every pid is gone (the launcher reaped its children, so none is a zombie)."""
    deadline = time.monotonic() + timeout
    alive = dict(pids)
    while alive and time.monotonic() < deadline:
        for name, pid in list(alive.items()):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                del alive[name]
        time.sleep(0.05)
    for pid in alive.values():  # do not leak them into the next test
        os.kill(pid, signal.SIGKILL)
    assert not alive, "tasks left running: %s" % alive


def finish(process, timeout=30):
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail("the launcher did not end in %ss:\n%s\n%s" % (timeout, out, err))
    return out, err


def test_parse_args_splits_the_command_at_the_double_dash():
    args = launcher.parse_args(["--ps", "2", "--workers", "3", "--backup", "1",
                                "--", "python", "train.py", "--ps", "9"])
    assert (args.ps, args.workers, args.backup) == (2, 3, 1)
    assert args.command == ["python", "train.py", "--ps", "9"]
    with pytest.raises(SystemExit):
        launcher.parse_args(["--ps", "1"])  # no command


def test_make_cluster_uses_distinct_free_loopback_ports():
    cluster = launcher.make_cluster(ps=2, workers=3)
    addresses = cluster["ps"] + cluster["worker"]
    assert len(cluster["ps"]) == 2 and len(cluster["worker"]) == 3
    assert all(address.startswith("127.0.0.1:") for address in addresses)
    assert len(set(addresses)) == 5
    assert json.loads(launcher.tf_config(cluster, "worker", 2)) == {
        "cluster": cluster, "task": {"type": "worker", "index": 2}}
    assert launcher.exit_status(-signal.SIGTERM) == 143 and launcher.exit_status(3) == 3


def test_every_task_runs_with_its_tf_config_and_the_chief_status_is_returned(
        task_script, tmp_path):
    pid_file = tmp_path / "pids"
    process = launch("--ps", "1", "--workers", "2", "--backup", "1",
                     command=[sys.executable, str(task_script), str(pid_file), "3", "exit"])
    out, err = finish(process)
    assert process.returncode == 3, (out, err)
    names = ["ps:0", "worker:0", "worker:1", "worker:2"]  # 2 workers + 1 backup
    pids = read_pids(pid_file)
    assert sorted(pids) == names
    lines = out.splitlines()
    for name in names:
        task_line = next(line for line in lines if line.startswith("[%s] task" % name))
        cluster = json.loads(task_line.split(" of ", 1)[1])
        assert len(cluster["ps"]) == 1 and len(cluster["worker"]) == 3
        assert "[%s] backup 1" % name in lines
        assert "[%s] to stderr %s" % (name, name) in err.splitlines()
    assert "chief worker:0 exited with status 3" in err
    assert_all_gone(pids)  # the ps, which never exits by itself, was stopped


def test_sigint_to_the_launcher_stops_every_task(task_script, tmp_path):
    pid_file = tmp_path / "pids"
    process = launch("--ps", "1", "--workers", "2",
                     command=[sys.executable, str(task_script), str(pid_file), "0", "block"])
    deadline = time.monotonic() + 20
    while len(read_pids(pid_file)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = read_pids(pid_file)
    assert len(pids) == 3, "not every task started"
    process.send_signal(signal.SIGINT)
    out, err = finish(process)
    assert process.returncode == 128 + signal.SIGINT, (out, err)
    assert "received signal %d" % signal.SIGINT in err
    assert_all_gone(pids)


def test_a_failing_task_stops_the_cluster(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text(textwrap.dedent("""
        import json, os, sys, time
        task = json.loads(os.environ["TF_CONFIG"])["task"]
        if task["type"] == "ps":
            sys.exit(5)         # e.g. its port was taken
        time.sleep(600)         # the chief would wait for the ps for ever
    """))
    process = launch("--ps", "1", "--workers", "1", command=[sys.executable, str(script)])
    out, err = finish(process)
    assert process.returncode == 5, (out, err)
    assert "ps:0 failed with status 5" in err


def test_a_command_that_cannot_start_is_reported():
    process = launch("--ps", "0", "--workers", "1", command=["/nonexistent/minitf-program"])
    out, err = finish(process)
    assert process.returncode == 127
    assert "cannot start" in err


def test_between_graph_training_runs_under_the_launcher():
    process = launch("--ps", "1", "--workers", "2",
                     command=[sys.executable, "examples/between_graph_sgd.py", "--steps", "20"])
    out, err = finish(process, timeout=60)
    assert process.returncode == 0, (out, err)
    final = [line for line in out.splitlines() if line.startswith("[worker:0] final loss")]
    assert len(final) == 1, out
    assert float(final[0].split()[-1]) < 0.01


def test_in_graph_replication_runs_under_the_launcher():
    # One client, a tower on each worker reading w and b from the ps: the
    # same ps tensor crosses to two tasks in one step.
    process = launch("--ps", "1", "--workers", "2",
                     command=[sys.executable, "examples/in_graph_replication.py",
                              "--steps", "100"])
    out, err = finish(process, timeout=60)
    assert process.returncode == 0, (out, err)
    final = [line for line in out.splitlines() if line.startswith("[worker:0] towers 2")]
    assert len(final) == 1, out
    assert float(final[0].split("|w - true w| ")[1].split(",")[0]) < 0.01


def test_distributed_mnist_trains_under_the_launcher_sync_with_a_backup_worker(tmp_path):
    process = launch("--ps", "1", "--workers", "2", "--backup", "1",
                     command=[sys.executable, "examples/distributed_mnist.py", "--sync",
                              "--epochs", "2", "--train-size", "1200", "--test-size", "300",
                              "--hidden", "64", "--batch-size", "50",
                              "--checkpoint-dir", str(tmp_path), "--log-every", "1000"])
    out, err = finish(process, timeout=120)
    assert process.returncode == 0, (out, err)
    final = [line for line in out.splitlines() if "Final test accuracy" in line]
    assert len(final) == 1, out
    # 2 epochs of 1200 examples, 2 batches of 50 per update: 24 global steps.
    assert "after 24 global steps (sync)" in final[0]
    assert float(final[0].split("accuracy: ")[1].split("%")[0]) > 60.0
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("-24")
