"""runmon.metric and runmon.objective: the lines (the same bytes as the C writer's), every
refused input (ValueError, nothing written), and calls without a run log."""
import os
import re
import subprocess
import warnings

import runmon
from runmon import _writer
from helpers import RUNMON, Clean, needs_runmon, raw_lines, read_lines


class FloatLike:
    """A numpy scalar or a 0-d tensor: a number through __float__."""

    def __init__(self, v):
        self.v = v

    def __float__(self):
        return self.v


class MetricTest(Clean):
    def setUp(self):
        super().setUp()
        self.log = self.path("r.jsonl")
        runmon.open(self.log)

    def test_line_shape(self):
        runmon.metric(step=120, loss=0.41, acc=1, tput=FloatLike(2.5e-3))
        runmon.metric(loss=1e-300)
        raw = raw_lines(self.log)
        self.assertRegex(raw[0].decode(), r'^\{"ts":"[^"]+","type":"metric","step":120,'
                         r'"values":\{"loss":0\.41,"acc":1\.0,"tput":0\.0025\},"pid":\d+,'
                         r'"t":\d+\.\d{3}\}$')
        self.assertRegex(raw[1].decode(), r'"type":"metric","values":\{"loss":1e-300\},"pid"')
        lines = read_lines(self.log)
        self.assertEqual([l.get("step") for l in lines], [120, None])

    def test_refused_values_write_nothing(self):
        bad = [{"loss": float("nan")}, {"loss": float("inf")}, {"loss": -float("inf")},
               {"loss": "0.5"}, {"loss": None}, {"loss": True}, {"loss": [1]},
               {"loss": 10 ** 400}, {"loss": FloatLike(float("nan"))}, {}, {"a/b": 1},
               {"a:b": 1}, {"a\x1bb": 1}, {"a\x85": 1}, {" a": 1}, {"x" * 128: 1},
               {"k%d" % i: 1 for i in range(1000)}, {"\ud800": 1}]
        for values in bad:
            with self.assertRaises(ValueError, msg=repr(values)[:80]):
                runmon.metric(**values)
        for step in (-1, 1.5, "3", True):
            with self.assertRaises(ValueError):
                runmon.metric(step=step, loss=1)
        self.assertEqual(read_lines(self.log), [])
        runmon.metric(**{"k%d" % i: i for i in range(256)})  # the limit itself
        self.assertEqual(len(read_lines(self.log)[0]["values"]), 256)

    def test_message_quotes_the_value_short_and_escaped(self):
        with self.assertRaises(ValueError) as cm:
            runmon.metric(loss="\x1b]0;x\x07")
        self.assertNotIn("\x1b", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            runmon.metric(loss=10 ** 400)
        self.assertLess(len(str(cm.exception)), 120)

    def test_objective_line(self):
        runmon.objective("acc:max", "loss:min:best")
        lines = read_lines(self.log)
        self.assertEqual(lines[0]["objectives"], [
            {"metric": "acc", "goal": "max", "pick": "last"},
            {"metric": "loss", "goal": "min", "pick": "best"}])
        for spec in ("acc", "acc:up", "acc:max:worst", ":max", "a/b:max", 5):
            with self.assertRaises(ValueError):
                runmon.objective(spec)
        with self.assertRaises(ValueError):
            runmon.objective()
        self.assertEqual(len(read_lines(self.log)), 1)


class NoLogTest(Clean):
    def test_without_a_run_log_nothing_is_written_once_warned(self):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            runmon.metric(step=1, loss=0.5)
            runmon.metric(step=2, loss=0.4)
            runmon.objective("loss:min")
        self.assertEqual(_writer.stats()["dropped_no_log"], 3)
        self.assertEqual(len([x for x in w if "no run log" in str(x.message)]), 1)
        with self.assertRaises(ValueError):  # bad input is refused with or without a log
            runmon.metric(loss=float("nan"))


@needs_runmon
class SameAsCWriterTest(Clean):
    def test_same_bytes_but_time_and_pid(self):
        env = dict(os.environ, RUNMON_RUNLOG=self.path("c.jsonl"))
        for args in (["--step", "120", "loss=0.41", "acc=1", "tiny=1e-300", "big=1e20"],
                     ["loss=-0.0025"]):
            subprocess.run([RUNMON, "log", "metric"] + args, env=env, check=True)
        subprocess.run([RUNMON, "log", "objective", "acc:max", "loss:min:best"], env=env,
                       check=True)
        runmon.open(self.path("py.jsonl"))
        runmon.metric(step=120, loss=0.41, acc=1, tiny=1e-300, big=1e20)
        runmon.metric(loss=-0.0025)
        runmon.objective("acc:max", "loss:min:best")
        strip = re.compile(rb'^\{"ts":"[^"]+"|,"pid":\d+,"t":[0-9.]+\}$')
        c = [strip.sub(b"", l) for l in raw_lines(self.path("c.jsonl"))]
        py = [strip.sub(b"", l) for l in raw_lines(self.path("py.jsonl"))]
        self.assertEqual(c, py)
        self.assertEqual(len(c), 3)
