"""What to measure, typed and validated once: the run options and the test
points they expand to (``options``), their one validation (``validate``),
QoS (``qos``), where the two sides run (``where``), and sweep plans
(``sweep_plan``). Nothing here runs anything."""
