"""``python -m telic_packets.conformance [--json]``."""

from __future__ import annotations

import sys

from telic_packets.conformance import main

sys.exit(main())
