"""Client-side utilities (TF's ``tensorflow/python/client``): the timeline."""
