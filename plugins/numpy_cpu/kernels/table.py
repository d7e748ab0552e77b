"""The table of this backend's kernels, filled by the ``@kernel`` decorator."""

KERNELS = []


def kernel(*op_types, dtypes=None):
    """Registers the decorated function as the CPU kernel of ``op_types``."""
    def register(fn):
        for op_type in op_types:
            KERNELS.append((op_type, fn, dtypes))
        return fn
    return register
