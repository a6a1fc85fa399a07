"""The build backend of the Python package (PEP 517, in-tree): `pip install .` with nothing
from a package index.

The package is pure Python (python/stepscope, without its *_test.py), so a wheel is a zip
of those files and three metadata files; writing it needs only the standard library.
pyproject.toml names this module with `requires = []`, so pip's build isolation has
nothing to fetch and `pip install .` works offline (PIP_NO_INDEX=1; issue 37): only the
dependencies (pandas) must already be installed or findable (--find-links). Metadata is
read from pyproject.toml's [project] table. Hooks: build_wheel, build_sdist,
build_editable (a .pth file naming python/), and the get_requires_* / prepare_metadata_*
hooks pip asks first.
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = "stepscope"
SOURCE = os.path.join(ROOT, "python", PACKAGE)
# Fixed timestamps: the same sources give the same wheel.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def _project():
    """[project] of pyproject.toml: name, version, description, requires-python,
    dependencies, license text, readme."""
    path = os.path.join(ROOT, "pyproject.toml")
    try:
        import tomllib  # Python 3.11+

        with open(path, "rb") as f:
            p = tomllib.load(f)["project"]
        lic = p.get("license", {})
        return {"name": p["name"], "version": p["version"], "description": p.get("description", ""),
                "requires-python": p.get("requires-python", ""), "dependencies": p.get("dependencies", []),
                "license": lic.get("text", "") if isinstance(lic, dict) else str(lic),
                "readme": p.get("readme", "")}
    except ImportError:
        pass
    # Older Pythons: the few plain keys this file uses, read from the [project] table.
    with open(path) as f:
        text = f.read()
    section = re.search(r"^\[project\]\n(.*?)(?=^\[|\Z)", text, flags=re.S | re.M).group(1)

    def key(k):
        m = re.search(r"^" + re.escape(k) + r'\s*=\s*"([^"]*)"', section, flags=re.M)
        return m.group(1) if m else ""

    deps = re.search(r"^dependencies\s*=\s*\[(.*?)\]", section, flags=re.S | re.M)
    lic = re.search(r'^license\s*=\s*\{\s*text\s*=\s*"([^"]*)"', section, flags=re.M)
    return {"name": key("name"), "version": key("version"), "description": key("description"),
            "requires-python": key("requires-python"),
            "dependencies": re.findall(r'"([^"]+)"', deps.group(1)) if deps else [],
            "license": lic.group(1) if lic else "", "readme": key("readme")}


def _dist_name(p):
    return re.sub(r"[-_.]+", "_", p["name"]).lower() + "-" + p["version"]


def _metadata(p):
    lines = ["Metadata-Version: 2.1", "Name: " + p["name"], "Version: " + p["version"]]
    if p["description"]:
        lines.append("Summary: " + p["description"])
    if p["license"]:
        lines.append("License: " + p["license"])
    if p["requires-python"]:
        lines.append("Requires-Python: " + p["requires-python"])
    lines += ["Requires-Dist: " + d for d in p["dependencies"]]
    body = ""
    if p["readme"] and os.path.exists(os.path.join(ROOT, p["readme"])):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, p["readme"]), encoding="utf-8") as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def _package_files():
    """(path in the wheel, file on disk) of the package, *_test.py and caches left out."""
    out = []
    for dirpath, dirnames, filenames in os.walk(SOURCE):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".pyc", "_test.py")):
                continue
            full = os.path.join(dirpath, name)
            out.append((os.path.relpath(full, os.path.dirname(SOURCE)).replace(os.sep, "/"), full))
    return out


def _dist_info_files(p, tag="py3-none-any"):
    return {
        "METADATA": _metadata(p).encode("utf-8"),
        "WHEEL": ("Wheel-Version: 1.0\nGenerator: stepscope_build\nRoot-Is-Purelib: true\nTag: " + tag +
                  "\n").encode(),
        "top_level.txt": (PACKAGE + "\n").encode(),
    }


def _write_wheel(directory, entries):
    """entries: (path in the wheel, bytes); the dist-info's RECORD is added last."""
    p = _project()
    dist = _dist_name(p)
    info = dist + ".dist-info"
    entries = list(entries) + [(info + "/" + k, v) for k, v in _dist_info_files(p).items()]
    wheel_name = dist + "-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(os.path.join(directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in entries:
            zi = zipfile.ZipInfo(arcname, ZIP_TIME)
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{arcname},sha256={digest},{len(data)}")
        record.append(info + "/RECORD,,")
        zi = zipfile.ZipInfo(info + "/RECORD", ZIP_TIME)
        zi.external_attr = 0o644 << 16
        z.writestr(zi, "\n".join(record) + "\n")
    return wheel_name


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# --- PEP 517 / 660 hooks ------------------------------------------------------------------
def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    p = _project()
    info = _dist_name(p) + ".dist-info"
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    for name, data in _dist_info_files(p).items():
        with open(os.path.join(metadata_directory, info, name), "wb") as f:
            f.write(data)
    return info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(arc, _read(full)) for arc, full in _package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth file puts python/ of this tree on sys.path: edits take effect without reinstalling.
    return _write_wheel(wheel_directory, [("__editable__.stepscope.pth",
                                           (os.path.join(ROOT, "python") + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = _dist_name(p)
    files = ["pyproject.toml", "LICENSE", p["readme"], os.path.relpath(__file__, ROOT)]
    files += [os.path.relpath(full, ROOT) for _, full in _package_files()]
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for rel in [f for f in files if f]:
            data = _read(os.path.join(ROOT, rel))
            ti = tarfile.TarInfo(base + "/" + rel.replace(os.sep, "/"))
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 315532800
            t.addfile(ti, io.BytesIO(data))
        pkg_info = _metadata(p).encode("utf-8")
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size, ti.mode, ti.mtime = len(pkg_info), 0o644, 315532800
        t.addfile(ti, io.BytesIO(pkg_info))
    return name
