"""The runtime: devices, the planner and placement, residency of data, evaluation plans
(``replay``), calibration, eager small-array evaluation, profiling and ``explain``."""
