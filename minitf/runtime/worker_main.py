"""``python -m minitf.runtime.worker_main``: the entry point of a device process.

Kept apart from :mod:`minitf.runtime.worker_process` (which the session
imports) so that running it as ``__main__`` never imports it twice.
"""

from minitf.runtime.worker_process import main

if __name__ == "__main__":
    main()
