"""``minitf.datasets``: the shipped Iris table, splits, IDX files and MNIST loading.

The MNIST tests write small IDX files themselves; the real test set in the
shared data directory is checked too when it is there.  Downloads are tested
against a local HTTP server and an unreachable address — never the internet.
"""

import functools
import gzip
import http.server
import os
import pathlib
import threading
import time

import numpy as np
import pytest

import minitf as tf
from minitf.datasets import idx, mnist

REAL_MNIST = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist"


# ---- Iris ---------------------------------------------------------------------------------------
def test_iris_is_fishers_table():
    features, labels = tf.datasets.load_iris()
    assert features.shape == (150, 4) and features.dtype == np.float32
    assert labels.shape == (150,) and labels.dtype == np.int64
    assert np.bincount(labels).tolist() == [50, 50, 50]
    assert (labels[:50] == 0).all() and (labels[50:100] == 1).all() and (labels[100:] == 2).all()
    np.testing.assert_allclose(features.mean(axis=0), [5.843333, 3.057333, 3.758, 1.199333],
                               atol=1e-5)
    np.testing.assert_allclose(features.std(axis=0, ddof=1),
                               [0.8280661, 0.4358663, 1.7652982, 0.7622377], atol=1e-6)
    class_means = [features[labels == k].mean(axis=0) for k in range(3)]
    np.testing.assert_allclose(class_means, [[5.006, 3.428, 1.462, 0.246],
                                             [5.936, 2.770, 4.260, 1.326],
                                             [6.588, 2.974, 5.552, 2.026]], atol=1e-5)
    np.testing.assert_array_equal(features[0], np.float32([5.1, 3.5, 1.4, 0.2]))
    np.testing.assert_array_equal(features[149], np.float32([5.9, 3.0, 5.1, 1.8]))
    assert features.min() == np.float32(0.1) and features.max() == np.float32(7.9)


def test_iris_names():
    _, _, feature_names, class_names = tf.datasets.load_iris(return_names=True)
    assert feature_names == ("sepal_length", "sepal_width", "petal_length", "petal_width")
    assert class_names == ("setosa", "versicolor", "virginica")


def test_iris_csv_is_package_data():
    import tomllib
    root = pathlib.Path(__file__).resolve().parents[1]
    with open(root / "pyproject.toml", "rb") as f:
        package_data = tomllib.load(f)["tool"]["setuptools"]["package-data"]
    assert "iris.csv" in package_data["minitf.datasets"]
    assert (root / "minitf" / "datasets" / "iris.csv").read_text().count("\n") == 151


# ---- splits -------------------------------------------------------------------------------------
def test_train_test_split_is_stratified_reproducible_and_disjoint():
    x, y = tf.datasets.load_iris()
    (x_train, y_train), (x_test, y_test) = tf.datasets.train_test_split(x, y, 0.2, seed=0)
    assert len(x_train) == 120 and len(x_test) == 30
    assert np.bincount(y_test).tolist() == [10, 10, 10]
    rows = {tuple(r) + (int(c),) for r, c in zip(x_train, y_train)}
    rows |= {tuple(r) + (int(c),) for r, c in zip(x_test, y_test)}
    assert len(rows) == len({tuple(r) + (int(c),) for r, c in zip(x, y)})
    again = tf.datasets.train_test_split(x, y, 0.2, seed=0)
    np.testing.assert_array_equal(again[1][0], x_test)
    other = tf.datasets.train_test_split(x, y, 0.2, seed=1)
    assert not np.array_equal(other[1][0], x_test)


def test_train_test_split_without_labels_or_shuffle():
    data = np.arange(10)
    train, test = tf.datasets.train_test_split(data, test_fraction=0.3, shuffle=False)
    assert train.tolist() == list(range(7)) and test.tolist() == [7, 8, 9]
    train, test = tf.datasets.train_test_split(data, test_fraction=0.5, seed=3)
    assert sorted(train.tolist() + test.tolist()) == list(range(10))
    with pytest.raises(ValueError, match="between 0 and 1"):
        tf.datasets.train_test_split(data, test_fraction=1.0)
    with pytest.raises(ValueError, match="labels has 3"):
        tf.datasets.train_test_split(data, np.zeros(3))


# ---- IDX --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_idx_round_trip(tmp_path, dtype, suffix):
    array = (np.arange(24) - 5).reshape(2, 3, 4).astype(dtype)
    path = tmp_path / ("a.idx" + suffix)
    tf.datasets.write_idx(path, array)
    assert (path.read_bytes()[:2] == b"\x1f\x8b") == (suffix == ".gz")
    magic, read = tf.datasets.read_idx(path)
    assert read.dtype == np.dtype(dtype).newbyteorder("=") and read.shape == (2, 3, 4)
    np.testing.assert_array_equal(read, array)
    assert magic == {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C,
                     np.float32: 0x0D, np.float64: 0x0E}[dtype] << 8 | 3


def test_idx_header_is_big_endian():
    assert idx.idx_bytes(np.array([[1, 2, 3]], dtype=np.int16)) == (
        b"\x00\x00\x0b\x02" b"\x00\x00\x00\x01" b"\x00\x00\x00\x03" b"\x00\x01\x00\x02\x00\x03")


@pytest.mark.parametrize("content,match", [
    (b"\x00\x00", "only 2 bytes"),
    (b"\x12\x34\x08\x01\x00\x00\x00\x01\x05", "bad magic number 0x12340801"),
    (b"\x00\x00\x07\x01\x00\x00\x00\x01\x05", "bad magic number"),
    (b"\x00\x00\x08\x03\x00\x00\x00\x02", "truncated IDX header"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x04\x01\x02", "truncated or damaged"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x01\x01\x02", "truncated or damaged"),
])
def test_idx_rejects_bad_files(tmp_path, content, match):
    path = tmp_path / "bad"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        tf.datasets.read_idx(path)


def test_idx_rejects_damaged_gzip(tmp_path):
    path = tmp_path / "bad.gz"
    path.write_bytes(gzip.compress(idx.idx_bytes(np.zeros((3, 4), np.uint8)))[:-6])
    with pytest.raises(ValueError, match="damaged gzip"):
        tf.datasets.read_idx(path)


# ---- MNIST from files -----------------------------------------------------------------------
def _write_mnist(directory, train=6, test=4, compress_train=True, compress_test=False):
    """Small fake MNIST files: image i is filled with i, its label is i % 10."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for split, count, compress in (("train", train, compress_train),
                                   ("t10k", test, compress_test)):
        images = np.repeat(np.arange(count, dtype=np.uint8), 28 * 28).reshape(count, 28, 28)
        labels = (np.arange(count) % 10).astype(np.uint8)
        suffix = ".gz" if compress else ""
        tf.datasets.write_idx(directory / ("%s-images-idx3-ubyte%s" % (split, suffix)), images)
        tf.datasets.write_idx(directory / ("%s-labels-idx1-ubyte%s" % (split, suffix)), labels)
    return directory


def test_load_mnist_from_directory(tmp_path):
    _write_mnist(tmp_path)
    (x_train, y_train), (x_test, y_test) = tf.datasets.load_mnist(tmp_path, download=False)
    assert x_train.shape == (6, 28, 28) and x_train.dtype == np.uint8
    assert y_train.tolist() == [0, 1, 2, 3, 4, 5] and y_train.dtype == np.int64
    assert x_test.shape == (4, 28, 28) and (x_test[3] == 3).all()
    images, labels = tf.datasets.load_mnist(str(tmp_path), split="test", normalize=True,
                                            download=False)
    assert images.dtype == np.float32 and images.max() == np.float32(3 / 255.0)
    assert labels.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="split must be"):
        tf.datasets.load_mnist(tmp_path, split="validation")


def test_load_mnist_rejects_inconsistent_files(tmp_path):
    directory = _write_mnist(tmp_path / "counts")
    tf.datasets.write_idx(directory / "t10k-labels-idx1-ubyte", np.zeros(5, np.uint8))
    with pytest.raises(ValueError, match="has 4 images but .* has 5 labels"):
        tf.datasets.load_mnist(directory, split="test", download=False)

    directory = _write_mnist(tmp_path / "swapped")
    (directory / "t10k-images-idx3-ubyte").write_bytes(
        (directory / "t10k-labels-idx1-ubyte").read_bytes())
    with pytest.raises(ValueError, match="not an MNIST images file: magic number 2049"):
        tf.datasets.load_mnist(directory, split="test", download=False)

    directory = _write_mnist(tmp_path / "labels")
    tf.datasets.write_idx(directory / "t10k-labels-idx1-ubyte", np.full(4, 12, np.uint8))
    with pytest.raises(ValueError, match="digits 0-9"):
        tf.datasets.load_mnist(directory, split="test", download=False)

    directory = _write_mnist(tmp_path / "truncated")
    content = (directory / "t10k-images-idx3-ubyte").read_bytes()
    (directory / "t10k-images-idx3-ubyte").write_bytes(content[:-100])
    with pytest.raises(ValueError, match="truncated or damaged"):
        tf.datasets.load_mnist(directory, split="test", download=False)


def test_real_mnist_test_set():
    if not (REAL_MNIST / "t10k-images-idx3-ubyte.gz").exists():
        pytest.skip("REAL MNIST FILES NOT FOUND at %s (see shared/data/README.md); the "
                    "small-file tests still cover the reader" % REAL_MNIST)
    images, labels = tf.datasets.load_mnist(REAL_MNIST, split="test", download=False)
    assert images.shape == (10000, 28, 28) and images.dtype == np.uint8
    assert np.bincount(labels, minlength=10).tolist() == [
        980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert labels[:10].tolist() == [7, 2, 1, 0, 4, 1, 4, 9, 5, 9]
    assert images.max() == 255 and images.min() == 0
    assert 30 < images.mean() < 36  # MNIST's mean pixel is about 33.3


# ---- MNIST downloads --------------------------------------------------------------------------
def test_offline_fails_fast_saying_where_to_put_files(tmp_path):
    start = time.monotonic()
    with pytest.raises(FileNotFoundError) as info:
        tf.datasets.load_mnist(tmp_path / "cache", base_url="http://127.0.0.1:9/", timeout=2.0)
    assert time.monotonic() - start < 10
    message = str(info.value)
    assert "train-images-idx3-ubyte" in message and str(tmp_path / "cache") in message
    assert "http://127.0.0.1:9/train-images-idx3-ubyte.gz" in message
    assert "put them in" in message and "MINITF_DATA" in message
    assert not [f for f in os.listdir(tmp_path / "cache") if not f.startswith(".")]


def test_download_false_fails_immediately(tmp_path):
    with pytest.raises(FileNotFoundError, match="download=False"):
        tf.datasets.load_mnist(tmp_path, split="test", download=False)


def test_cache_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("MINITF_DATA", str(tmp_path / "data"))
    assert mnist.cache_dir() == str(tmp_path / "data" / "mnist")
    monkeypatch.delenv("MINITF_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert mnist.cache_dir() == str(tmp_path / "xdg" / "minitf" / "mnist")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert mnist.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "minitf", "mnist")


@pytest.fixture
def mirror(tmp_path):
    """A local HTTP server serving fake MNIST .gz files; yields (base_url, request log)."""
    served = _write_mnist(tmp_path / "served", compress_test=True)
    requests = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            requests.append(self.path)

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(served)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield "http://127.0.0.1:%d/" % server.server_address[1], requests
    finally:
        server.shutdown()
        server.server_close()


def test_download_into_cache_then_reuse(mirror, tmp_path, monkeypatch):
    base_url, requests = mirror
    monkeypatch.setenv("MINITF_DATA", str(tmp_path / "data"))
    images, labels = tf.datasets.load_mnist(split="test", base_url=base_url,
                                            verify_checksums=False)
    assert images.shape == (4, 28, 28) and labels.tolist() == [0, 1, 2, 3]
    cached = sorted(os.listdir(tmp_path / "data" / "mnist"))
    assert cached == ["t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]
    assert len(requests) == 2
    tf.datasets.load_mnist(split="test", base_url=base_url, verify_checksums=False)
    assert len(requests) == 2  # served from the cache


def test_download_checks_md5(mirror, tmp_path):
    base_url, _ = mirror
    with pytest.raises(ValueError, match="MD5"):
        tf.datasets.load_mnist(tmp_path / "cache", split="test", base_url=base_url)
    assert os.listdir(tmp_path / "cache") == []  # nothing half-downloaded is kept


def test_missing_file_on_mirror(mirror, tmp_path):
    base_url, _ = mirror
    with pytest.raises(FileNotFoundError, match="HTTP 404"):
        tf.datasets.load_mnist(tmp_path / "cache", split="test", base_url=base_url + "nothing/",
                               verify_checksums=False)


def test_silent_server_times_out(tmp_path):
    """A server that accepts connections but never answers must not hang the loader."""
    import socket
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        start = time.monotonic()
        with pytest.raises(FileNotFoundError, match="could not be downloaded"):
            tf.datasets.load_mnist(tmp_path, split="test", timeout=0.5,
                                   base_url="http://127.0.0.1:%d/" % listener.getsockname()[1])
        assert time.monotonic() - start < 5


def test_idx_refuses_a_gzip_bomb_after_the_declared_size(tmp_path, monkeypatch):
    """A header declaring 4 bytes followed by 64 MiB of zeros (64 KiB
    compressed): refused, and decompression stops one chunk past 4 bytes."""
    path = tmp_path / "bomb.gz"
    with gzip.open(path, "wb") as f:
        f.write(idx.idx_bytes(np.zeros(4, np.uint8)))
        for _ in range(64):
            f.write(bytes(1 << 20))
    assert path.stat().st_size < 200_000
    inflated = []
    real_read = gzip.GzipFile.read

    def counting_read(self, size=-1):
        data = real_read(self, size)
        inflated.append(len(data))
        return data

    monkeypatch.setattr(gzip.GzipFile, "read", counting_read)
    with pytest.raises(ValueError, match="more data than the 4 bytes its IDX header declares"):
        tf.datasets.read_idx(path)
    assert sum(inflated) <= 4 + 8 + 1


def test_idx_refuses_a_declared_size_beyond_the_file_before_reading(tmp_path):
    path = tmp_path / "huge"
    path.write_bytes(b"\x00\x00\x0e\x03" + (1 << 31).to_bytes(4, "big") * 3 + b"\x00" * 16)
    with pytest.raises(ValueError, match="has only 16 bytes of data"):
        tf.datasets.read_idx(path)
