"""Creation sites as TF's GraphDebugInfo (minitf/framework/graph_debug_info.py)."""

import minitf as tf
from minitf.framework.graph_debug_info import create_graph_debug_info_def, creation_sites


def _line():
    import inspect
    return inspect.currentframe().f_back.f_lineno


def test_each_op_has_its_creation_site_and_files_are_listed_once():
    line = _line() + 1
    a = tf.constant(1.0, name="a")
    b = tf.add(a, 2.0, name="b")
    info = create_graph_debug_info_def([a.op, b.op])
    assert list(info.files) == [__file__]
    assert creation_sites(info) == {"a": (__file__, line), "b": (__file__, line + 1)}


def test_the_message_round_trips_through_its_bytes():
    c = tf.constant(3.0, name="c")
    info = create_graph_debug_info_def([c.op])
    again = type(info).FromString(info.SerializeToString())
    assert creation_sites(again) == {"c": c.op.traceback}


def test_a_frame_naming_an_unlisted_file_is_left_out():
    info = create_graph_debug_info_def([tf.constant(1.0, name="d").op])
    info.traces["d"].file_line_cols[0].file_index = 7
    info.traces["e"].file_line_cols.add(file_index=0, line=3)
    assert creation_sites(info) == {"e": (__file__, 3)}


def test_an_op_made_in_a_notebook_cell_names_the_cell(monkeypatch):
    import sys
    import types
    cell_file = "/tmp/ipykernel_123/4567.py"  # what a kernel compiles a cell as
    compiler = types.SimpleNamespace(
        format_code_name=lambda name: ("Cell", "In[7]") if name == cell_file else None)
    shell = types.SimpleNamespace(compile=compiler)
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    scope = {"tf": tf}
    exec(compile("\nop = tf.constant(1.0, name='in_cell').op", cell_file, "exec"), scope)
    assert scope["op"].traceback == ("Cell In[7]", 2)
    assert tf.constant(2.0).op.traceback[0] == __file__  # a file stays a file
