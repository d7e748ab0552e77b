"""Program scaffolding of TF1 scripts: ``tf.logging``, ``tf.app.flags`` and ``tf.app.run``.

Pure Python, nothing to do with graphs; here so that a course script's first
lines (``tf.logging.set_verbosity(tf.logging.INFO)``, ``flags.DEFINE_integer``,
``tf.app.run()``) run unchanged.  Mirrors ``tensorflow/python/platform/``.
"""
