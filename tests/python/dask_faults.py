"""Fault injection for the Dask tests, kept out of the shipped package: a worker plugin that makes
the first level-0 region write, once a file "arm" exists in FAULT_DIR, store its shards from wrong
data and then kill its worker process. Dask reruns the task elsewhere, and that run must leave the
array exact. The plugin is sent to the workers by value (they cannot import the tests)."""

from __future__ import annotations

import os

import numpy as np
from distributed.diagnostics.plugin import WorkerPlugin


class DieOnceAfterWritingGarbage(WorkerPlugin):
    name = "tessera-test-die-once"

    def __init__(self, fault_dir: str):
        self.fault_dir = fault_dir

    def setup(self, worker):
        import tessera._tessera as native

        original = getattr(native, "_tessera_test_original_shared_write", native._shared_write)
        native._tessera_test_original_shared_write = original
        fault_dir = self.fault_dir

        def shared_write(location, kwargs, level, origin, data, *rest):
            if level == 0 and os.path.exists(os.path.join(fault_dir, "arm")):
                try:
                    os.mkdir(os.path.join(fault_dir, "fired"))  # once, whichever worker gets here first
                except FileExistsError:
                    pass
                else:
                    original(location, kwargs, 0, origin, np.full(data.shape, 7, dtype=data.dtype))
                    os._exit(13)
            return original(location, kwargs, level, origin, data, *rest)

        native._shared_write = shared_write
