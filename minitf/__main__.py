"""``python -m minitf COMMAND``: see :mod:`minitf.cli`."""

import sys

from minitf.cli import main

if __name__ == "__main__":
    sys.exit(main())
