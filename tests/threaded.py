"""Running a blocking call in a thread, for the tests of ops that wait (queues, accumulators)."""

import threading


def start(fn, *args):
    """Runs ``fn(*args)`` in a daemon thread; returns (thread, result dict)."""
    result = {}

    def target():
        try:
            result["value"] = fn(*args)
        except Exception as e:  # inspected by the test
            result["error"] = e
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, result
