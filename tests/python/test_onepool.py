"""The `onepool` Python module against the C++ library: the generated MLP (x: float32[batch,784]
-> probs: float32[batch,10], 3 Gemm + 2 Relu + Softmax) run at batch 1 and compared with numpy
evaluating the same weights, with the CLI's saved outputs, and its plan with `onepool plan`'s."""

import json
import os
import subprocess
import threading

import numpy as np
import onnx
import onnx.helper
import onnx.numpy_helper
import pytest

import onepool


def reference_mlp(path, x):
    """numpy's evaluation of the MLP's Gemm / Relu / Softmax nodes from the file's weights."""
    model = onnx.load(str(path))
    values = {t.name: onnx.numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    values[model.graph.input[0].name] = x.astype(np.float64)
    for node in model.graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        inputs = [values[name] for name in node.input]
        if node.op_type == "Gemm":
            a, b = inputs[0], inputs[1]
            if attrs.get("transA", 0):
                a = a.T
            if attrs.get("transB", 0):
                b = b.T
            y = attrs.get("alpha", 1.0) * (a @ b)
            if len(inputs) > 2:
                y = y + attrs.get("beta", 1.0) * inputs[2]
        elif node.op_type == "Relu":
            y = np.maximum(inputs[0], 0)
        elif node.op_type == "Softmax":
            e = np.exp(inputs[0] - inputs[0].max(axis=attrs.get("axis", -1), keepdims=True))
            y = e / e.sum(axis=attrs.get("axis", -1), keepdims=True)
        else:
            raise AssertionError(f"reference_mlp: no numpy version of {node.op_type}")
        values[node.output[0]] = y
    return values[model.graph.output[0].name]


@pytest.fixture(scope="module")
def mlp_input():
    return np.random.default_rng(7).standard_normal((1, 784)).astype(np.float32)


@pytest.fixture(scope="module")
def session(mlp_path):
    return onepool.Session(mlp_path, dims={"batch": 1})


def test_version_is_the_library_version(root):
    # The project's version, from CMakeLists.txt's project(onepool VERSION ...).
    text = (root / "CMakeLists.txt").read_text()
    assert f"VERSION {onepool.__version__} " in text


def test_session_describes_inputs_and_outputs(session):
    assert [(i.name, i.dtype, i.shape) for i in session.inputs] == [("x", np.float32, (1, 784))]
    assert [(o.name, o.dtype, o.shape) for o in session.outputs] == [("probs", np.float32, (1, 10))]
    assert session.device == "cpu"


def test_run_matches_numpy_on_the_model_weights(session, mlp_path, mlp_input):
    outputs = session.run({"x": mlp_input})
    assert list(outputs) == ["probs"]
    probs = outputs["probs"]
    assert probs.dtype == np.float32 and probs.shape == (1, 10)
    assert probs.flags.c_contiguous and probs.flags.owndata
    np.testing.assert_allclose(probs, reference_mlp(mlp_path, mlp_input), rtol=1e-4, atol=1e-6)
    assert abs(float(probs.sum()) - 1.0) < 1e-5


def test_run_matches_the_cli_saved_outputs(session, mlp_path, mlp_input, cli, tmp_path):
    np.save(tmp_path / "x.npy", mlp_input)
    subprocess.run([str(cli), "run", str(mlp_path), "--inputs", f"x:{tmp_path / 'x.npy'}",
                    "--save-outputs", str(tmp_path / "out")], check=True, capture_output=True)
    index = json.loads((tmp_path / "out" / "outputs.json").read_text())
    assert [entry["name"] for entry in index] == ["probs"]
    saved = np.load(tmp_path / "out" / index[0]["file"])
    np.testing.assert_allclose(session.run({"x": mlp_input})["probs"], saved, rtol=1e-6, atol=1e-7)


def test_each_run_returns_fresh_arrays(session, mlp_input):
    first = session.run({"x": mlp_input})["probs"]
    second = session.run({"x": np.zeros_like(mlp_input)})["probs"]
    assert not np.shares_memory(first, second)
    assert not np.array_equal(first, second)


def test_non_contiguous_feed_is_accepted(session, mlp_input):
    # Every other column of a [1, 1568] array: a strided view, copied once to be contiguous.
    wide = np.zeros((1, 1568), np.float32)
    wide[:, ::2] = mlp_input
    view = wide[:, ::2]
    assert not view.flags.c_contiguous
    np.testing.assert_array_equal(session.run({"x": view})["probs"],
                                  session.run({"x": mlp_input})["probs"])


def test_list_feed_is_converted_to_the_input_dtype(session, mlp_input):
    np.testing.assert_array_equal(session.run({"x": mlp_input.tolist()})["probs"],
                                  session.run({"x": mlp_input})["probs"])


def test_outputs_selects_by_name(session, mlp_input):
    assert list(session.run({"x": mlp_input}, outputs=["probs"])) == ["probs"]
    with pytest.raises(onepool.NotFoundError, match=r"output 'logits': not an output of the model \(outputs: probs\)"):
        session.run({"x": mlp_input}, outputs=["logits"])


def test_model_shared_by_two_sessions(mlp_path, mlp_input):
    model = onepool.Model(mlp_path, dims={"batch": 1})
    assert model.weights_bytes >= (784 * 512 + 512 + 512 * 256 + 256 + 256 * 10 + 10) * 4
    a, b = onepool.Session(model), onepool.Session(model, threads=1)
    assert a.model.weights_bytes == b.model.weights_bytes == model.weights_bytes
    other = np.ones_like(mlp_input)
    expected_a = reference_mlp(mlp_path, mlp_input)
    expected_b = reference_mlp(mlp_path, other)
    np.testing.assert_allclose(a.run({"x": mlp_input})["probs"], expected_a, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(b.run({"x": other})["probs"], expected_b, rtol=1e-4, atol=1e-6)
    # Load options belong to the Model.
    with pytest.raises(onepool.InvalidArgumentError, match="pass them to onepool.Model"):
        onepool.Session(model, dims={"batch": 2})


def test_sessions_run_concurrently_from_threads(mlp_path):
    # run() releases the GIL: 4 threads, each with its own Session over one Model, 20 runs each.
    model = onepool.Model(mlp_path, dims={"batch": 1})
    feeds = [np.full((1, 784), i / 10, np.float32) for i in range(4)]
    expected = [onepool.Session(model).run({"x": f})["probs"] for f in feeds]
    results = [None] * 4

    def work(i):
        s = onepool.Session(model, threads=1)
        results[i] = [s.run({"x": feeds[i]})["probs"] for _ in range(20)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        for r in results[i]:
            np.testing.assert_allclose(r, expected[i], rtol=1e-6, atol=1e-7)


def test_sessions_share_a_thread_pool(mlp_path):
    # Sessions on one CpuThreadPool, run at once from threads: the bits of a Session with threads
    # of its own; a thread count that disagrees with the pool's is refused.
    model = onepool.Model(mlp_path, dims={"batch": 1})
    pool = onepool.CpuThreadPool(2)
    assert pool.threads == 2 and repr(pool) == "onepool.CpuThreadPool(2)"
    feeds = [np.full((1, 784), i / 7, np.float32) for i in range(3)]
    expected = [onepool.Session(model, threads=2).run({"x": f})["probs"] for f in feeds]
    sessions = [onepool.Session(model, thread_pool=pool) for _ in range(3)]
    results = [None] * 3

    def work(i):
        results[i] = [sessions[i].run({"x": feeds[i]})["probs"] for _ in range(10)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(3):
        for r in results[i]:
            np.testing.assert_array_equal(r, expected[i])
    with pytest.raises(onepool.InvalidArgumentError, match="runs 2 threads"):
        onepool.Session(model, thread_pool=pool, threads=3)
    with pytest.raises(onepool.InvalidArgumentError, match="expected 1 to 4096"):
        onepool.CpuThreadPool(-1)


def test_cpu_isa_portable_agrees_and_unknown_is_refused(mlp_path, mlp_input):
    model = onepool.Model(mlp_path, dims={"batch": 1})
    auto = onepool.Session(model).run({"x": mlp_input})["probs"]
    portable = onepool.Session(model, cpu_isa="portable").run({"x": mlp_input})["probs"]
    np.testing.assert_allclose(portable, auto, rtol=1e-5, atol=1e-6)
    with pytest.raises(onepool.InvalidArgumentError, match="sse9"):
        onepool.Session(model, cpu_isa="sse9")


def test_plan_equals_the_cli_plan(mlp_path, cli, tmp_path):
    cli_plan = json.loads(subprocess.run(
        [str(cli), "plan", str(mlp_path), "--dim", "batch=1", "--format", "json"],
        check=True, capture_output=True, text=True).stdout)
    plan = onepool.Model(mlp_path, dims={"batch": 1}).plan()
    for key in ("pool_bytes", "lower_bound_bytes", "naive_bytes", "plain_pool_bytes",
                "plain_lower_bound_bytes", "alignment", "algorithm", "optimal"):
        assert getattr(plan, key) == cli_plan[key], key
    assert [(t.name, t.offset, t.bytes, t.first, t.last) for t in plan.tensors] == [
        (t["name"], t["offset"], t["bytes"], t["first"], t["last"]) for t in cli_plan["tensors"]]
    assert [(s.node, s.op) for s in plan.steps] == [(s["node"], s["op"]) for s in cli_plan["steps"]]
    assert plan.pool_bytes >= plan.lower_bound_bytes > 0
    plan.verify()
    ours = json.loads(plan.to_json())
    for key in ("planning_ms",):
        ours.pop(key), cli_plan.pop(key)
    assert cli_plan.pop("provenance")["input_shapes"] == "x:1x784"  # the CLI knows the model file
    assert ours == cli_plan
    assert onepool.Plan.from_json(plan.to_json()).pool_bytes == plan.pool_bytes


def test_session_plan_is_the_model_plan(session, mlp_path):
    a, b = session.plan(), onepool.Model(mlp_path, dims={"batch": 1}).plan()
    assert (a.pool_bytes, len(a.tensors)) == (b.pool_bytes, len(b.tensors))
    assert session.pool_bytes == a.pool_bytes


def test_plan_html_is_one_offline_page(session):
    html = session.plan().to_html(title="mlp")
    assert html.lstrip().lower().startswith("<!doctype html>")
    assert "<title>mlp" in html and "relu_1" in html
    assert "http://" not in html and "https://" not in html


def test_bad_feed_dtype_names_the_input(session):
    with pytest.raises(onepool.InvalidArgumentError) as error:
        session.run({"x": np.zeros((1, 784), np.float64)})
    assert str(error.value) == "input 'x': expected dtype float32, got float64"
    assert error.value.code == "invalid argument"
    assert isinstance(error.value, onepool.Error) and isinstance(error.value, ValueError)


def test_bad_feed_shape_names_the_input_and_axis(session):
    with pytest.raises(onepool.Error) as error:
        session.run({"x": np.zeros((1, 783), np.float32)})
    assert str(error.value) == ("input 'x': expected shape [1,784], got [1,783]; axis 1 differs "
                                "(expected 784, got 783)")
    with pytest.raises(onepool.Error, match=r"input 'x': expected shape \[1,784\] \(rank 2\), got \[784\] \(rank 1\)"):
        session.run({"x": np.zeros(784, np.float32)})


def test_bad_feed_name_and_missing_feed(session, mlp_input):
    with pytest.raises(onepool.NotFoundError, match=r"^input 'y': not an input of the model \(inputs: x\)$"):
        session.run({"x": mlp_input, "y": mlp_input})
    with pytest.raises(onepool.InvalidArgumentError, match=r"^missing input 'x' \(expected float32 \[1,784\]\)$"):
        session.run({})


def test_missing_file_names_the_path(tmp_path):
    path = tmp_path / "absent.onnx"
    with pytest.raises(onepool.NotFoundError, match=str(path)):
        onepool.Model(path)
    with pytest.raises(onepool.Error, match=str(path)):
        onepool.Session(str(path))


def test_load_errors_are_library_messages(mlp_path):
    with pytest.raises(onepool.Error, match="batch"):
        onepool.Session(mlp_path, dims={"batch": -3})
    with pytest.raises(onepool.Error, match="bogus"):
        onepool.Model(mlp_path, dims={"batch": 1}, optimize="bogus")
    with pytest.raises(onepool.Error, match="cuda:7|cuda"):
        onepool.Session(mlp_path, dims={"batch": 1}, device="cuda:7")


def elementwise_model(path, op, elem_type):
    """y = op(x) over a [2, 3] tensor of `elem_type`."""
    x = onnx.helper.make_tensor_value_info("x", elem_type, [2, 3])
    y = onnx.helper.make_tensor_value_info("y", elem_type, [2, 3])
    graph = onnx.helper.make_graph([onnx.helper.make_node(op, ["x"], ["y"], name="n")], "g", [x], [y])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


@pytest.mark.parametrize("dtype, op, elem_type", [
    (np.float16, "Neg", onnx.TensorProto.FLOAT16),
    (np.float32, "Neg", onnx.TensorProto.FLOAT),
    (np.float64, "Neg", onnx.TensorProto.DOUBLE),
    (np.int8, "Neg", onnx.TensorProto.INT8),
    (np.int16, "Neg", onnx.TensorProto.INT16),
    (np.int32, "Neg", onnx.TensorProto.INT32),
    (np.int64, "Neg", onnx.TensorProto.INT64),
    (np.uint8, "Abs", onnx.TensorProto.UINT8),
    (np.uint16, "Abs", onnx.TensorProto.UINT16),
    (np.uint32, "Abs", onnx.TensorProto.UINT32),
    (np.uint64, "Abs", onnx.TensorProto.UINT64),
    (np.bool_, "Not", onnx.TensorProto.BOOL),
])
def test_dtypes_map_to_numpy(tmp_path, dtype, op, elem_type):
    s = onepool.Session(elementwise_model(tmp_path / "m.onnx", op, elem_type))
    assert s.inputs[0].dtype == np.dtype(dtype) and s.outputs[0].dtype == np.dtype(dtype)
    x = np.array([[0, 1, 2], [3, 4, 5]]).astype(dtype)
    expected = {"Neg": np.negative, "Abs": np.abs, "Not": np.logical_not}[op](x)
    y = s.run({"x": x})["y"]
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y, expected)


def test_outputs_come_back_in_model_or_requested_order(mlp_path):
    # cnn_fp16: input float32[1,3,64,64] -> mask float32[1,1,64,64], probs float32[1,4].
    s = onepool.Session(mlp_path.parent / "cnn_fp16.onnx")
    x = np.random.default_rng(3).standard_normal((1, 3, 64, 64)).astype(np.float32)
    everything = s.run({"input": x})
    assert [(k, v.shape) for k, v in everything.items()] == [("mask", (1, 1, 64, 64)), ("probs", (1, 4))]
    chosen = s.run({"input": x}, outputs=["probs", "mask"])
    assert list(chosen) == ["probs", "mask"]
    for name in chosen:
        np.testing.assert_array_equal(chosen[name], everything[name])


NODE_TESTS = "/usr/share/libonnx-testdata/data/node"


def load_pb(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(open(path, "rb").read())
    return onnx.numpy_helper.to_array(tensor)


@pytest.mark.skipif(not os.path.isdir(NODE_TESTS), reason="libonnx-testdata is not installed")
def test_shape_inputs_bound_by_values():
    # test_slice: y = x[0:3, 0:10] of x float32[20,10,5]; starts/ends/axes/steps are shape inputs.
    case = os.path.join(NODE_TESTS, "test_slice")
    data = os.path.join(case, "test_data_set_0")
    values = {name: load_pb(os.path.join(data, f"input_{i}.pb"))
              for i, name in enumerate(["x", "starts", "ends", "axes", "steps"])}
    s = onepool.Session(os.path.join(case, "model.onnx"),
                        values={k: v for k, v in values.items() if k != "x"})
    assert [i.name for i in s.inputs] == ["x"]
    y = s.run({"x": values["x"]})["y"]
    np.testing.assert_array_equal(y, load_pb(os.path.join(data, "output_0.pb")))
    with pytest.raises(onepool.InvalidArgumentError, match="'starts': a shape input, bound at load"):
        s.run({"x": values["x"], "starts": values["starts"]})


def test_shapes_bind_the_batch(mlp_path):
    # shapes={"x": [2, 784]} binds batch=2: probs is [2, 10], each row the row's own result.
    s = onepool.Session(mlp_path, shapes={"x": [2, 784]})
    assert s.inputs[0].shape == (2, 784) and s.outputs[0].shape == (2, 10)
    x = np.random.default_rng(11).standard_normal((2, 784)).astype(np.float32)
    np.testing.assert_allclose(s.run({"x": x})["probs"], reference_mlp(mlp_path, x), rtol=1e-4, atol=1e-6)


def test_outputs_of_data_dependent_size_come_back_at_their_actual_shape(data_dependent_path):
    # data_dependent_heads (models/data_dependent.py): NonZero, Unique, NonMaxSuppression and
    # Gathers of their outputs, planned at bounds; each array has the run's actual shape.
    session = onepool.Session(data_dependent_path)
    info = {o.name: o for o in session.outputs}
    assert info["nonzero"].bound and tuple(info["nonzero"].shape) == (2, 64)
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(4, 16)
    boxes = np.random.default_rng(1).random((1, 40, 4), dtype=np.float32)
    scores = np.random.default_rng(2).random((1, 3, 40), dtype=np.float32)
    out = session.run({"x": x, "boxes": boxes, "scores": scores})
    assert out["nonzero"].shape == (2, int((x > 0).sum()))
    np.testing.assert_array_equal(out["nonzero"], np.stack(np.nonzero(np.maximum(x, 0))))
    above = x.reshape(-1)[x.reshape(-1) > 0.5]
    np.testing.assert_array_equal(out["values_above_half"], above)
    values = np.unique(np.round(x * 2))
    np.testing.assert_array_equal(out["unique_values"], values)
    selected = out["selected_indices"]
    assert selected.ndim == 2 and selected.shape[1] == 3 and 0 < selected.shape[0] <= 60
    np.testing.assert_array_equal(out["kept_boxes"], boxes[0][selected[:, 2]])


def test_loop_scan_output_bounded_by_bounds(data_dependent_path):
    # loop_bounded (models/control_flow.py): Loop(M = input m) stopping after iteration 4; its
    # scan output h_all is planned at bounds={"h_all": 6} and comes back with the rows run.
    path = os.path.join(os.path.dirname(data_dependent_path), "loop_bounded.onnx")
    with pytest.raises(onepool.InvalidArgumentError, match="--bound"):
        onepool.Session(path)
    session = onepool.Session(path, bounds={"h_all": 6})
    info = {o.name: o for o in session.outputs}
    assert "at most 6 iterations" in info["h_all"].bound
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(6, 4)
    h0 = np.zeros((1, 4), dtype=np.float32)
    for m, rows in ((3, 3), (6, 5), (0, 0)):
        out = session.run({"x": x, "m": np.array(m, dtype=np.int64), "h0": h0})
        assert out["h_all"].shape == (rows, 1, 4)
        if rows:
            np.testing.assert_array_equal(out["h_all"][-1], out["h_final"])


def test_external_inputs_and_outputs_are_the_numpy_arrays(session, mlp_path, mlp_input):
    # external="all": x and probs live in the caller's arrays, not the pool (no copies), and the
    # outputs are the same bits as the pooled Session's.
    ext = onepool.Session(mlp_path, dims={"batch": 1}, external="all")
    external = [t for t in ext.plan().tensors if t.external]
    assert sorted(t.name for t in external) == ["probs", "x"]
    assert all(t.bytes == 0 and t.offset == 0 for t in external)
    assert ext.pool_bytes < session.pool_bytes
    np.testing.assert_array_equal(ext.run({"x": mlp_input})["probs"],
                                  session.run({"x": mlp_input})["probs"])
    only_x = onepool.Model(mlp_path, dims={"batch": 1}).plan(external=["x"])
    assert [t.name for t in only_x.tensors if t.external] == ["x"]
    with pytest.raises(onepool.InvalidArgumentError,
                       match=r"external tensor 'nope' is not a graph input or output.*x, probs"):
        onepool.Session(mlp_path, dims={"batch": 1}, external=["nope"])
    with pytest.raises(onepool.InvalidArgumentError, match="external: expected a str or a list"):
        onepool.Session(mlp_path, dims={"batch": 1}, external=3)


def test_external_outputs_of_data_dependent_size(data_dependent_path):
    pooled = onepool.Session(data_dependent_path)
    ext = onepool.Session(data_dependent_path, external="outputs")
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(4, 16)
    boxes = np.random.default_rng(1).random((1, 40, 4), dtype=np.float32)
    scores = np.random.default_rng(2).random((1, 3, 40), dtype=np.float32)
    feeds = {"x": x, "boxes": boxes, "scores": scores}
    expected, got = pooled.run(feeds), ext.run(feeds)
    assert list(got) == list(expected)
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name])


@pytest.mark.parametrize("external", [None, "all"])
def test_bound_arrays_run_without_new_arrays(session, mlp_path, mlp_input, external):
    # IoBinding: bind once, run many times; the outputs land in the bound array (in place when
    # external, copied when pooled), the same bits as run().
    s = onepool.Session(mlp_path, dims={"batch": 1}, external=external)
    assert s.is_external("x") == (external == "all")
    assert s.is_external("probs") == (external == "all")
    x = mlp_input.copy()
    probs = np.zeros((1, 10), dtype=np.float32)
    with pytest.raises(onepool.FailedPreconditionError, match="not bound"):
        s.run_bound()
    s.bind_input("x", x)
    s.bind_output("probs", probs)
    assert s.run_bound() is None
    np.testing.assert_array_equal(probs, session.run({"x": mlp_input})["probs"])
    x[:] = -mlp_input  # the binding reads the array itself: new values, no rebinding
    s.run_bound()
    np.testing.assert_array_equal(probs, session.run({"x": -mlp_input})["probs"])


def test_bind_errors_name_the_tensor(session):
    with pytest.raises(onepool.NotFoundError, match=r"input 'nope': not an input .*inputs: x"):
        session.bind_input("nope", np.zeros((1, 784), np.float32))
    with pytest.raises(onepool.InvalidArgumentError, match="input 'x': expected dtype float32"):
        session.bind_input("x", np.zeros((1, 784), np.float64))
    with pytest.raises(onepool.InvalidArgumentError, match="C-contiguous"):
        session.bind_input("x", np.zeros((1, 1568), np.float32)[:, ::2])
    with pytest.raises(onepool.InvalidArgumentError, match="input 'x'"):
        session.bind_input("x", np.zeros((2, 784), np.float32))
    read_only = np.zeros((1, 10), np.float32)
    read_only.setflags(write=False)
    with pytest.raises(onepool.InvalidArgumentError, match="output 'probs'.*writable"):
        session.bind_output("probs", read_only)
    with pytest.raises(onepool.NotFoundError, match="output 'x_nope': not an output"):
        session.is_external("x_nope")
