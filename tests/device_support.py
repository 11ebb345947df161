"""Whether this machine has an NVIDIA GPU, found without asking tessera (the driver's /proc entries
or device nodes). GPU tests use it to tell "no GPU here" (skip, saying so) from "the CUDA backend
failed on a GPU machine" (a failure), and CPU-only tests to require a clear error without one."""

from __future__ import annotations

from pathlib import Path


def nvidia_gpu_present() -> bool:
    gpus = Path("/proc/driver/nvidia/gpus")
    return (gpus.is_dir() and any(gpus.iterdir())) or Path("/dev/nvidia0").exists()
