"""The `tessera` command: the C++ command-line tool shipped inside this package (tessera/_bin/tessera).

pip installs this module's main() as the console script; it replaces the Python process with the
tool (os.execv), so arguments, standard streams, exit codes and signals are the tool's own.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_TOOL = Path(__file__).resolve().parent / "_bin" / "tessera"


def main() -> None:
    if not os.access(_TOOL, os.X_OK):
        sys.exit(f"tessera: error: not found: the command-line tool {_TOOL} is not in this installation "
                 "(a build without TESSERA_BUILD_CLI); reinstall the tessera wheel")
    os.execv(_TOOL, ["tessera", *sys.argv[1:]])


if __name__ == "__main__":
    main()
