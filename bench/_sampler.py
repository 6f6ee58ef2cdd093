"""A sampling profiler for benches: the text of a ``sitecustomize.py`` that, put on a daemon's
PYTHONPATH with ``HTCD_BENCH_PROFILE_DIR`` set, samples the daemon's main thread every 5 ms and
writes ``<daemon>.<pid>.json`` there at exit: busy and idle samples (idle: waiting in the event
loop's select/poll or the stats' own select), the innermost frames and the frames on the stack
("self" and "cum", by ``file:function``).  Nothing of it loads in a process not named."""

from __future__ import annotations

from pathlib import Path

REPO = str(Path(__file__).resolve().parent.parent) + "/"

_TEMPLATE = r'''
import os, sys
_dir = os.environ.get("HTCD_BENCH_PROFILE_DIR")
try:
    _cmd = open("/proc/self/cmdline", "rb").read().split(b"\0")
except OSError:
    _cmd = []
if _dir and len(_cmd) >= 4 and _cmd[1:3] == [b"-m", b"htcd"] and _cmd[3].decode() in DAEMONS:
    import atexit, collections, json, threading
    _name = _cmd[3].decode()
    _main = threading.main_thread().ident
    _self, _cum, _n = collections.Counter(), collections.Counter(), [0, 0]
    _stop = threading.Event()
    _flag = os.path.join(_dir, "on")

    def _sample():
        while not _stop.wait(0.005):
            if ONLY_WHEN_ON and not os.path.exists(_flag):
                continue
            frame = sys._current_frames().get(_main)
            if frame is None:
                continue
            code = frame.f_code
            if code.co_name in ("select", "poll") and code.co_filename.endswith("selectors.py") or \
                    code.co_name == "select" and "stats" in code.co_filename:
                _n[1] += 1
                continue
            _n[0] += 1
            seen, first = set(), True
            while frame is not None:
                c = frame.f_code
                key = f"{c.co_filename.split('/site-packages/')[-1].split(REPO)[-1]}:{c.co_name}"
                if first:
                    _self[key] += 1
                    first = False
                if key not in seen:
                    seen.add(key)
                    _cum[key] += 1
                frame = frame.f_back

    threading.Thread(target=_sample, name="bench-sampler", daemon=True).start()

    def _dump():
        _stop.set()
        with open(os.path.join(_dir, f"{_name}.{os.getpid()}.json"), "w") as f:
            json.dump({"daemon": _name, "busy": _n[0], "idle": _n[1], "self": dict(_self.most_common(40)),
                       "cum": dict(_cum.most_common(60))}, f)

    atexit.register(_dump)
'''


def sitecustomize(daemons: tuple[str, ...], only_when_on: bool = False) -> str:
    """The sampler for the daemons named (``htcd <daemon>`` processes); with ``only_when_on`` it
    samples only while the file ``on`` exists in the profile directory (a bench's timed phase)."""
    return (f"DAEMONS = {daemons!r}\nONLY_WHEN_ON = {only_when_on!r}\nREPO = {REPO!r}\n" + _TEMPLATE)
