# The onnx-doctor Python probe. Standard library only; run once per interpreter
# as `python -B -c <this> <user cwd> <stack JSON>`, where the JSON is the list
# of packages to import, each {"package", "module", "facts"} as the matrix's
# `stack:` section gives them.
#
# It writes JSON lines, each prefixed with MARK, to a private copy of stdout:
# one "interpreter" event, then "start"/"import" events per package, then
# "done". Events are flushed one by one, so when an import hangs or crashes the
# interpreter, the doctor still knows everything up to that import and which
# import it was. Anything the imported packages print goes to stderr (fd 1 is
# pointed there), so it cannot corrupt the protocol.
#
# The syntax stays valid for Python 2 so that an old interpreter still answers
# with a JSON error instead of a SyntaxError.
from __future__ import print_function

import json
import os
import sys

MARK = "@@onnx-doctor@@ "


def _open_private_stdout():
    fd = os.dup(1)
    os.dup2(2, 1)
    return os.fdopen(fd, "w")


OUT = _open_private_stdout()


def emit(event, **fields):
    fields["event"] = event
    OUT.write(MARK + json.dumps(fields, sort_keys=True, default=str) + "\n")
    OUT.flush()


if sys.version_info < (3, 6):
    emit("error", kind="unsupported_python",
         message="Python %d.%d is too old for the probe (3.6 or newer is needed)" % sys.version_info[:2])
    sys.exit(0)

import io  # noqa: E402
import platform  # noqa: E402
import sysconfig  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402

MAX_OUTPUT = 8000


def env_kind():
    prefix = sys.prefix
    if os.path.isdir(os.path.join(prefix, "conda-meta")):
        return "conda"
    if getattr(sys, "base_prefix", prefix) != prefix:
        try:
            with open(os.path.join(prefix, "pyvenv.cfg")) as f:
                if any(line.split("=")[0].strip() == "uv" for line in f):
                    return "uv"
        except OSError:
            pass
        return "venv"
    return "system"


def markers():
    impl = sys.implementation
    v = impl.version
    impl_version = "%d.%d.%d" % (v.major, v.minor, v.micro)
    if v.releaselevel != "final":
        impl_version += v.releaselevel[0] + str(v.serial)
    return {
        "implementation_name": impl.name,
        "implementation_version": impl_version,
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_python_implementation": platform.python_implementation(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "python_version": "%d.%d" % sys.version_info[:2],
        "sys_platform": sys.platform,
    }


def interpreter():
    emit("interpreter",
         version=platform.python_version(),
         implementation=sys.implementation.name,
         platform=sysconfig.get_platform(),
         prefix=sys.prefix,
         base_prefix=getattr(sys, "base_prefix", sys.prefix),
         kind=env_kind(),
         sys_path=[p for p in sys.path if p],
         markers=markers(),
         executable=sys.executable)


def shadow_in(directory, module):
    top = module.split(".")[0]
    for candidate in (top + ".py", top):
        path = os.path.join(directory, candidate)
        if os.path.isfile(path) or os.path.isdir(path):
            return path
    return None


def text(value):
    return None if value is None else str(value)


def resolve(path):
    # "torch.backends.cudnn.version" from the top-level module down; a step
    # that is not an attribute is tried as a submodule
    # ("google.protobuf.internal.api_implementation").
    parts = path.split(".")
    obj = importlib.import_module(parts[0])
    name = parts[0]
    for part in parts[1:]:
        name += "." + part
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(name)
    return obj


def cudnn_text(v):
    # 8902 is 8.9.2 (cuDNN 8 multiplies the major by 1000), 90100 is 9.1.0
    # (cuDNN 9 by 10000).
    if not v:
        return None
    major, rest = (v // 10000, v % 10000) if v >= 10000 else (v // 1000, v % 1000)
    return "%d.%d.%d" % (major, rest // 100, rest % 100)


def evaluate(expression):
    path, _, fmt = expression.partition("|")
    path, fmt = path.strip(), fmt.strip()
    call = path.endswith("()")
    if call:
        path = path[:-2]
    if fmt == "exists":
        try:
            resolve(path)
            return True
        except Exception:
            return False
    value = resolve(path)
    if call:
        value = value()
    if fmt == "split":
        return value.split() if value else []
    if fmt == "cudnn":
        return cudnn_text(value)
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [text(v) for v in value]
    return text(value)


def read_facts(m, spec):
    f = {"version": text(getattr(m, "__version__", None))}
    for name, expression in sorted(spec.get("facts", {}).items()):
        try:
            f[name] = evaluate(expression)
        except Exception as e:
            f[name + "_error"] = "%s: %s" % (type(e).__name__, e)
    return f


def user_traceback(e):
    # The frames of the package being imported, without the probe's own and
    # importlib's: what the user would see from `import x` in a script.
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if f.filename != "<string>" and "importlib" not in f.filename]
    text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) if frames else ""
    return text + "".join(traceback.format_exception_only(type(e), e))


def probe(spec, user_cwd):
    key = spec["package"]
    module = spec["module"]
    record = {"package": key, "module": module}
    if user_cwd:
        shadow = shadow_in(user_cwd, module)
        if shadow:
            record["shadowed_by"] = shadow
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        # A parent package is missing: `google` for google.protobuf.
        found = False
    except Exception:
        found = True  # let the import say what is wrong
    if not found:
        record["status"] = {"state": "not_installed"}
        emit("import", **record)
        return
    emit("start", package=key)
    captured = io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = captured
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            m = importlib.import_module(module)
            status = {"state": "ok"}
        except BaseException as e:  # SystemExit and KeyboardInterrupt too
            m = None
            status = {"state": "failed", "error": type(e).__name__, "message": str(e)}
            captured.write(user_traceback(e))
    record["seconds"] = round(time.perf_counter() - started, 4)
    sys.stdout, sys.stderr = saved
    if m is not None:
        record["file"] = getattr(m, "__file__", None)
        try:
            record["facts"] = read_facts(m, spec)
        except Exception as e:
            record["facts"] = {"facts_error": str(e)}
    out = captured.getvalue()
    for w in caught:
        out += "%s: %s\n" % (w.category.__name__, w.message)
    if out.strip():
        record["output"] = out[-MAX_OUTPUT:]
    record["status"] = status
    emit("import", **record)


def main(argv):
    user_cwd = argv[1] if len(argv) > 1 else ""
    stack = json.loads(argv[2]) if len(argv) > 2 else []
    interpreter()
    for spec in stack:
        probe(spec, user_cwd)
    emit("done")


main(sys.argv)
# Threads started by imported packages must not keep the probe alive.
OUT.flush()
os._exit(0)
