-- Reserved: this schema number belongs to the run-topology columns (topology, escalation_count),
-- which another change adds. This placeholder keeps the numbering gap-free until that change
-- lands; it must be deleted when the real migration of this number is merged.

SELECT 1;
