"""CPU kernels of ``ReadFile`` and ``WriteFile``: a file's bytes in and out of a string tensor.

Errors follow TF's file system: a missing file is ``NotFoundError``, a
directory ``FailedPreconditionError``, anything else the OS refuses
``PermissionDeniedError`` or ``UnknownError``.  A file is written atomically
(a temporary file renamed over the target), so a reader never sees half of
it.
"""

import errno
import os

import numpy as np

from minitf.plugin import errors, write_atomically
from minitf_numpy_cpu.kernels.table import kernel

_ERROR_CLASSES = {errno.ENOENT: errors.NotFoundError, errno.EISDIR: errors.FailedPreconditionError,
                  errno.ENOTDIR: errors.FailedPreconditionError,
                  errno.EEXIST: errors.FailedPreconditionError,  # a file where a directory goes
                  errno.EACCES: errors.PermissionDeniedError}


def _path(value):
    value = value.item() if isinstance(value, np.ndarray) else value
    return os.fsdecode(value)


def _bytes(value):
    value = value.item() if isinstance(value, np.ndarray) else value
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def _os_error(ctx, path, error):
    """TF's error class for an ``OSError``, with TF's message ``path; reason``."""
    error_class = _ERROR_CLASSES.get(error.errno, errors.UnknownError)
    return ctx.error(error_class, "%s; %s" % (path, error.strerror or error))


@kernel("ReadFile")
def read_file(ctx, filename):
    path = _path(filename)
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as error:
        raise _os_error(ctx, path, error) from None


@kernel("WriteFile")
def write_file(ctx, filename, contents):
    path = _path(filename)
    try:
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        write_atomically(path, _bytes(contents))
    except OSError as error:
        raise _os_error(ctx, path, error) from None
