"""Lines from Python must match lines from the C writer (`runmon log`, `runmon phase`) in
everything but ts, t and pid, key order included."""
import json
import math
import random
import struct
import os
import re
import subprocess
from collections import OrderedDict

import runmon
from runmon import _format
from helpers import RUNMON, Clean, needs_runmon, raw_lines

TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$")
T_RAW = re.compile(rb'"t":(\d+\.\d{3})[,}]')


def ordered(line):
    return json.loads(line, object_pairs_hook=OrderedDict)


def without_time(obj):
    """Fields but ts, t and pid; a phase_exit's seconds (a measured time) kept by name only."""
    return [(k, None if k == "seconds" and obj["type"] == "phase_exit" else v)
            for k, v in obj.items() if k not in ("ts", "t", "pid")]


class FormatTest(Clean):
    def test_stamp_ts_and_t_are_one_instant(self):
        ts, t = _format.stamp(1795256102113999999)
        self.assertEqual(ts, "2026-11-21T10:15:02.113+00:00")
        self.assertEqual(t, "1795256102.113")

    def test_real_numbers_keep_a_point_and_round_trip(self):
        for value, text in ((2.0, "2.0"), (0.1, "0.1"), (1e15, "1e+15"), (-0.0, "-0.0"),
                            (1e-05, "1e-05"), (1234567890123456.0, "1234567890123456.0"),
                            (1.2345678901234567e16, "12345678901234568.0")):
            self.assertEqual(_format.format_real(value), text)
            self.assertEqual(float(_format.format_real(value)), value)

    def test_seconds_round_half_away_from_zero(self):
        self.assertEqual(_format.round_ms(0.0125), 0.013)  # Python's round() gives 0.012
        self.assertEqual(_format.round_ms(2), 2.0)

    def test_every_line_has_ts_type_first_and_pid_t_before_extras(self):
        runmon.open(self.path("r.jsonl"))
        runmon.log_phase("load", 1.2345, lr=0.1)
        runmon.event("ck", step=1)
        with runmon.phase("p", k="v"):
            pass
        for raw in raw_lines(self.path("r.jsonl")):
            obj = ordered(raw)
            keys = list(obj)
            self.assertEqual(keys[:2], ["ts", "type"])
            self.assertTrue(TS.match(obj["ts"]), obj["ts"])
            t = T_RAW.search(raw).group(1).decode()
            self.assertEqual(t[-4:], obj["ts"][19:23])  # same milliseconds as ts
            self.assertEqual(obj["pid"], os.getpid())

    def test_phase_lines_of_names_needing_escapes(self):
        # A phase without extra fields is written from fragments made once per path; its
        # lines must read as those of a phase with extras (the field-by-field writer).
        names = ['q"uote', "back\\slash", "caf\u00e9", "line\u2028sep", "surrogate\udcff"]
        runmon.open(self.path("r.jsonl"))
        for name in names:
            with runmon.phase(name):
                with runmon.phase(name, k=1):
                    pass
        lines = [ordered(raw) for raw in raw_lines(self.path("r.jsonl"))]
        self.assertEqual(len(lines), 4 * len(names))
        for i, name in enumerate(names):
            outer_enter, inner_enter, inner_exit, outer_exit = lines[4 * i:4 * i + 4]
            want = name.replace("\udcff", "?")  # not UTF-8: replaced, by both writers
            self.assertEqual((outer_enter["name"], outer_enter["path"]), (want, want))
            self.assertEqual(inner_enter["path"], want + "/" + want)
            general = ordered(_format.enter_line(0, 1, name, name, 0, None))
            self.assertEqual(without_time(outer_enter), without_time(general))
            general = ordered(_format.exit_line(0, 1, name, name, 0, 0.0, "ok", None))
            self.assertEqual(without_time(outer_exit), without_time(general))
            self.assertEqual(list(outer_exit), list(inner_exit)[:-1])  # the same keys, k last

    def test_a_phase_line_follows_the_rank_as_it_changes(self):
        runmon.open(self.path("r.jsonl"))
        for rank in (None, "2", "5", None):
            if rank is None:
                os.environ.pop("RANK", None)
            else:
                os.environ["RANK"] = rank
            with runmon.phase("p"):
                pass
        ranks = [ordered(raw).get("rank") for raw in raw_lines(self.path("r.jsonl"))]
        self.assertEqual(ranks, [None, None, 2, 2, 5, 5, None, None])

    def test_rank_of_a_job_after_pid_and_t(self):
        os.environ["SLURM_PROCID"] = "3"
        runmon.open(self.path("r.jsonl"))
        runmon.log_phase("load", 1.0, lr=0.1)
        runmon.event("ck", step=1)
        with runmon.phase("p"):
            pass
        os.environ["RANK"] = "12"  # torchrun's global rank comes first
        runmon.log_phase("step", 0.5)
        runmon.log_phase("mine", 0.5, rank=7)  # the caller's own rank is kept, not doubled
        os.environ["RANK"] = "x"
        os.environ["SLURM_PROCID"] = "-1"
        runmon.log_phase("none", 0.5)
        lines = [ordered(raw) for raw in raw_lines(self.path("r.jsonl"))]
        self.assertEqual([line.get("rank") for line in lines], [3, 3, 3, 3, 12, 7, None])
        self.assertEqual(list(lines[0])[4:7], ["pid", "t", "rank"])
        self.assertEqual(list(lines[0])[-1], "lr")
        self.assertEqual(list(lines[5]).count("rank"), 1)

    def test_bad_names_and_reserved_keys_are_refused(self):
        with self.assertRaises(ValueError):
            runmon.phase("a/b")
        with self.assertRaises(ValueError):
            runmon.phase("")
        with self.assertRaises(ValueError):
            runmon.phase("x", depth=1)
        with self.assertRaises(ValueError):
            runmon.log_phase("x", -1)
        with self.assertRaises(ValueError):
            runmon.log_phase("x", float("nan"))
        with self.assertRaises(ValueError):
            runmon.event("bad\x07type")


@needs_runmon
class SameAsCWriterTest(Clean):
    def cli(self, *args):
        env = dict(os.environ, RUNMON_RUNLOG=self.path("c.jsonl"))
        subprocess.run([RUNMON] + list(args), env=env, check=True)

    def assertSameLines(self, drop=()):
        c_lines = [ordered(r) for r in raw_lines(self.path("c.jsonl"))]
        py_lines = [ordered(r) for r in raw_lines(self.path("py.jsonl"))]
        self.assertEqual(len(c_lines), len(py_lines))
        for c, py in zip(c_lines, py_lines):
            c_fields = [kv for kv in without_time(c) if kv[0] not in drop]
            self.assertEqual(c_fields, without_time(py))

    def test_phase_line(self):
        self.cli("log", "phase", "load", "1.2345", "lr=0.1", "n=7", "ok=true", "s=x y",
                 "j:=[1,{\"a\":null}]")
        runmon.open(self.path("py.jsonl"))
        runmon.log_phase("load", 1.2345, lr=0.1, n=7, ok=True, s="x y", j=[1, {"a": None}])
        self.assertSameLines()

    def test_event_lines_with_and_without_data(self):
        self.cli("log", "event", "checkpoint", "step=10", "loss=0.197")
        self.cli("log", "event", "bare")
        runmon.open(self.path("py.jsonl"))
        runmon.event("checkpoint", step=10, loss=0.197)
        runmon.event("bare")
        self.assertSameLines()

    def test_enter_and_exit_lines(self):
        self.cli("phase", "train", "lr=0.1", "--", "true")
        runmon.open(self.path("py.jsonl"))
        with runmon.phase("train", lr=0.1):
            pass
        self.assertSameLines(drop=("exit_code",))

    def test_numbers_are_printed_as_the_c_writer_prints_them(self):
        values = [0.1, 2.0, 1e15, 1234567890123456.0, 1.2345678901234567e16, 1e-05, 123.456,
                  1e300, -0.0, 5e-324, 1e-310, 2.2250738585072014e-308, 1 / 3,
                  9007199254740993.0, 0.30000000000000004]
        self.cli("log", "event", "n", *["v%d=%r" % (i, v) for i, v in enumerate(values)])
        runmon.open(self.path("py.jsonl"))
        runmon.event("n", **{"v%d" % i: v for i, v in enumerate(values)})
        c, py = raw_lines(self.path("c.jsonl"))[0], raw_lines(self.path("py.jsonl"))[0]
        self.assertEqual(c[c.index(b'"data"'):], py[py.index(b'"data"'):])

    def test_strings_are_escaped_as_the_c_writer_escapes_them(self):
        text = 'q"b\\s\n\r\t\b\f\x01\x1f\x7f \u00e9 \u20ac \U0001f600 \x85'
        self.cli("log", "event", "s", "v=" + text)
        runmon.open(self.path("py.jsonl"))
        runmon.event("s", v=text)
        c, py = raw_lines(self.path("c.jsonl"))[0], raw_lines(self.path("py.jsonl"))[0]
        self.assertEqual(c[c.index(b'"data"'):], py[py.index(b'"data"'):])

    def test_random_doubles_are_printed_as_the_c_writer_prints_them(self):
        rng = random.Random(7)
        values = []
        while len(values) < 400:
            v = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
            if math.isfinite(v):
                values.append(v)
        values += [rng.uniform(0, 1e6) for _ in range(200)]
        self.cli("log", "event", "n", *["v%d=%r" % (i, v) for i, v in enumerate(values)])
        runmon.open(self.path("py.jsonl"))
        runmon.event("n", **{"v%d" % i: v for i, v in enumerate(values)})
        c, py = raw_lines(self.path("c.jsonl"))[0], raw_lines(self.path("py.jsonl"))[0]
        self.assertEqual(c[c.index(b'"data"'):], py[py.index(b'"data"'):])
