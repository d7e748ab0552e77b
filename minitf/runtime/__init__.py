"""The runtime layer: sessions, pruning, placement, the executor.

It runs graphs built by the framework and ops layers, finding kernels only
through the registry — it never imports a backend.
"""
