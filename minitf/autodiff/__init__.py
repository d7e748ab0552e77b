"""Automatic differentiation as graph construction (``tf.gradients``).

Backward computations are ordinary ops added to the same graph, so they run,
place and differentiate (second order) like any other ops.
"""
