"""``htcd gpu_discovery``: HTCondor's condor_gpu_discovery, the GPU inventory command the startd
runs for ``use FEATURE : GPUs`` (``MACHINE_RESOURCE_INVENTORY_GPUs``).

It prints ``DetectedGPUs`` (``0``, or the devices' ids as ``"GPU-xxxxxxxx, ..."``) and, with
``-properties``, each device's properties, in ClassAd syntax (``-config``: configuration syntax).
NVIDIA devices are read from ``nvidia-smi``; a machine without it (or without GPUs) has none,
which is not an error.  ``-simulate:D,N[,D2,N2...]`` reports N made-up devices of the types of
HTCondor's table instead, so GPU scheduling can be tested on machines that have no GPU.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

from htcd.errors import UserError

#: condor_gpu_discovery's simulated devices (its man page, table 2.1): name, capability, memory (MB).
SIMULATED = (("GeForce GT 330", "1.2", 1024), ("GeForce GTX 480", "2.0", 1536),
             ("Tesla V100-PCIE-16GB", "7.0", 24220), ("TITAN RTX", "7.5", 24220),
             ("A100-SXM4-40GB", "8.0", 40536), ("NVIDIA A100-SXM4-40GB MIG 3g.20gb", "8.0", 20096))
#: condor_gpu_discovery options htcd's does not implement, and why.
REFUSED = {
    "-dynamic": "htcd's gpu_discovery reports no changing device state (temperatures, fans, ECC errors)",
    "-hip": "htcd's gpu_discovery finds NVIDIA devices only (through nvidia-smi)",
    "-opencl": "htcd's gpu_discovery finds NVIDIA devices only (through nvidia-smi)",
    "-repeat": "htcd's gpu_discovery does not list a device more than once",
    "-divide": "htcd's gpu_discovery does not list a device more than once",
    "-packed": "htcd's gpu_discovery does not list a device more than once",
    "-device": "htcd's gpu_discovery reports every device it finds",
    "-mixed": "htcd's gpu_discovery does not number the properties of mixed devices",
    "-prefix": "htcd's gpu_discovery names device properties after the device ids only",
    "-nvcuda": "htcd's gpu_discovery reads nvidia-smi, not the CUDA libraries",
    "-cudart": "htcd's gpu_discovery reads nvidia-smi, not the CUDA libraries",
}
NVIDIA_SMI_TIMEOUT = 30.0


@dataclass
class Gpu:
    index: int
    uuid: str  # "GPU-" and the device's UUID
    name: str
    capability: str
    memory_mb: int
    driver: str = ""

    def ident(self, how: str) -> str:
        if how == "index":
            return f"CUDA{self.index}"
        if how == "uuid":
            return self.uuid
        return self.uuid[:12]  # "GPU-" and the first 8 hex digits: HTCondor's default


def simulated(spec: str) -> list[Gpu]:
    """``D,N[,D2,N2...]``: N devices of type D of HTCondor's table (N defaults to 1)."""
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    if not parts or not all(p.isdigit() for p in parts):
        raise UserError(f"-simulate:{spec}: expected -simulate:D[,N[,D2,N2,...]] with whole numbers")
    gpus: list[Gpu] = []
    for k in range(0, len(parts), 2):
        kind = int(parts[k])
        count = int(parts[k + 1]) if k + 1 < len(parts) else 1
        if kind >= len(SIMULATED):
            raise UserError(f"-simulate:{spec}: there is no simulated device type {kind} "
                            f"(0 to {len(SIMULATED) - 1})")
        name, cap, mem = SIMULATED[kind]
        for _ in range(count):
            i = len(gpus)
            # the ids HTCondor's simulation gives: GPU-a0223334, GPU-b1223334, ...
            uuid = f"GPU-{chr(ord('a') + i % 26)}{i}223334-0000-0000-0000-000000000000"
            gpus.append(Gpu(i, uuid, name, cap, mem, "simulated"))
    return gpus


def nvidia_smi() -> list[Gpu]:
    """The NVIDIA devices nvidia-smi lists; none if it is missing or finds none."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        done = subprocess.run([smi, "--query-gpu=index,uuid,name,compute_cap,memory.total,driver_version",
                               "--format=csv,noheader,nounits"], capture_output=True, text=True,
                              timeout=NVIDIA_SMI_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"gpu_discovery: nvidia-smi failed: {exc}", file=sys.stderr)
        return []
    if done.returncode != 0:  # e.g. no driver loaded: no usable GPU
        print(f"gpu_discovery: nvidia-smi exited with status {done.returncode}: {done.stderr.strip()}",
              file=sys.stderr)
        return []
    gpus = []
    for line in done.stdout.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 6 or not cells[0].isdigit():
            continue
        mem = int(float(cells[4])) if cells[4].replace(".", "", 1).isdigit() else 0
        gpus.append(Gpu(int(cells[0]), cells[1], cells[2], cells[3], mem, cells[5]))
    return gpus


def _quote(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def properties(gpu: Gpu) -> dict[str, object]:
    props: dict[str, object] = {"DeviceName": gpu.name, "GlobalMemoryMb": gpu.memory_mb, "ECCEnabled": False}
    if re.fullmatch(r"\d+(\.\d+)?", gpu.capability):  # nvidia-smi says "[N/A]" for some devices
        props["Capability"] = float(gpu.capability)
    if gpu.driver and gpu.driver != "simulated":
        props["DriverVersion"] = gpu.driver
    return props


def render(gpus: list[Gpu], args: argparse.Namespace) -> list[str]:
    how = "index" if args.by_index else "uuid" if args.uuid else "short"
    ids = [g.ident(how) for g in gpus]
    tag = args.tag or "GPUs"
    lines = []
    if not args.cron:
        value = ", ".join(ids) if ids else 0
        lines.append(f"Detected{tag}={_quote(value)}")
        if args.config:
            lines.append(f"NUM_DETECTED_{tag}={len(ids)}")
    if args.properties and gpus:
        props = [properties(g) for g in gpus]
        common = {k: v for k, v in props[0].items() if all(p.get(k) == v for p in props)}
        attr_ids = [i.replace("-", "_") for i in ids]  # an id is not an attribute name
        if args.not_nested:
            lines += [f"CUDA{k}={_quote(v)}" for k, v in sorted(common.items())]
            for aid, p in zip(attr_ids, props, strict=True):
                lines += [f"{aid}{k}={_quote(v)}" for k, v in sorted(p.items()) if k not in common]
        else:
            lines.append("Common=[ " + " ".join(f"{k}={_quote(v)};" for k, v in sorted(common.items())) + " ]")
            for ident, aid, p in zip(ids, attr_ids, props, strict=True):
                own = " ".join(f"{k}={_quote(v)};" for k, v in sorted(p.items()) if k not in common)
                lines.append(f"{aid}=[ id={_quote(ident)}; {own} ]".replace(";  ]", "; ]"))
    if args.config:  # configuration syntax: the same definitions, one per line
        return [line.replace("=", " = ", 1) for line in lines]
    return lines


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    # condor_gpu_discovery writes -simulate:D,N; argparse wants -simulate=D,N
    sys.argv[1:] = [a.replace("-simulate:", "-simulate=", 1) if a.startswith("-simulate:") else a
                    for a in sys.argv[1:]]
    p.add_argument("-properties", action="store_true", help="also print each device's properties")
    p.add_argument("-extra", action="store_true", help="accepted: htcd reports no extra properties")
    p.add_argument("-nested", action="store_true", help="properties as nested ClassAds (the default)")
    p.add_argument("-not-nested", dest="not_nested", action="store_true",
                   help="properties as attributes prefixed with CUDA (common) or the device id")
    p.add_argument("-tag", metavar="NAME", help="print Detected<NAME> instead of DetectedGPUs")
    p.add_argument("-by-index", dest="by_index", action="store_true", help="name devices CUDA<index>")
    p.add_argument("-short-uuid", dest="short_uuid", action="store_true",
                   help="name devices GPU-<first 8 hex digits of the UUID> (the default)")
    p.add_argument("-uuid", action="store_true", help="name devices by their whole UUID")
    p.add_argument("-cuda", action="store_true", help="detect NVIDIA devices only (what htcd does anyway)")
    p.add_argument("-simulate", metavar="D,N", help="report N simulated devices of type D, detecting nothing")
    p.add_argument("-config", action="store_true", help="print configuration syntax (and NUM_DETECTED_GPUs)")
    p.add_argument("-cron", action="store_true", help="leave out DetectedGPUs (for STARTD_CRON)")
    p.add_argument("-verbose", action="store_true", help="say on stderr how devices were found")
    p.add_argument("-dirty-environment", dest="dirty", action="store_true",
                   help="accepted: nvidia-smi lists every device whatever CUDA_VISIBLE_DEVICES says")
    for option in REFUSED:
        p.add_argument(option, dest=f"refused_{option[1:].replace('-', '_')}", nargs="?", const=True,
                       help=argparse.SUPPRESS)
    return run


def run(args: argparse.Namespace) -> int:
    for option, why in REFUSED.items():
        if getattr(args, f"refused_{option[1:].replace('-', '_')}", None) is not None:
            raise UserError(f"{option} is not supported: {why}")
    if args.simulate is not None:
        gpus = simulated(args.simulate)
        how = "simulated (-simulate)"
    else:
        gpus = nvidia_smi()
        how = "nvidia-smi" if shutil.which("nvidia-smi") else "no nvidia-smi on the PATH: no GPUs"
    if args.verbose:
        print(f"gpu_discovery: {len(gpus)} device(s), {how}", file=sys.stderr)
    for line in render(gpus, args):
        print(line)
    return 0
