"""``python -m telic_packets.schema --write|--check``."""

from __future__ import annotations

import sys

from telic_packets.schema import main

sys.exit(main())
