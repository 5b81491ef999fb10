"""Measuring: the agents (``agent``), one point (``point``) where its
``placement`` puts it with the ``services`` it needs, the run loop
(``runner``), and around them clocks, clean-up, progress and provenance."""
