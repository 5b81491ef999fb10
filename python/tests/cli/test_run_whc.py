"""--whc-high end to end with Cyclone DDS: a throughput ratio, so the test runs
apart (marker e2e, not side_by_side): two throughput points side by side with
other measurements would measure their contention, not the history cache."""

import pytest

from cli.test_run_e2e_dds import check_run, mwperf, require_dds, run_once  # the module's own helpers

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_packet_leaves_loopback", "no_shm_leftovers")]


def test_cyclone_writer_history_cache_high_water_mark(tmp_path_factory):
    """--whc-high (one row of the agent's option table, honoured by Cyclone's
    Internal/Watermarks/WhcHigh): a reliable writer whose history cache holds
    one 32 KiB message waits for every acknowledgment, so it sends far less
    than with a 16 MiB one; the record, its label and CSV say which."""
    run = run_once(tmp_path_factory, "whc", "--mw", "cyclonedds", "--mode", "throughput", "--size", "32k",
                   "--duration", "1s", "--warmup", "200ms", "--reliability", "reliable", "--history", "keep-all",
                   "--latency-count", "0", "--whc-high", "32k,16MiB")
    check_run(run, 2)
    small, large = run["records"]
    assert (small["qos"]["whc_high"], large["qos"]["whc_high"]) == (32 << 10, 16 << 20)
    assert "<WhcHigh>32768B</WhcHigh>" in small["adapter"]["config"]["xml"]
    assert small["lost"] == large["lost"] == 0
    assert small["samples_per_s"] < 0.5 * large["samples_per_s"], (small["samples_per_s"], large["samples_per_s"])
    out = run["done"].stdout
    assert "whc-high 32KiB" in out and "whc-high 16MiB" in out
    refused = mwperf("run", "--agent", require_dds(), "--mw", "fastdds", "--whc-high", "1MiB")
    assert refused.returncode == 2
    assert refused.stderr == "mwperf: error: --whc-high 1MiB: not supported by fastdds (no writer history cache limit)\n"
