"""The framework layer: graphs, operations, tensors, dtypes, shapes, errors.

It describes computations and knows nothing of running them.
"""
