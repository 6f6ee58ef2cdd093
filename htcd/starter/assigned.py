"""The job's view of the custom resources its slot holds (GPUs...): ``_CONDOR_Assigned<Name>``
and the variables ``ENVIRONMENT_FOR_Assigned<Name>`` names, as HTCondor's starter sets them.

``ENVIRONMENT_FOR_AssignedGPUs = GPU_DEVICE_ORDINAL=/(CUDA|OCL)// CUDA_VISIBLE_DEVICES`` sets
each variable to the slot's ids, comma separated, each id rewritten by the variable's Perl-style
``/pattern/replacement/`` if it has one (``CUDA_VISIBLE_DEVICES`` alone gets ``/CUDA//``).  A slot
with none of the resource sets the variables to ``ENVIRONMENT_VALUE_FOR_UnAssigned<Name>``, if
that is set, so a job cannot use devices it was not given (CUDA takes "no variable" as "all").
A job given GPUs also gets ``NVIDIA_VISIBLE_DEVICES``, the same as ``CUDA_VISIBLE_DEVICES``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from htcd.errors import UserError

#: HTCondor's automatic rewrite for a bare CUDA_VISIBLE_DEVICES.
_CUDA_DEFAULT = ("CUDA", "")


@dataclass(frozen=True)
class EnvSpec:
    var: str
    pattern: str | None = None
    replacement: str = ""
    every: bool = False  # the ``g`` flag: every match, not the first


def parse_env_specs(text: str, knob: str) -> list[EnvSpec]:
    """``VAR`` or ``VAR=/pattern/replacement/[g]`` items, separated by spaces or commas."""
    specs = []
    for item in re.split(r"[\s,]+", text.strip()):
        if not item:
            continue
        var, sep, rx = item.partition("=")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var):
            raise UserError(f"{knob}: {var!r} is not an environment variable name")
        if not sep:
            specs.append(EnvSpec(var, *_CUDA_DEFAULT) if var == "CUDA_VISIBLE_DEVICES" else EnvSpec(var))
            continue
        parts = re.fullmatch(r"/((?:[^/\\]|\\.)*)/((?:[^/\\]|\\.)*)/([a-z]*)", rx)
        if parts is None:
            raise UserError(f"{knob}: {item!r}: the rewrite must be /pattern/replacement/")
        try:
            re.compile(parts.group(1))
        except re.error as exc:
            raise UserError(f"{knob}: {item!r}: bad pattern ({exc})") from None
        specs.append(EnvSpec(var, parts.group(1), parts.group(2).replace("\\/", "/"), "g" in parts.group(3)))
    return specs


def _rewrite(spec: EnvSpec, ident: str) -> str:
    if spec.pattern is None:
        return ident
    return re.sub(spec.pattern, spec.replacement, ident, count=0 if spec.every else 1)


def environment(assigned: dict[str, list[str]], knob: object) -> dict[str, str]:
    """The variables for ``assigned`` (resource name -> the slot's ids; empty: none given).
    ``knob(name)`` reads the config."""
    get = knob if callable(knob) else (lambda _name: None)
    env: dict[str, str] = {}
    for name, ids in assigned.items():
        specs_knob = f"ENVIRONMENT_FOR_Assigned{name}"
        specs = parse_env_specs(get(specs_knob) or "", specs_knob)
        if ids:
            env[f"_CONDOR_Assigned{name}"] = ",".join(ids)
            for spec in specs:
                env[spec.var] = ",".join(_rewrite(spec, i) for i in ids)
            if name.lower() == "gpus" and "CUDA_VISIBLE_DEVICES" in env:  # the user manual: both name the GPUs
                env.setdefault("NVIDIA_VISIBLE_DEVICES", env["CUDA_VISIBLE_DEVICES"])
            continue
        unassigned = get(f"ENVIRONMENT_VALUE_FOR_UnAssigned{name}")
        if unassigned is not None:
            for spec in specs:
                env[spec.var] = unassigned
    return env
