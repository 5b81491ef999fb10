import io

from conftest import write_script
from mwperf.cli.main import main
from mwperf.cli.doctor import (
    advice_busy_poll, advice_busy_read, advice_governor, advice_rmem_max, doctor, wakeup_advice,
)


def test_doctor_with_fake_agent(fake_agent):
    out = io.StringIO()
    assert doctor(out, str(fake_agent), cpu_count=2) == 0
    text = out.getvalue()
    assert f"agent: {fake_agent} (--agent)" in text
    assert "version 9.9.9-fake" in text
    assert "udp" in text and "max 65507 B" in text and "max 16777216 B" in text
    assert "supports: reliability best-effort; transports udp\n" in text
    assert ("supports: reliability reliable,best-effort; batch, durability, history, keyed, nic, rtps, whc; "
            "receive listener,waitset; transports udp\n") in text
    assert "same-core  (0,0): 2.0 us / 4.0 us" in text
    assert "cross-core (0,1): 20.0 us / 40.0 us" in text
    assert "pin both sides (--cpu) and report placement; same-core numbers are not comparable" in text
    for key in ("net.core.busy_read", "net.core.busy_poll", "net.core.rmem_max", "cpu governor"):
        assert key in text
    assert text.rstrip().endswith("agent: ok")


def test_doctor_one_cpu(fake_agent):
    out = io.StringIO()
    assert doctor(out, str(fake_agent), cpu_count=1) == 0
    assert "cross-core" not in out.getvalue().split("system:")[0].replace("one CPU only", "")
    assert "one CPU only" in out.getvalue()


def test_doctor_broken_agent(tmp_path):
    broken = write_script(tmp_path / "broken", "#!/bin/sh\necho 'cannot load libfoo.so' >&2\nexit 127\n")
    out = io.StringIO()
    assert doctor(out, str(broken)) == 1
    assert "FAILED" in out.getvalue() and "cannot load libfoo.so" in out.getvalue()
    assert out.getvalue().rstrip().endswith("agent: NOT usable")


def test_doctor_missing_agent(tmp_path, capsys):
    assert main(["doctor", "--agent", str(tmp_path / "nope")]) == 1
    assert "NOT FOUND" in capsys.readouterr().out


def test_advice():
    assert "sysctl -w net.core.busy_read=50" in advice_busy_read(0)
    assert "interrupt wake-up" in advice_busy_read(0)
    assert "report it" in advice_busy_read(50)
    assert "busy_poll=50" in advice_busy_poll(0)
    assert "large UDP/DDS messages may be dropped" in advice_rmem_max(212992)
    assert "sysctl -w net.core.rmem_max=8388608" in advice_rmem_max(212992)
    assert advice_rmem_max(8388608).startswith("ok")
    assert advice_governor(None) == "not exposed: VM: frequency managed by the host"
    assert "performance" in advice_governor("powersave")
    assert advice_governor("performance") == "ok"
    assert wakeup_advice(2000, 3000) is None
    assert "pin both sides" in wakeup_advice(2000, 20000)
    assert wakeup_advice(None, 20000) is None
