"""End-to-end tests of the gcomp CLI contract (DESIGN.md): subcommands, formats, exit codes and
messages. Usage: cli_test.py GCOMP MODELS_DIR (MODELS_DIR from tests/models/make_models.py)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

GCOMP = None
MODELS = None


def gcomp(*args):
    p = subprocess.run([GCOMP, *args], capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


class CliTest(unittest.TestCase):
    model = property(lambda self: os.path.join(MODELS, "tv_small_vit_op17_dynamic", "model.onnx"))

    def test_usage(self):
        rc, out, _ = gcomp()
        self.assertEqual(rc, 2)
        self.assertIn("usage: gcomp", out)
        rc, _, err = gcomp("frobnicate")
        self.assertEqual(rc, 2)
        self.assertIn("unknown command 'frobnicate'", err)
        rc, _, err = gcomp("inspect", self.model, "--bogus")
        self.assertEqual(rc, 2)
        self.assertIn("unknown option '--bogus'", err)

    def test_inspect_text_is_stable_and_symbolic(self):
        rc, out, err = gcomp("inspect", self.model, "--level", "O0")
        self.assertEqual(rc, 0, err)
        self.assertIn("input %input: f32[batch,3,32,32]", out[:2000])
        rc2, out2, _ = gcomp("inspect", self.model, "--level", "O0", "--format", "text")
        self.assertEqual(out, out2)
        # The batch symbol flows through the multi-head reshapes.
        self.assertRegex(out, r"f32\[\d*\*?batch(\*\d+)?,")

    def test_inspect_summary(self):
        rc, out, err = gcomp("inspect", self.model, "--summary")
        self.assertEqual(rc, 0, err)
        self.assertIn("symbols: batch", out)
        self.assertRegex(out, r"MatMul\s+\d+")

    def test_inspect_json(self):
        rc, out, err = gcomp("inspect", self.model, "--format", "json")
        self.assertEqual(rc, 0, err)
        doc = json.loads(out)
        self.assertEqual(doc["schema_version"], 1)
        self.assertEqual(doc["inputs"][0]["shape"], ["batch", 3, 32, 32])
        names = {n["name"] for n in doc["nodes"]}
        for e in doc["edges"]:
            self.assertIn(e["to"], names)
        self.assertTrue(all(n["origin"] for n in doc["nodes"]))

    def test_inspect_dot_to_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "g.dot")
            rc, _, err = gcomp("inspect", self.model, "--format", "dot", "-o", path)
            self.assertEqual(rc, 0, err)
            text = open(path).read()
            self.assertTrue(text.startswith("digraph"))
            self.assertIn("->", text)

    def test_inspect_html_to_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "page.html")
            rc, _, err = gcomp("inspect", self.model, "--level", "O2", "--format", "html", "-o", path)
            self.assertEqual(rc, 0, err)
            with open(path, encoding="utf-8") as f:
                page = f.read()
            self.assertTrue(page.startswith("<!DOCTYPE html>"))
            self.assertIn("<svg", page)
            self.assertIn("Attention", page)
            for banned in ("http://", "https://", "<script src", "<link"):
                self.assertNotIn(banned, page)

    def test_levels_and_targets(self):
        # O3 lowers for every target in inspect; run/check execute on the reference interpreter or the cpu runtime
        for target in ("ref", "cpu", "cuda", "cuda:sm_90", "cuda:sm_80"):
            rc, out, err = gcomp("inspect", self.model, "--level", "O3", "--target", target)
            self.assertEqual(rc, 0, err)
            self.assertIn("lowering = ", out)
        rc, _, err = gcomp("inspect", self.model, "--level", "O3", "--target", "tpu")
        self.assertEqual(rc, 2)
        self.assertIn("unknown target 'tpu', expected one of: ref, cpu, cuda (= cuda:sm_90), cuda:sm_80", err)
        rc, _, err = gcomp("inspect", self.model, "--level", "O9")
        self.assertEqual(rc, 2)
        self.assertIn("unknown level 'O9'", err)
        case = os.path.dirname(self.model)
        # cuda: a build without the CUDA toolkit has no cuda backend; with it, the plan compiles and
        # runs where a device is present, and is refused with the reason where none is.
        cuda_refusals = ("target 'cuda' has no backend in this build yet", "no CUDA device is available")
        rc, _, err = gcomp("check", case, "--target", "cuda")
        if rc != 0:
            self.assertEqual(rc, 2)
            self.assertTrue(any(m in err for m in cuda_refusals), err)
        rc, out, err = gcomp("check", case, "--target", "cpu")
        self.assertEqual(rc, 0, err)
        self.assertIn("PASS", out)
        rc, _, err = gcomp("compile", self.model, "-o", os.path.join(tempfile.gettempdir(), "x.gplan"), "--target", "cuda")
        if rc != 0:
            self.assertEqual(rc, 2)
            self.assertIn(cuda_refusals[0], err)
        # run --reference executes the graph lowered for a target on the reference interpreter; without it
        # --target cpu runs the compiled plan
        with tempfile.TemporaryDirectory() as d:
            feed = "input=" + os.path.join(case, "test_data_set_1", "input_0.pb")
            rc, _, err = gcomp("run", self.model, "--target", "cpu", "--level", "O3", "--input", feed, "--output-dir", d)
            self.assertEqual(rc, 0, err)
            rc, _, err = gcomp("run", self.model, "--target", "cpu", "--level", "O3", "--reference", "--input", feed,
                               "--output-dir", d)
            self.assertEqual(rc, 0, err)
            rc, _, err = gcomp("run", self.model, "--target", "cuda", "--input", feed, "--output-dir", d)
            self.assertEqual(rc, 2)

    def test_run_writes_outputs_matching_reference(self):
        case = os.path.dirname(self.model)
        with tempfile.TemporaryDirectory() as d:
            rc, out, err = gcomp("run", self.model, "--target", "ref", "--input",
                                 "input=" + os.path.join(case, "test_data_set_1", "input_0.pb"), "--output-dir", d)
            self.assertEqual(rc, 0, err)
            got = onnx.TensorProto()
            got.ParseFromString(open(os.path.join(d, "output_0.pb"), "rb").read())
            want = onnx.TensorProto()
            want.ParseFromString(open(os.path.join(case, "test_data_set_1", "output_0.pb"), "rb").read())
            g, w = numpy_helper.to_array(got), numpy_helper.to_array(want)
            self.assertEqual(g.shape, w.shape)
            self.assertEqual(g.shape[0], 3)
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5 * np.abs(w).max())

    def test_run_rejects_wrong_input_shape(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.pb")
            open(bad, "wb").write(numpy_helper.from_array(np.zeros((1, 3, 31, 32), np.float32), "input").SerializeToString())
            rc, _, err = gcomp("run", self.model, "--input", "input=" + bad, "--output-dir", d)
            self.assertEqual(rc, 2)
            self.assertIn("input 'input' has shape [1,3,31,32], expected [batch,3,32,32]", err)

    def test_check_reports_and_detects_mismatch(self):
        case = os.path.dirname(self.model)
        rc, out, err = gcomp("check", case, "--target", "ref")
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"max_abs \S+  max_rel \S+  cosine 1\.0+  top1 1/1  PASS")
        with tempfile.TemporaryDirectory() as d:
            os.symlink(os.path.join(case, "model.onnx"), os.path.join(d, "model.onnx"))
            s = os.path.join(d, "test_data_set_0")
            os.mkdir(s)
            src = os.path.join(case, "test_data_set_0")
            os.symlink(os.path.join(src, "input_0.pb"), os.path.join(s, "input_0.pb"))
            want = onnx.TensorProto()
            want.ParseFromString(open(os.path.join(src, "output_0.pb"), "rb").read())
            w = numpy_helper.to_array(want).copy()
            w[0, 0] += 1.0
            open(os.path.join(s, "output_0.pb"), "wb").write(numpy_helper.from_array(w, want.name).SerializeToString())
            rc, out, _ = gcomp("check", d)
            self.assertEqual(rc, 1)
            self.assertIn("FAIL", out)

    def test_invalid_model_exit_code_and_message(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.onnx")
            node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv_bad")
            graph = helper.make_graph(
                [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                [numpy_helper.from_array(np.zeros((4, 3, 3), np.float32), "w")])
            onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
            rc, _, err = gcomp("inspect", path)
            self.assertEqual(rc, 2)
            self.assertIn(path, err)
            self.assertIn("node 'conv_bad' (Conv)", err)
            self.assertIn("input 'w' has rank 3, expected 4", err)
            open(path, "wb").write(b"not a model at all")
            rc, _, err = gcomp("inspect", path)
            self.assertEqual(rc, 2)
            self.assertIn("not a valid ONNX model", err)
            rc, _, err = gcomp("inspect", os.path.join(d, "missing.onnx"))
            self.assertEqual(rc, 2)
            self.assertIn("cannot open file", err)


if __name__ == "__main__":
    GCOMP, MODELS = sys.argv[1], sys.argv[2]
    unittest.main(argv=[sys.argv[0], "-v"])
