"""The main job (``make demo`` runs ``examples/mnist_mlp.py``) trains, checkpoints and tests.

Each run uses tiny settings (one epoch, a few thousand images, small hidden
layers).  The printed final accuracy is checked against an independent
computation: the checkpoint's weights are read back and the MLP is evaluated
in NumPy on the test images the demo used.
"""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import minitf as tf

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "mnist_mlp.py"
REAL_MNIST = ROOT.parent / "shared" / "data" / "mnist"
TINY = ["--epochs", "1", "--hidden", "64", "32", "--train-size", "3000", "--test-size", "500",
        "--no-progress"]


@pytest.fixture(scope="module")
def demo():
    spec = importlib.util.spec_from_file_location("mnist_mlp_demo", DEMO)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def no_mnist_cache(tmp_path, monkeypatch):
    """An empty MNIST cache, so the demo must fall back to synthetic digits."""
    monkeypatch.setenv("MINITF_DATA", str(tmp_path / "empty-cache"))


def _numpy_accuracy(checkpoint, images, labels):
    """The accuracy of the checkpoint's MLP on ``images``, computed in NumPy."""
    reader = tf.train.load_checkpoint(checkpoint)
    layers = []
    for scope in ("hidden1", "hidden2", "softmax_linear"):
        layers.append((reader.get_tensor(scope + "/weights"), reader.get_tensor(scope + "/biases")))
    activations = images
    for i, (weights, biases) in enumerate(layers):
        activations = activations @ weights + biases
        if i < len(layers) - 1:
            activations = np.maximum(activations, 0)
    return np.mean(np.argmax(activations, axis=1) == labels)


def _printed_final_accuracy(text):
    match = re.search(r"Final test accuracy: ([0-9.]+)% on (\d+) test images", text)
    assert match, "the demo did not print its final test accuracy:\n" + text
    return float(match.group(1)) / 100, int(match.group(2))


def test_demo_trains_on_synthetic_digits_without_mnist(demo, no_mnist_cache, tmp_path, capsys):
    checkpoints = tmp_path / "checkpoints"
    accuracy = demo.main(TINY + ["--checkpoint-dir", str(checkpoints)])
    out = capsys.readouterr().out
    assert "Data: synthetic digits" in out and "MNIST not found" in out
    assert re.search(r"epoch 1/1: loss [0-9.]+, train accuracy [0-9.]+%, test accuracy", out)

    printed, count = _printed_final_accuracy(out)
    assert count == 500 and printed == pytest.approx(accuracy, abs=5e-5)
    assert accuracy > 0.5, "one epoch should be far above chance (10%%), got %.3f" % accuracy

    latest = tf.train.latest_checkpoint(str(checkpoints))
    assert latest is not None and latest.endswith("mnist_mlp.ckpt-1")
    assert os.path.exists(latest + ".index")
    (_, _), (x_test, y_test), _ = demo.load_data(train_size=3000, test_size=500)
    # float32 rounding may flip a near-tie: allow one image of difference.
    one_image = 1.01 / len(y_test)
    assert _numpy_accuracy(latest, x_test, y_test) == pytest.approx(accuracy, abs=one_image)


def test_demo_refuses_a_data_dir_without_mnist(demo, tmp_path):
    with pytest.raises(FileNotFoundError, match="t10k-images-idx3-ubyte"):
        demo.main(TINY + ["--data-dir", str(tmp_path), "--checkpoint-dir", str(tmp_path / "c")])


def _write_idx_test_files(directory, images, labels):
    """MNIST's two test files (uncompressed IDX: big-endian header, then uint8 data)."""
    directory.mkdir()
    count, rows, cols = images.shape
    header = np.array([0x803, count, rows, cols], dtype=">u4").tobytes()
    (directory / "t10k-images-idx3-ubyte").write_bytes(header + images.astype(np.uint8).tobytes())
    header = np.array([0x801, count], dtype=">u4").tobytes()
    (directory / "t10k-labels-idx1-ubyte").write_bytes(header + labels.astype(np.uint8).tobytes())


def test_demo_uses_the_fallback_data_dir_only_when_the_cache_is_empty(demo, no_mnist_cache,
                                                                      tmp_path):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(50, 28, 28))
    labels = np.arange(50) % 10
    _write_idx_test_files(tmp_path / "fallback", images, labels)

    (x_train, y_train), (x_test, y_test), description = demo.load_data(
        fallback_data_dir=str(tmp_path / "fallback"))
    assert description.startswith("MNIST from %s (only its 10,000 test images"
                                  % (tmp_path / "fallback"))
    assert len(x_train) == 40 and len(x_test) == 10  # the 80/20 split of 50 images
    assert sorted(np.concatenate([y_train, y_test]).tolist()) == sorted(labels.tolist())
    # The pixel values survive as v / 255 (compare as sorted multisets: the split shuffles).
    pixels = np.sort(np.concatenate([x_train, x_test]).reshape(-1))
    np.testing.assert_allclose(pixels, np.sort(images.reshape(-1)) / 255.0, rtol=1e-6)

    # A directory without the files falls through to synthetic digits.
    _, _, description = demo.load_data(fallback_data_dir=str(tmp_path / "nothing"),
                                       train_size=100, test_size=20)
    assert description.startswith("synthetic digits")

    # An explicit --data-dir wins over the fallback.
    _write_idx_test_files(tmp_path / "explicit", images[:20], labels[:20])
    (x_train, _), (x_test, _), _ = demo.load_data(
        str(tmp_path / "explicit"), fallback_data_dir=str(tmp_path / "fallback"))
    assert len(x_train) + len(x_test) == 20


def test_make_demo_passes_the_shared_mnist_directory():
    # Under `make test` this runs inside make: --no-print-directory keeps the
    # "Entering directory" lines out of the dry run's output.
    dry_run = subprocess.run(["make", "--no-print-directory", "-n", "demo"], cwd=ROOT,
                             capture_output=True, text=True)
    if dry_run.returncode != 0:
        pytest.skip("make is not available: %s" % dry_run.stderr.strip())
    commands = [line for line in dry_run.stdout.splitlines() if "examples/mnist_mlp.py" in line]
    assert len(commands) == 1, dry_run.stdout
    command = commands[0]
    if REAL_MNIST.is_dir():
        assert "--fallback-data-dir ../shared/data/mnist" in command
    else:
        assert "--fallback-data-dir" not in command


def test_demo_on_real_mnist_test_files(demo, tmp_path, capsys):
    if not (REAL_MNIST / "t10k-images-idx3-ubyte.gz").exists():
        pytest.skip("REAL MNIST FILES NOT FOUND at %s; the synthetic-digits run covers the demo"
                    % REAL_MNIST)
    checkpoints = tmp_path / "checkpoints"
    accuracy = demo.main(TINY + ["--data-dir", str(REAL_MNIST), "--test-size", "1000",
                                 "--checkpoint-dir", str(checkpoints)])
    out = capsys.readouterr().out
    assert "Data: MNIST from %s (only its 10,000 test images" % REAL_MNIST in out
    assert _printed_final_accuracy(out)[1] == 1000
    assert accuracy > 0.6, "one epoch on 3000 MNIST digits should pass 60%%, got %.3f" % accuracy
    (_, _), (x_test, y_test), _ = demo.load_data(str(REAL_MNIST), test_size=1000)
    latest = tf.train.latest_checkpoint(str(checkpoints))
    # float32 rounding may flip a near-tie: allow one image of difference.
    one_image = 1.01 / len(y_test)
    assert _numpy_accuracy(latest, x_test, y_test) == pytest.approx(accuracy, abs=one_image)


def test_demo_script_shows_progress_bars(tmp_path):
    """Run as ``make demo`` runs it: a script, in its own process, with tqdm bars."""
    env = dict(os.environ, MINITF_DATA=str(tmp_path / "empty-cache"))
    args = [a for a in TINY if a != "--no-progress"]
    result = subprocess.run(
        [sys.executable, str(DEMO)] + args + ["--checkpoint-dir", str(tmp_path / "c")],
        capture_output=True, text=True, env=env, timeout=240, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "epoch 1/1:" in result.stderr and "batch/s" in result.stderr  # the tqdm bar
    assert _printed_final_accuracy(result.stdout)[0] > 0.5


@pytest.fixture(scope="module")
def bench():
    path = ROOT / "benchmarks" / "bench_mlp_training.py"
    spec = importlib.util.spec_from_file_location("bench_mlp_training", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sgd_steps_match_the_hand_written_numpy_steps(bench):
    """The benchmark's two steps do the same math: after a few steps, the same weights."""
    rng = np.random.default_rng(0)
    batches = [(rng.random((16, 784), dtype=np.float32), rng.integers(0, 10, 16))
               for _ in range(4)]
    difference = bench.check_same_math(np, tf, [784, 32, 16, 10], 0.5, batches)
    assert difference < 1e-5
    # And the steps did train: the weights moved away from where they started.
    start = bench.initial_parameters(np, [784, 32, 16, 10])
    step = bench.make_numpy_step(np, [p.copy() for p in start], 0.5)
    losses = [step(*batches[0]) for _ in range(5)]
    assert losses[-1] < losses[0]


def test_benchmark_runs_and_reports_a_ratio(bench, capsys):
    ratio = bench.main(["--hidden", "16", "--batch", "8", "--repeat", "1", "--min-time", "0.01",
                        "--memory-steps", "2", "--keep-openblas-coretype"])
    out = capsys.readouterr().out
    assert ratio > 0 and "vs NumPy" in out and "peak memory of the training loop" in out
    assert "the matrix products alone run at" in out
