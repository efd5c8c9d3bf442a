# The onnx-doctor Python probe. Standard library only; run once per interpreter
# as `python -B -c <this> <user cwd> <stack JSON> [--no-trials]`, where the JSON
# is the list of packages to import, each {"package", "module", "facts",
# "trial"} as the matrix's `stack:` section gives them.
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
    if fmt == "dotted":
        return ".".join(str(v) for v in value)
    if fmt == "major":
        first = value[0] if isinstance(value, (list, tuple)) else str(value).split(".")[0]
        return str(first)
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
        return None
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
    return record.get("facts") if m is not None else None


# -- Trials: tiny experiments in the user's interpreter, after the imports.
#
# Each asks an imported runtime a question the matrix can only predict: will
# this model load, does this provider really run, does a kernel launch. A
# trial writes nothing (models are built in memory) and its result is a fact
# of the package it tried ("trial_onnx_default": "loads").


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(tag, value):
    if isinstance(value, int):
        return _varint(tag << 3) + _varint(value)
    if isinstance(value, str):
        value = value.encode()
    return _varint(tag << 3 | 2) + _varint(len(value)) + value


def tiny_model(ir_version, opset):
    """The smallest model: y = Identity(x), float[1], at this IR and opset."""
    dim = _field(1, _field(1, 1))                               # TensorShapeProto.dim { dim_value: 1 }
    tensor_type = _field(1, _field(1, 1) + _field(2, dim))      # TypeProto.tensor_type { float, shape }
    value = lambda name: _field(1, name) + _field(2, tensor_type)  # noqa: E731  ValueInfoProto
    node = _field(1, "x") + _field(2, "y") + _field(4, "Identity")
    graph = _field(1, node) + _field(2, "g") + _field(11, value("x")) + _field(12, value("y"))
    opset_import = _field(1, "") + _field(2, opset)
    return _field(1, ir_version) + _field(7, graph) + _field(8, opset_import)


class CapturedStderr(object):
    """What native code writes to fd 2 while the block runs (onnxruntime's
    and TensorRT's loggers bypass sys.stderr)."""

    def __enter__(self):
        import tempfile
        self.file = tempfile.TemporaryFile()
        sys.stderr.flush()
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.file.seek(0)
        self.text = self.file.read().decode("utf-8", "replace")[-MAX_OUTPUT:]
        self.file.close()
        return False


ANSI = None


def plain(line):
    """A native log line without colour codes and without the logger's
    prefix: `[ONNXRuntimeError] : 1 : FAIL : Failed to load library ...`
    keeps what comes after the last `FAIL : `."""
    global ANSI
    if ANSI is None:
        import re
        ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
    line = ANSI.sub("", line).strip()
    # "[ONNXRuntimeError] : 10 : INVALID_GRAPH : Load model from ..."
    parts = line.split(" : ", 3)
    if line.startswith("[ONNXRuntimeError]") and len(parts) == 4:
        line = parts[3]
    elif "FAIL : " in line:
        line = line.rsplit("FAIL : ", 1)[1]
    # "Load model from /path/model.onnx failed:Fatal error: ..."
    if line.startswith("Load model from ") and " failed:" in line:
        line = line.split(" failed:", 1)[1].strip()
    # "/onnxruntime_src/.../model.cc:256 onnxruntime::Model::Model(...) Unsupported ..."
    if ".cc:" in line.split(" ", 1)[0] and ") " in line:
        line = line.rsplit(") ", 1)[1]
    return line[:500]


def first_line(e):
    text = str(e).strip()
    for line in text.splitlines():
        if line.strip():
            return plain(line)
    return type(e).__name__


def trial_load(facts, ort, name, ir, opset):
    try:
        ort.InferenceSession(tiny_model(int(ir), int(opset)), providers=["CPUExecutionProvider"])
        facts["trial_" + name] = "loads"
    except Exception as e:
        facts["trial_" + name] = "refused: " + first_line(e)


def trial_onnxruntime(known, facts):
    import onnxruntime as ort
    onnx = known.get("onnx") or {}
    if onnx.get("ir_version") and onnx.get("max_opset"):
        trial_load(facts, ort, "onnx_default", onnx["ir_version"], onnx["max_opset"])
    torch = known.get("torch") or {}
    if torch.get("export_ir") and torch.get("export_opset"):
        trial_load(facts, ort, "torch_export", torch["export_ir"], torch["export_opset"])
    # Each accelerator provider alone: one that silently falls back to the
    # CPU is a fact, not a guess. IR 4 / opset 9 loads in every release.
    working, failed, why = [], [], []
    for provider in ort.get_available_providers():
        if provider == "CPUExecutionProvider":
            continue
        err = ""
        with CapturedStderr() as log:
            try:
                session = ort.InferenceSession(tiny_model(4, 9), providers=[provider])
                ok = provider in session.get_providers()
            except Exception as e:
                ok, err = False, first_line(e)
        if ok:
            working.append(provider)
        else:
            failed.append(provider)
            said = err or next((plain(l) for l in log.text.splitlines() if l.strip()), "fell back to the CPU")
            why.append("%s: %s" % (provider, said))
    facts["trial_providers_working"] = working
    facts["trial_providers_failed"] = failed
    if why:
        facts["trial_providers_why"] = why
    if MODEL:
        trial_model(ort, facts, working)


# `onnx-doctor model FILE`: the user's model, tried in the installed
# onnxruntime; set by main() from `--model PATH`.
MODEL = None
# Larger models are not loaded: a trial must stay cheap and bounded.
MODEL_CAP_BYTES = 1 << 30


def trial_model(ort, facts, accelerators):
    """Loads the user's model on the CPU, then on each accelerator provider
    that ran the tiny model: the runtime's own answer beside the matrix's
    prediction. Nothing is written (no optimized model is saved)."""
    try:
        size = os.path.getsize(MODEL)
    except OSError as e:
        facts["trial_model"] = "skipped: " + first_line(e)
        return
    if size > MODEL_CAP_BYTES:
        facts["trial_model"] = "skipped: the model is %d MiB, over the trial's %d MiB cap" % (
            size >> 20, MODEL_CAP_BYTES >> 20)
        return
    options = ort.SessionOptions()
    options.log_severity_level = 3
    # Azure's provider calls a remote endpoint: not a device to load onto.
    devices = [p for p in accelerators if p != "AzureExecutionProvider"]
    for provider in ["CPUExecutionProvider"] + devices:
        with CapturedStderr():
            try:
                ort.InferenceSession(MODEL, sess_options=options, providers=[provider])
                said = "loads"
            except Exception as e:
                said = "refused: " + first_line(e)
        if provider == "CPUExecutionProvider":
            facts["trial_model"] = said
        else:
            facts.setdefault("trial_model_providers", []).append("%s: %s" % (provider, said))


def trial_torch(known, facts):
    import torch
    if not torch.cuda.is_available():
        facts["trial_cuda"] = "skipped: CUDA is not available"
        return
    failures = []
    count = torch.cuda.device_count()
    for i in range(count):
        try:
            x = torch.ones(4, device="cuda:%d" % i)
            (x + 1).sum().item()
        except Exception as e:
            failures.append("cuda:%d %s" % (i, first_line(e)))
    facts["trial_cuda"] = "failed: " + "; ".join(failures) if failures else "ran on %d devices" % count


def trial_tensorrt(known, facts):
    import tensorrt as trt
    with CapturedStderr() as log:
        try:
            logger = trt.Logger(trt.Logger.WARNING)
            builder = trt.Builder(logger)
            flags = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH) if hasattr(
                trt.NetworkDefinitionCreationFlag, "EXPLICIT_BATCH") else 0
            network = builder.create_network(flags)
            trt.OnnxParser(network, logger)
            result = "ok"
        except Exception as e:
            result = "failed: " + first_line(e)
    if result != "ok" and log.text.strip():
        result += " (" + log.text.strip().splitlines()[-1][:300] + ")"
    facts["trial_builder"] = result


TRIALS = {"onnxruntime": trial_onnxruntime, "torch": trial_torch, "tensorrt": trial_tensorrt}


def run_trials(stack, known):
    for spec in stack:
        key = spec["package"]
        name = spec.get("trial")
        if not name or name not in TRIALS or key not in known:
            continue
        emit("trial_start", package=key)
        facts = {}
        started = time.perf_counter()
        try:
            TRIALS[name](known, facts)
        except BaseException as e:
            facts["trial_error"] = "%s: %s" % (type(e).__name__, first_line(e))
        facts["trial_seconds"] = round(time.perf_counter() - started, 4)
        emit("trial", package=key, facts=facts)


def main(argv):
    user_cwd = argv[1] if len(argv) > 1 else ""
    stack = json.loads(argv[2]) if len(argv) > 2 else []
    options = argv[3:]
    trials = "--no-trials" not in options
    if "--model" in options[:-1]:
        global MODEL
        MODEL = options[options.index("--model") + 1]
    interpreter()
    known = {}
    for spec in stack:
        facts = probe(spec, user_cwd)
        if facts is not None:
            known[spec["package"]] = facts
    if trials:
        run_trials(stack, known)
    emit("done")


main(sys.argv)
# Threads started by imported packages must not keep the probe alive.
OUT.flush()
os._exit(0)
