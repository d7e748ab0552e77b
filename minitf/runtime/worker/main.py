"""``python -m minitf.runtime.worker.main``: the entry point of a device process.

Kept apart from :mod:`minitf.runtime.worker.server` (which the session also
imports, to serve its own devices) so that running it as ``__main__`` never
imports that module twice.
"""

from minitf.runtime.worker.server import main

if __name__ == "__main__":
    main()
