"""``tf.app``: ``tf.app.run()`` parses the flags and calls ``main(argv)``.

Mirrors ``tensorflow/python/platform/app.py`` (absl's ``app.run``).
"""

import sys

from minitf.platform import flags


def run(main=None, argv=None):
    """Parses flags from ``argv`` (default ``sys.argv``), then exits with ``main(rest)``.

    ``main`` defaults to the ``main`` function of the ``__main__`` module.
    """
    rest = flags.FLAGS(sys.argv if argv is None else argv)
    main = main or sys.modules["__main__"].main
    sys.exit(main(rest))
