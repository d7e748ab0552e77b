"""``tf.data``: input pipelines as graph ops (``Dataset``, iterators)."""
