"""``python -m telic``: the ``telic`` command line."""

from __future__ import annotations

import sys

from telic.cli import main

if __name__ == "__main__":
    sys.exit(main())
