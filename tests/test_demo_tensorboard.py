"""The main job's TensorBoard logs (``make demo`` runs ``examples/mnist_mlp.py``).

The demo is run in-process with tiny settings into a temporary ``--logdir``;
its event file is read back with ``tf.train.summary_iterator`` and checked
for what TensorBoard shows: scalars, histograms, the graph, and one traced
step (a ``tagged_run_metadata`` event, written by
``FileWriter.add_run_metadata``) whose op names are the graph's.
"""

import collections
import contextlib
import glob
import importlib.util
import io
import pathlib
import re

import numpy as np
import pytest

import minitf as tf
from minitf.framework import protos

DEMO = pathlib.Path(__file__).resolve().parents[1] / "examples" / "mnist_mlp.py"
# 600 training images in batches of 100: 6 steps per epoch, 12 in all.
TINY = ["--epochs", "2", "--hidden", "16", "--train-size", "600", "--test-size", "100",
        "--batch-size", "100", "--summary-every", "4", "--no-progress"]
VARIABLES = ["hidden1/weights", "hidden1/biases", "softmax_linear/weights",
             "softmax_linear/biases"]


@pytest.fixture(scope="module")
def demo():
    spec = importlib.util.spec_from_file_location("mnist_mlp_tensorboard", DEMO)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run(demo, tmp_path_factory):
    """Runs the demo once: ``(its output, the events of its one event file)``."""
    tmp = tmp_path_factory.mktemp("demo")
    logdir = tmp / "logs"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MINITF_DATA", str(tmp / "empty-cache"))   # synthetic digits
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            demo.main(TINY + ["--checkpoint-dir", str(tmp / "ckpt"), "--logdir", str(logdir)])
    (path,) = glob.glob(str(logdir / "events.out.tfevents.*"))
    return out.getvalue(), logdir, list(tf.train.summary_iterator(path))


def _values(events, kind):
    """``{tag: [(step, value)]}`` of the summary values holding ``kind``."""
    found = collections.defaultdict(list)
    for event in events:
        for value in event.summary.value:
            if value.HasField(kind):
                found[value.tag].append((event.step, getattr(value, kind)))
    return found


def test_the_default_logdir_is_a_local_folder(demo):
    assert demo.parse_args([]).logdir == "build/logs/mnist_mlp"


def test_it_prints_the_tensorboard_command(run):
    out, logdir, _ = run
    assert out.count("tensorboard --logdir %s" % logdir) == 2, out   # at the start and the end


def test_loss_and_accuracy_scalars(run):
    scalars = _values(run[2], "simple_value")
    # step 1, then every 4th step: 1, 4, 8, 12
    assert [step for step, _ in scalars["train/loss"]] == [1, 4, 8, 12]
    assert [step for step, _ in scalars["train/accuracy"]] == [1, 4, 8, 12]
    assert all(0 <= value <= 1 for _, value in scalars["train/accuracy"])
    assert all(np.isfinite(value) and value > 0 for _, value in scalars["train/loss"])
    test_accuracy = scalars["test/accuracy"]
    assert [step for step, _ in test_accuracy] == [6, 12]   # once per epoch
    out = run[0]
    printed = [float(p) / 100 for p in re.findall(r"test accuracy ([0-9.]+)%", out)]
    np.testing.assert_allclose([value for _, value in test_accuracy], printed, atol=5e-5)


def test_weight_histograms_every_epoch(run):
    histograms = _values(run[2], "histo")
    assert sorted(histograms) == sorted("weights/" + name for name in VARIABLES)
    for tag, entries in histograms.items():
        assert [step for step, _ in entries] == [6, 12], tag
    (_, first), _ = histograms["weights/hidden1/weights"]
    assert first.num == 784 * 16


def test_the_graph_is_logged(run):
    graph_defs = [e.graph_def for e in run[2] if e.HasField("graph_def")]
    assert len(graph_defs) == 1
    graph_def = protos.load("graph_pb2").GraphDef.FromString(graph_defs[0])
    names = {node.name for node in graph_def.node}
    assert {"images", "labels", "hidden1/MatMul", "loss/Mean", "global_step"} <= names


def test_one_traced_step_for_the_graph_view(run):
    events = run[2]
    tagged = [e for e in events if e.HasField("tagged_run_metadata")]
    assert [(e.step, e.tagged_run_metadata.tag) for e in tagged] == [(1, "trace_step_1")]
    metadata = protos.load("config_pb2").RunMetadata.FromString(
        tagged[0].tagged_run_metadata.run_metadata)
    nodes = [n for device in metadata.step_stats.dev_stats for n in device.node_stats]
    graph_def = protos.load("graph_pb2").GraphDef.FromString(
        next(e.graph_def for e in events if e.HasField("graph_def")))
    names = {node.name for node in graph_def.node}
    traced = {n.node_name for n in nodes}
    # TensorBoard matches step statistics to graph nodes by name: the step's ops are there.
    assert {"hidden1/MatMul", "loss/Mean"} <= traced <= names
    assert all(n.all_end_rel_micros >= 0 for n in nodes)
