"""Reading runs against each other: ``compare`` (statistics and CI gates)."""
