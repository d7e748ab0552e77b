"""``tf.logging``: TF1's logger, a thin layer over Python's :mod:`logging`.

The levels are Python's (``tf.logging.INFO == logging.INFO``); messages go to
the ``"tensorflow"`` logger, as in TF1, so ``logging`` configuration applies.

Example:
    >>> import minitf as tf
    >>> tf.logging.set_verbosity(tf.logging.INFO)
    >>> tf.logging.info("step %d, loss %.3f", 10, 0.25)

Mirrors ``tensorflow/python/platform/tf_logging.py``.
"""

import logging as _logging
import sys

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_logger = None


def get_logger():
    """The ``"tensorflow"`` logger, given a stderr handler the first time it is used."""
    global _logger
    if _logger is None:
        logger = _logging.getLogger("tensorflow")
        if not logger.handlers:
            handler = _logging.StreamHandler(sys.stderr)
            handler.setFormatter(_logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
            logger.addHandler(handler)
        _logger = logger
    return _logger


def set_verbosity(v):
    """Logs messages of level ``v`` and above."""
    get_logger().setLevel(v)


def get_verbosity():
    return get_logger().getEffectiveLevel()


def log(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    get_logger().debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    get_logger().info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    get_logger().warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    get_logger().error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    get_logger().fatal(msg, *args, **kwargs)


_log_counts = {}


def log_every_n(level, msg, n, *args):
    """Logs ``msg`` the 1st, (n+1)th, (2n+1)th... time this line calls it."""
    caller = sys._getframe(1)
    site = (caller.f_code.co_filename, caller.f_lineno)
    count = _log_counts.get(site, 0)
    _log_counts[site] = count + 1
    if count % n == 0:
        log(level, msg, *args)


def log_first_n(level, msg, n, *args):
    """Logs ``msg`` only the first ``n`` times this line calls it."""
    caller = sys._getframe(1)
    site = (caller.f_code.co_filename, caller.f_lineno)
    count = _log_counts.get(site, 0)
    _log_counts[site] = count + 1
    if count < n:
        log(level, msg, *args)
