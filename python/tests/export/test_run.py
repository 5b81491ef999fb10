"""What a run shows of its records besides results.jsonl (mwperf.export.run): the adaptive stop's saving."""

from conftest import typed
from mwperf.export.run import adaptive_saving


def test_the_adaptive_summary_says_what_the_others_would_need():
    def point(converged, needed=None, note=None):
        return typed({"duration_s": 10.0, "elapsed_s": 2.0 if converged else 10.0,
                      "adaptive": {"converged_after_s": 2.0 if converged else None, "needed_s": needed,
                                   "needed_note": note}})
    line = adaptive_saving([point(True), point(False, 40.0), point(False, 100.0), point(False, 700.0),
                            point(False, note="p99_ci: correlation too long for the run")])
    assert line.startswith("adaptive duration: 1/5 points reached their precision; measured 42.0 s instead of 50.0 s")
    assert "the other 4 would need ~100 s (median of 3), up to 12 min" in line
    assert line.endswith("; 1 without an interval to extrapolate from (see adaptive.needed_note)")
    assert adaptive_saving([typed({"duration_s": 1.0, "elapsed_s": 1.0, "adaptive": None})]) is None
