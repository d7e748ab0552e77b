"""tf.train.MonitoredSession, its hooks, and the Estimator running them.

Expectations are hand-computed: the model is ``loss = w**2`` trained by
gradient descent with rate 0.1 from ``w = 1``, so each step multiplies
``w`` by ``1 - 2 * 0.1 = 0.8`` and after ``n`` steps ``w = 0.8**n``.
The order of hook calls is TF1's documented order.
"""

import logging
import os
import re

import numpy as np
import pytest

import minitf as tf


class RecordingHook(tf.train.SessionRunHook):
    """Records every call, tagged with its own name; fetches ``fetch`` in each run."""

    def __init__(self, name, calls, fetch=None):
        self.name, self.calls, self.fetch, self.results = name, calls, fetch, []

    def begin(self):
        self.calls.append((self.name, "begin", tf.get_default_graph().finalized))

    def after_create_session(self, session, coord):
        self.calls.append((self.name, "after_create_session", session.graph.finalized))
        assert isinstance(coord, tf.train.Coordinator)

    def before_run(self, run_context):
        self.calls.append((self.name, "before_run"))
        return None if self.fetch is None else tf.train.SessionRunArgs(self.fetch)

    def after_run(self, run_context, run_values):
        self.calls.append((self.name, "after_run"))
        self.results.append(run_values.results)

    def end(self, session):
        self.calls.append((self.name, "end"))


def _quadratic_model():
    """``loss = w**2``, ``w = 1`` initially, one GD step (rate 0.1) per ``train_op``."""
    global_step = tf.train.get_or_create_global_step()
    w = tf.Variable(1.0, name="w")
    loss = tf.square(w)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    return global_step, w, train_op


def _train(checkpoint_dir, hooks, **kwargs):
    """Trains the quadratic model in a fresh graph until a hook stops; returns (steps, w)."""
    with tf.Graph().as_default():
        _, w, train_op = _quadratic_model()
        final_w = tf.train.FinalOpsHook(w)  # after a stop request, only hooks may still run
        runs = 0
        with tf.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir,
                                               hooks=hooks + [final_w],
                                               log_step_count_steps=None,
                                               save_summaries_steps=None, **kwargs) as sess:
            while not sess.should_stop():
                sess.run(train_op)
                runs += 1
        return runs, final_w.final_ops_values


# ---- the session and the order of hook calls -----------------------------------------------------
def test_hooks_are_called_in_tf_order_and_see_their_own_fetches():
    calls = []
    with tf.Graph().as_default():
        counter = tf.Variable(0, name="counter")
        increment = tf.assign_add(counter, 1)
        ten = tf.constant(10)
        first, second = RecordingHook("a", calls, fetch=ten), RecordingHook("b", calls)
        with tf.train.MonitoredSession(hooks=[first, second]) as sess:
            assert tf.get_default_graph().finalized
            values = [sess.run(increment) for _ in range(2)]
        assert not tf.get_default_graph().finalized  # it was not finalized before
    assert values == [1, 2]
    assert calls == [("a", "begin", False), ("b", "begin", False),
                     ("a", "after_create_session", True), ("b", "after_create_session", True),
                     ("a", "before_run"), ("b", "before_run"),
                     ("a", "after_run"), ("b", "after_run"),
                     ("a", "before_run"), ("b", "before_run"),
                     ("a", "after_run"), ("b", "after_run"),
                     ("a", "end"), ("b", "end")]
    assert first.results == [10, 10] and second.results == [None, None]


def test_graph_is_finalized_while_the_session_runs():
    with tf.Graph().as_default():
        tf.Variable(1.0)
        with tf.train.MonitoredSession() as sess:
            with pytest.raises(RuntimeError, match="finalized"):
                tf.constant(1.0)
            assert sess.graph is tf.get_default_graph()
        tf.constant(1.0)  # open again after close


def test_out_of_range_error_ends_the_loop_cleanly():
    calls = []
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices(np.array([1.0, 2.0, 3.0], np.float32))
        next_value = tf.data.make_one_shot_iterator(dataset).get_next()
        values = []
        with tf.train.MonitoredSession(hooks=[RecordingHook("h", calls)]) as sess:
            while not sess.should_stop():
                values.append(float(sess.run(next_value)))
        assert sess.should_stop()
    assert values == [1.0, 2.0, 3.0]
    # Four runs began (the fourth hit the end of the data), three finished; end() ran.
    names = [call[1] for call in calls]
    assert names.count("before_run") == 4 and names.count("after_run") == 3
    assert names[-1] == "end"


def test_other_errors_propagate_and_skip_end():
    calls = []
    with tf.Graph().as_default():
        tf.Variable(1.0)
        with pytest.raises(ValueError, match="boom"):
            with tf.train.MonitoredSession(hooks=[RecordingHook("h", calls)]):
                raise ValueError("boom")
    assert [call[1] for call in calls] == ["begin", "after_create_session"]


def test_request_stop_and_feeds_from_hooks():
    class StopAfterTwo(tf.train.SessionRunHook):
        def __init__(self):
            self.runs = 0

        def after_run(self, run_context, run_values):
            self.runs += 1
            if self.runs == 2:
                run_context.request_stop()

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        doubled = 2.0 * x
        fed = iter([1.0, 2.0, 3.0])
        outputs = []
        with tf.train.MonitoredSession(hooks=[StopAfterTwo(),
                                              tf.train.FeedFnHook(lambda: {x: next(fed)})]) as sess:
            while not sess.should_stop():
                outputs.append(sess.run(doubled))
            with pytest.raises(RuntimeError, match="should_stop"):
                sess.run(doubled)
        assert outputs == [2.0, 4.0]
        with tf.train.MonitoredSession(hooks=[tf.train.FeedFnHook(lambda: {x: 1.0})]) as sess:
            with pytest.raises(RuntimeError, match="fed by a SessionRunHook and user"):
                sess.run(doubled, feed_dict={x: 5.0})


def test_singular_monitored_session_and_run_step_fn():
    with tf.Graph().as_default():
        global_step, w, train_op = _quadratic_model()
        with tf.train.SingularMonitoredSession(
                hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
            while not sess.should_stop():
                sess.run(train_op)
            assert sess.raw_session().run(global_step) == 3
            assert sess.raw_session().run(w) == pytest.approx(0.8 ** 3)

        def step_fn(step_context):
            step_context.run_with_hooks(train_op)
            step_context.request_stop()

        with tf.train.MonitoredSession() as sess:
            assert sess.run_step_fn(step_fn) is None
            assert sess.should_stop()


# ---- Scaffold and session creation ---------------------------------------------------------------
def test_scaffold_makes_the_ready_ops_and_checks_them():
    with tf.Graph().as_default():
        tf.Variable(1.0, name="a")
        tf.Variable(2.0, name="b")
        scaffold = tf.train.Scaffold(init_op=tf.no_op())  # initialises nothing
        with pytest.raises(RuntimeError, match="Variables not initialized: a, b"):
            tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold=scaffold))
    with tf.Graph().as_default():
        a = tf.Variable(1.0, name="a")
        assign = tf.assign(a, 5.0)  # init_fn runs after the graph is finalized: build it now
        scaffold = tf.train.Scaffold(init_fn=lambda scaffold, session: session.run(assign))
        with tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold=scaffold)) as sess:
            assert sess.run(a) == 5.0
        assert isinstance(scaffold.saver, tf.train.Saver)
        assert tf.get_collection(tf.GraphKeys.SAVERS) == [scaffold.saver]
        assert tf.get_collection(tf.GraphKeys.READY_OP) == [scaffold.ready_op]


def test_local_variables_are_initialised_by_the_local_init_op():
    with tf.Graph().as_default():
        counter = tf.Variable(3, name="local_counter", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        with tf.train.MonitoredSession() as sess:
            assert sess.run(counter) == 3


# ---- StopAtStepHook, checkpoints and resuming ----------------------------------------------------
def test_stop_at_step_hook_stops_at_the_global_step(tmp_path):
    runs, w = _train(None, [tf.train.StopAtStepHook(num_steps=4)])
    assert runs == 4 and w == pytest.approx(0.8 ** 4)
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of"):
        tf.train.StopAtStepHook(num_steps=1, last_step=1)
    with tf.Graph().as_default(), pytest.raises(RuntimeError, match="Global step"):
        tf.Variable(1.0)
        tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=1)])


def test_resuming_from_checkpoint_dir_continues_the_global_step(tmp_path):
    runs, w = _train(str(tmp_path), [tf.train.StopAtStepHook(last_step=3)])
    assert runs == 3 and w == pytest.approx(0.8 ** 3)
    assert tf.train.latest_checkpoint(str(tmp_path)) == os.path.join(str(tmp_path),
                                                                     "model.ckpt-3")
    # Restored at global step 3: last_step=5 is two more steps; num_steps=2 counts from 5.
    runs, w = _train(str(tmp_path), [tf.train.StopAtStepHook(last_step=5)])
    assert runs == 2 and w == pytest.approx(0.8 ** 5)
    runs, w = _train(str(tmp_path), [tf.train.StopAtStepHook(num_steps=2)])
    assert runs == 2 and w == pytest.approx(0.8 ** 7)
    assert tf.train.load_variable(tf.train.latest_checkpoint(str(tmp_path)),
                                  "global_step") == 7


def test_checkpoints_are_written_every_n_steps(tmp_path):
    _train(str(tmp_path), [tf.train.StopAtStepHook(last_step=7)], save_checkpoint_steps=3)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    # At creation (0), every 3 steps (3, 6), and at the end (7); the Saver keeps 5.
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
        "model.ckpt-0", "model.ckpt-3", "model.ckpt-6", "model.ckpt-7"]
    np.testing.assert_allclose(
        tf.train.load_variable(os.path.join(str(tmp_path), "model.ckpt-3"), "w"), 0.8 ** 3,
        rtol=1e-6)


def test_checkpoint_saver_hook_listeners_and_errors(tmp_path):
    events = []

    class Listener(tf.train.CheckpointSaverListener):
        def begin(self):
            events.append("begin")

        def before_save(self, session, global_step_value):
            events.append(("before", global_step_value))

        def after_save(self, session, global_step_value):
            events.append(("after", global_step_value))
            return global_step_value == 4  # stop training at step 4

        def end(self, session, global_step_value):
            events.append(("end", global_step_value))

    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[Listener()])
    with tf.Graph().as_default():
        _, _, train_op = _quadratic_model()
        tf.add_to_collection(tf.GraphKeys.SAVERS, tf.train.Saver())
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            while not sess.should_stop():
                sess.run(train_op)
    assert events == ["begin", ("before", 0), ("after", 0), ("before", 2), ("after", 2),
                      ("before", 4), ("after", 4), ("end", 4)]
    with pytest.raises(ValueError, match="both saver and scaffold"):
        tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, saver=object(),
                                     scaffold=tf.train.Scaffold())
    with pytest.raises(ValueError, match="Can not provide both every_secs and every_steps"):
        tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, save_secs=1)


# ---- NaN, logging, summaries, final ops ----------------------------------------------------------
def test_nan_tensor_hook_raises_or_stops(caplog):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        loss = tf.sqrt(x)  # NaN for x < 0
        with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss)]) as sess:
            assert sess.run(loss, feed_dict={x: 4.0}) == 2.0
            with pytest.raises(tf.train.NanLossDuringTrainingError,
                               match="NaN loss during training"):
                sess.run(loss, feed_dict={x: -1.0})
        caplog.set_level(logging.WARNING, logger="tensorflow")
        hook = tf.train.NanTensorHook(loss, fail_on_nan_loss=False)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run(loss, feed_dict={x: -1.0})
            assert sess.should_stop()
    assert "Model diverged with loss = NaN." in caplog.text
    assert tf.estimator.estimator.NanLossDuringTrainingError is tf.train.NanLossDuringTrainingError


def test_logging_tensor_hook_output(caplog):
    caplog.set_level(logging.INFO, logger="tensorflow")
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices(np.arange(1, 6, dtype=np.int64))
        value = tf.data.make_one_shot_iterator(dataset).get_next()
        doubled = tf.identity(value * 2, name="doubled")
        seven = tf.constant(7, name="seven")
        hooks = [tf.train.LoggingTensorHook({"x": value, "twice": "doubled:0"}, every_n_iter=2),
                 tf.train.LoggingTensorHook(["seven"], at_end=True,
                                            formatter=lambda v: "END %s" % v["seven"])]
        with tf.train.MonitoredSession(hooks=hooks) as sess:
            for _ in range(5):
                sess.run(value)
    lines = [r.getMessage() for r in caplog.records if r.name == "tensorflow"
             and ("x = " in r.getMessage() or "END" in r.getMessage())]
    # Iterations 0, 2, 4 log, tags sorted; each line after the first gives the seconds between.
    assert lines[0] == "twice = 2, x = 1"
    assert re.fullmatch(r"twice = 6, x = 3 \(\d+\.\d{3} sec\)", lines[1])
    assert re.fullmatch(r"twice = 10, x = 5 \(\d+\.\d{3} sec\)", lines[2])
    assert lines[3:] == ["END 7"]  # at_end, through the formatter
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        tf.train.LoggingTensorHook(["doubled"])
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        tf.train.LoggingTensorHook(["doubled"], every_n_iter=0)


def test_step_counter_and_summary_saver_hooks(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="tensorflow")
    with tf.Graph().as_default():
        global_step, w, train_op = _quadratic_model()
        tf.summary.scalar("w_value", w)
        writer = tf.summary.FileWriter(str(tmp_path))
        hooks = [tf.train.StopAtStepHook(last_step=4),
                 tf.train.StepCounterHook(every_n_steps=2, summary_writer=writer),
                 tf.train.SummarySaverHook(save_steps=1, summary_writer=writer,
                                           summary_op=tf.summary.merge_all())]
        with tf.train.MonitoredSession(hooks=hooks) as sess:
            while not sess.should_stop():
                sess.run(train_op)
        writer.close()
    assert re.search(r"global_step/sec: [\d.e+]+", caplog.text)
    scalars = {}
    for path in tmp_path.iterdir():
        for event in tf.train.summary_iterator(str(path)):
            for value in event.summary.value if event.summary else []:
                scalars.setdefault(value.tag, []).append((event.step, value.simple_value))
    # Measured when first seen at step 1 (no rate yet), then 2 steps later.
    assert [step for step, _ in scalars["global_step/sec"]] == [3]
    # Each summary reads w in the run that also updates it, so its value is w before or
    # after that step; the steps it is written at are exact.
    assert [step for step, _ in scalars["w_value"]] == [1, 2, 3, 4]
    for step, value in scalars["w_value"]:
        assert value == pytest.approx(0.8 ** (step - 1)) or value == pytest.approx(0.8 ** step)


def test_final_ops_hook_reads_values_at_the_end():
    with tf.Graph().as_default():
        total = tf.Variable(0.0)
        add = tf.assign_add(total, 2.5)
        hook = tf.train.FinalOpsHook({"total": total})
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(3):
                sess.run(add)
        assert hook.final_ops_values == {"total": 7.5}


def test_global_step_waiter_hook_passes_once_the_step_is_reached():
    with tf.Graph().as_default():
        global_step, _, train_op = _quadratic_model()
        set_step = tf.assign(global_step, 5)
        waiter = tf.train.GlobalStepWaiterHook(wait_until_step=5)
        with tf.train.SingularMonitoredSession(hooks=[waiter]) as sess:
            sess.raw_session().run(set_step)  # as if the chief had trained 5 steps
            sess.run(train_op)
            assert sess.raw_session().run(global_step) == 6


def test_monitored_training_session_default_hooks(tmp_path):
    with tf.Graph().as_default():
        _quadratic_model()
        sess = tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                                 save_checkpoint_steps=10)
        kinds = [type(hook).__name__ for hook in sess._hooks]
        sess.close()
    assert kinds == ["StepCounterHook", "SummarySaverHook", "CheckpointSaverHook"]
    with tf.Graph().as_default():
        _quadratic_model()
        sess = tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(1)])
        assert [type(hook).__name__ for hook in sess._hooks] == ["StopAtStepHook"]
        sess.close()
        with pytest.raises(RuntimeError, match="already closed"):
            sess.close()


# ---- the Estimator runs hooks --------------------------------------------------------------------
def _quadratic_model_fn(training_hooks=None, evaluation_hooks=None, prediction_hooks=None):
    """A model_fn: ``w * x`` fit to ``y = 0`` with x = 1, so ``loss = w**2`` and each
    step multiplies ``w`` by 0.8; its spec carries the given hooks.  (Hooks are not
    passed through ``params``: the Estimator deep-copies those.)"""
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [], initializer=tf.ones_initializer())
        prediction = w * features["x"]
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"y": prediction},
                                              prediction_hooks=prediction_hooks)
        loss = tf.reduce_mean(tf.square(prediction - labels))
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                          training_hooks=training_hooks,
                                          evaluation_hooks=evaluation_hooks)
    return model_fn


def _ones_input_fn(batches=None):
    def input_fn():
        dataset = tf.data.Dataset.from_tensors(({"x": np.ones([2], np.float32)},
                                                np.zeros([2], np.float32)))
        return dataset.repeat(batches)
    return input_fn


def test_estimator_runs_hooks_in_train_evaluate_predict(tmp_path):
    calls = []
    train_hook, spec_hook = RecordingHook("train", calls), RecordingHook("spec", calls)
    eval_hook, predict_hook = RecordingHook("eval", calls), RecordingHook("predict", calls)
    estimator = tf.estimator.Estimator(
        _quadratic_model_fn([spec_hook], [eval_hook], [predict_hook]), model_dir=str(tmp_path))
    # A hook stopping at global step 3 ends train(steps=10) early.
    estimator.train(_ones_input_fn(), steps=10,
                    hooks=[train_hook, tf.train.StopAtStepHook(last_step=3)])
    assert estimator.get_variable_value("global_step") == 3
    assert estimator.get_variable_value("w") == pytest.approx(0.8 ** 3)
    for name in ("train", "spec"):
        assert [c[1] for c in calls if c[0] == name] == (
            ["begin", "after_create_session"] + ["before_run", "after_run"] * 3 + ["end"])
    results = estimator.evaluate(_ones_input_fn(batches=2), hooks=[])
    assert results["loss"] == pytest.approx(0.8 ** 6) and results["global_step"] == 3
    assert [c[1] for c in calls if c[0] == "eval"].count("after_run") == 2
    predictions = list(estimator.predict(_ones_input_fn(batches=1)))
    assert [p["y"] for p in predictions] == pytest.approx([0.8 ** 3] * 2)
    assert [c[1] for c in calls if c[0] == "predict"].count("after_run") == 1
    with pytest.raises(TypeError, match="SessionRunHook"):
        estimator.train(_ones_input_fn(), steps=1, hooks=[object()])
    with pytest.raises(TypeError, match="SessionRunHook"):
        tf.estimator.TrainSpec(_ones_input_fn(), hooks=[object()])
    with pytest.raises(TypeError, match="SessionRunHook"):
        with tf.Graph().as_default():
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.PREDICT,
                                       predictions=tf.constant(1.0), prediction_hooks=[1])


def test_estimator_logs_loss_and_step_and_stops_on_nan(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="tensorflow")
    estimator = tf.estimator.Estimator(
        _quadratic_model_fn(), model_dir=str(tmp_path),
        config=tf.estimator.RunConfig(log_step_count_steps=2))
    estimator.train(_ones_input_fn(), steps=3)
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("loss = ")]
    # Local steps 0 and 2 log.  The loss and the step are read in the run that updates
    # them, so (as in TF) each may show the value before or after that update.
    assert len(logged) == 2
    first = re.fullmatch(r"loss = ([\d.]+), step = (\d)", logged[0])
    assert float(first.group(1)) in (pytest.approx(1.0), pytest.approx(0.64))
    assert int(first.group(2)) in (0, 1)
    third = re.fullmatch(r"loss = ([\d.]+), step = (\d) \(\d+\.\d{3} sec\)", logged[1])
    assert float(third.group(1)) in (pytest.approx(0.8 ** 4), pytest.approx(0.8 ** 6))
    assert int(third.group(2)) in (2, 3)

    def nan_model_fn(features, labels, mode):
        w = tf.get_variable("w", [], initializer=tf.ones_initializer())
        loss = tf.sqrt(-w) + 0.0 * tf.reduce_sum(features["x"])
        train_op = tf.assign_add(tf.train.get_global_step(), 1)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    with pytest.raises(tf.train.NanLossDuringTrainingError):
        tf.estimator.Estimator(nan_model_fn, model_dir=str(tmp_path / "nan")).train(
            _ones_input_fn(), steps=2)
