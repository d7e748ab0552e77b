"""MNIST handwritten digits: reading the standard IDX files, downloading and caching them.

MNIST is four files (LeCun, Cortes and Burges), each in the IDX format
(:mod:`minitf.datasets.idx`), usually gzip-compressed::

    train-images-idx3-ubyte.gz   60000 x 28 x 28 uint8 pixels (0 = background)
    train-labels-idx1-ubyte.gz   60000 uint8 digits 0-9
    t10k-images-idx3-ubyte.gz    10000 x 28 x 28 (the test set)
    t10k-labels-idx1-ubyte.gz    10000

:func:`load_mnist` looks for them, compressed or not, in a directory:
``path`` if given, else the cache directory ``$MINITF_DATA/mnist`` (when the
environment variable ``MINITF_DATA`` is set) or ``~/.cache/minitf/mnist``.
Files that are missing are downloaded there from ``base_url`` (default:
TF's own mirror, overridable with ``$MINITF_MNIST_URL``), checked against
their known MD5 sums and stored atomically.  Offline, it fails within
``timeout`` seconds with a message saying where to put the files.

Example:
    >>> (x_train, y_train), (x_test, y_test) = load_mnist()
    >>> x_test.shape, x_test.dtype, y_test[:5]
    ((10000, 28, 28), dtype('uint8'), array([7, 2, 1, 0, 4]))
"""

import hashlib
import os
import socket
import tempfile
import urllib.error
import urllib.request

import numpy as np

from minitf.datasets import idx

DEFAULT_BASE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
IMAGES_MAGIC = 2051
LABELS_MAGIC = 2049
FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
         "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
MD5 = {"train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
       "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
       "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
       "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c"}


def cache_dir():
    """Where downloaded MNIST files are kept: ``$MINITF_DATA/mnist``, else
    ``$XDG_CACHE_HOME/minitf/mnist`` or ``~/.cache/minitf/mnist``."""
    root = os.environ.get("MINITF_DATA")
    if root:
        return os.path.join(root, "mnist")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "minitf", "mnist")


def load_mnist(path=None, split=None, base_url=None, download=True, timeout=10.0,
               normalize=False, verify_checksums=True):
    """Loads MNIST from IDX files, downloading missing ones.

    Args:
        path: the directory holding the files (default: :func:`cache_dir`).
        split: ``"train"`` or ``"test"`` for one part, None for both.
        base_url: where to download missing files from (default
            ``$MINITF_MNIST_URL`` or :data:`DEFAULT_BASE_URL`).
        download: False to fail instead of downloading.
        timeout: seconds to wait on the network before giving up.
        normalize: return float32 images scaled to [0, 1] instead of uint8.
        verify_checksums: check downloaded files against :data:`MD5`.

    Returns:
        For one split ``(images, labels)``: images ``[n, 28, 28]`` (uint8, or
        float32 with ``normalize``), labels int64 ``[n]``.  For both,
        ``((x_train, y_train), (x_test, y_test))``.

    Raises:
        FileNotFoundError: if files are missing and cannot be downloaded
            (the message says where to put them).
        ValueError: if a file is not valid MNIST IDX data, or a download
            does not match its checksum.
    """
    if split is None:
        return tuple(load_mnist(path, s, base_url, download, timeout, normalize,
                                verify_checksums) for s in ("train", "test"))
    if split not in FILES:
        raise ValueError("split must be 'train', 'test' or None, got %r" % (split,))
    directory = os.fspath(path) if path is not None else cache_dir()
    images_name, labels_name = FILES[split]
    images_path = _find_or_download(directory, images_name, base_url, download, timeout,
                                    verify_checksums)
    labels_path = _find_or_download(directory, labels_name, base_url, download, timeout,
                                    verify_checksums)
    images, labels = _read_pair(images_path, labels_path)
    if normalize:
        images = images.astype(np.float32) / np.float32(255.0)
    return images, labels


def _read_pair(images_path, labels_path):
    """Reads and cross-checks one images file and its labels file."""
    magic, images = idx.read_idx(images_path)
    if magic != IMAGES_MAGIC or images.dtype != np.uint8 or images.ndim != 3:
        raise ValueError("%s is not an MNIST images file: magic number %d (expected %d, uint8 "
                         "with 3 dimensions), shape %s"
                         % (images_path, magic, IMAGES_MAGIC, list(images.shape)))
    magic, labels = idx.read_idx(labels_path)
    if magic != LABELS_MAGIC or labels.dtype != np.uint8 or labels.ndim != 1:
        raise ValueError("%s is not an MNIST labels file: magic number %d (expected %d, uint8 "
                         "with 1 dimension), shape %s"
                         % (labels_path, magic, LABELS_MAGIC, list(labels.shape)))
    if len(images) != len(labels):
        raise ValueError("%s has %d images but %s has %d labels"
                         % (images_path, len(images), labels_path, len(labels)))
    if labels.size and labels.max() > 9:
        raise ValueError("%s: labels must be digits 0-9, found %d" % (labels_path, labels.max()))
    return images, labels.astype(np.int64)


def _find_or_download(directory, name, base_url, download, timeout, verify_checksums):
    for candidate in (name, name + ".gz"):
        full = os.path.join(directory, candidate)
        if os.path.isfile(full):
            return full
    base_url = base_url or os.environ.get("MINITF_MNIST_URL") or DEFAULT_BASE_URL
    url = base_url.rstrip("/") + "/" + name + ".gz"
    where = ("MNIST file %s is not in %s (looked for %s and %s.gz)"
             % (name, directory, name, name))
    advice = ("Download the four MNIST files (train-images-idx3-ubyte.gz, "
              "train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz; "
              "gzip-compressed or not) and put them in %s, or pass load_mnist(path=...) a "
              "directory that holds them, or set MINITF_DATA." % directory)
    if not download:
        raise FileNotFoundError("%s and download=False. %s" % (where, advice))
    target = os.path.join(directory, name + ".gz")
    try:
        os.makedirs(directory, exist_ok=True)
        _download(url, target, timeout, MD5.get(name + ".gz") if verify_checksums else None)
    except urllib.error.HTTPError as e:
        raise FileNotFoundError("%s and could not be downloaded from %s (HTTP %d: %s). %s"
                                % (where, url, e.code, e.reason, advice)) from None
    except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError) as e:
        reason = getattr(e, "reason", e)
        raise FileNotFoundError("%s and could not be downloaded from %s (%s; are you offline?). "
                                "%s" % (where, url, reason, advice)) from None
    except OSError as e:
        raise FileNotFoundError("%s and could not be stored there (%s). %s"
                                % (where, e, advice)) from None
    return target


def _download(url, target, timeout, md5):
    """Fetches ``url`` into ``target`` atomically (temp file + ``os.replace``).

    Raises:
        ValueError: if the content does not have the expected MD5.
    """
    directory = os.path.dirname(target)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(target) + ".",
                               suffix=".part")
    try:
        digest = hashlib.md5(usedforsecurity=False)
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
            while True:
                chunk = response.read(1 << 20)
                if not chunk:
                    break
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if md5 is not None and digest.hexdigest() != md5:
            raise ValueError("%s: downloaded content has MD5 %s, expected %s (a bad mirror or a "
                             "broken download; nothing was stored)"
                             % (url, digest.hexdigest(), md5))
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
