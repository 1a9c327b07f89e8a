"""Privacy criteria: the engines (classic baselines, worst-case background knowledge, the
privacy skyline) and one class per criterion (:mod:`.base`, :mod:`.models`) that the
registry (:mod:`.registry`), the front ends and the anonymizers read (docs/criteria.md)."""
