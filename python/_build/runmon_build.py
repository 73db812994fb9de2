"""The build backend of the runmon Python package (PEP 517, PEP 660), standard library only.

runmon is pure Python with no dependency, so building it needs nothing either: with this
backend `pip install ./python` works offline, in any venv, with or without build isolation
(a setuptools backend needs setuptools, and before setuptools 70.1 the wheel package, from an
index or from the environment). It writes a py3-none-any wheel of the runmon/ package, an
editable wheel (a .pth file naming this folder) and an sdist, from pyproject.toml's [project]
table; the version is the checkout's VERSION file (python/VERSION links to it), and it goes
into runmon/_version.py in the wheel as make install writes it.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
PACKAGE = "runmon"


def _project():
    """[project] of pyproject.toml: tomllib where Python has it (3.11+), else the few forms
    this file uses (key = "string", key = ["strings"], key = { text = "string" })."""
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
        raw = f.read()
    try:
        import tomllib

        return tomllib.loads(raw.decode("utf-8"))["project"]
    except ImportError:
        pass
    out, section = {}, None
    for line in raw.decode("utf-8").splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
            continue
        m = re.match(r'^([A-Za-z0-9_-]+)\s*=\s*(.*)$', line)
        if section != "[project]" or not m:
            continue
        key, val = m.group(1), m.group(2).strip()
        if val.startswith('"'):
            out[key] = val[1:val.rindex('"')]
        elif val.startswith("["):
            out[key] = re.findall(r'"([^"]*)"', val)
        elif val.startswith("{"):
            out[key] = dict(re.findall(r'([A-Za-z0-9_-]+)\s*=\s*"([^"]*)"', val))
    return out


def _version():
    with open(os.path.join(HERE, "VERSION"), encoding="ascii") as f:
        return f.read().strip()


def _metadata(project, version):
    lines = ["Metadata-Version: 2.1", "Name: " + project["name"], "Version: " + version]
    if project.get("description"):
        lines.append("Summary: " + project["description"])
    lic = project.get("license")
    if isinstance(lic, dict) and lic.get("text"):
        lines.append("License: " + lic["text"])
    if project.get("requires-python"):
        lines.append("Requires-Python: " + project["requires-python"])
    for dep in project.get("dependencies", []):
        lines.append("Requires-Dist: " + dep)
    body = ""
    if project.get("readme"):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(HERE, project["readme"]), encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _stamp():
    """A fixed date for every archive member (SOURCE_DATE_EPOCH where set), so that a build
    is the same bytes each time."""
    t = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01, zip's earliest
    return max(t, 315532800)


def _sources():
    """The package's modules, by their path inside the wheel."""
    pkg = os.path.join(HERE, PACKAGE)
    return sorted(
        (PACKAGE + "/" + n, os.path.join(pkg, n))
        for n in os.listdir(pkg)
        if n.endswith(".py") and n != "_version.py"
    )


def _write_wheel(directory, files):
    """A wheel of files (path in the wheel -> bytes) plus its dist-info; returns its name."""
    project, version = _project(), _version()
    name = project["name"].replace("-", "_")
    info = "%s-%s.dist-info/" % (name, version)
    files = dict(files)
    files[info + "METADATA"] = _metadata(project, version).encode("utf-8")
    files[info + "WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: runmon_build\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n"
    ).encode("ascii")
    record = []
    for path in sorted(files):
        digest = base64.urlsafe_b64encode(hashlib.sha256(files[path]).digest()).rstrip(b"=")
        record.append("%s,sha256=%s,%d" % (path, digest.decode("ascii"), len(files[path])))
    record.append(info + "RECORD,,")
    files[info + "RECORD"] = ("\n".join(record) + "\n").encode("utf-8")
    wheel = "%s-%s-py3-none-any.whl" % (name, version)
    date = time.gmtime(_stamp())[:6]
    with zipfile.ZipFile(os.path.join(directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(files, key=lambda p: (p.startswith(info), p)):  # RECORD last
            entry = zipfile.ZipInfo(path, date)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, files[path])
    return wheel


def _version_module(version):
    return ('# Written by the build from VERSION.\n__version__ = "%s"\n' % version).encode("ascii")


# ---- PEP 517 / PEP 660 hooks ---------------------------------------------------------------


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = {}
    for path, src in _sources():
        with open(src, "rb") as f:
            files[path] = f.read()
    files[PACKAGE + "/_version.py"] = _version_module(_version())
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """An editable install: a .pth file puts this folder on sys.path, so the checkout's
    runmon/ is what imports (its version from the checkout's VERSION, as __init__ finds it)."""
    return _write_wheel(wheel_directory, {"_runmon_editable.pth": (HERE + "\n").encode("utf-8")})


def build_sdist(sdist_directory, config_settings=None):
    project, version = _project(), _version()
    base = "%s-%s" % (project["name"].replace("-", "_"), version)
    members = [("pyproject.toml", None), ("VERSION", None), ("_build/runmon_build.py", None)]
    if project.get("readme"):
        members.append((project["readme"], None))
    members += [(p, None) for p, _ in _sources()]
    members.append(("PKG-INFO", _metadata(project, version).encode("utf-8")))
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for path, data in members:
            if data is None:
                with open(os.path.join(HERE, path), "rb") as f:  # VERSION: the file it links to
                    data = f.read()
            entry = tarfile.TarInfo(base + "/" + path)
            entry.size, entry.mtime, entry.mode = len(data), _stamp(), 0o644
            t.addfile(entry, io.BytesIO(data))
    return name
