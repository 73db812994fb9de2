"""Finding and running the runmon binary."""
import json
import os
import shutil
import subprocess


class RunmonError(RuntimeError):
    """The runmon binary could not be found, or it refused its input."""


def runmon_binary():
    """$RUNMON_BIN, else `runmon` on PATH."""
    path = os.environ.get("RUNMON_BIN") or shutil.which("runmon")
    if not path:
        raise RunmonError("runmon binary not found: set RUNMON_BIN or put runmon on PATH")
    return path


def summary_json(args):
    """Runs `runmon summary ARGS --format json` and returns the parsed object."""
    cmd = [runmon_binary(), "summary"] + list(args) + ["--format", "json"]
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip()
        raise RunmonError("runmon summary failed (exit %d): %s" % (proc.returncode, message))
    try:
        return json.loads(proc.stdout)
    except ValueError as e:
        raise RunmonError("runmon summary printed no JSON: %s" % e) from None
