import json

from mwperf.execute import provenance
from conftest import PROVENANCE_KEYS
from mwperf.execute.provenance import SYSCTLS, collect, governor, read_sysctl


def test_collect_has_every_key(fake_agent):
    doc = collect(run_id="r", argv=["mwperf", "run"], options={"mws": ["udp"]}, agent=str(fake_agent),
                  started="2025-01-01T00:00:00.000Z")
    for key in PROVENANCE_KEYS:
        assert key in doc, key
    assert doc["status"] == "running"
    assert set(doc["sysctl"]) == set(SYSCTLS)
    assert doc["agent"]["version"] == "9.9.9-fake"
    assert doc["agent"]["build_type"] == "Release"
    assert [a["name"] for a in doc["adapters"]] == ["udp", "tcp", "dds"]
    dds = doc["adapters"][2]
    assert dds["version"] == "fake 0.1" and "keyed" in dds["capabilities"]
    assert dds["capabilities"]["transport"] == ["udp"]
    assert doc["agent"]["missing_adapters"] == []
    assert doc["vcpus"] >= 1
    assert doc["python"].count(".") == 2
    json.dumps(doc)


def test_run_json_keeps_no_store_password():
    """Issue 37: the command line in run.json (shown in the report) held --db's password."""
    argv = ["mwperf", "run", "--db", "postgresql://qa:S3cretPW@db/x?password=S3cretPW",
            "--db=host=db password=S3cretPW dbname=x", "--out", "password=S3cretPW"]
    doc = collect(run_id="r", argv=argv, options={}, agent=None, started="x")
    assert doc["command"] == ["mwperf", "run", "--db", "postgresql://qa@db/x", "--db=host=db dbname=x", "--out",
                              "password=S3cretPW"]  # only a store's text is a store's


def test_run_json_keeps_no_password_of_any_url_form():
    """Issue 45.5: a URL of another kind (refused, but kept in run.json as given) kept its password: mysql://,
    SQLAlchemy's postgresql+psycopg://, a one-slash postgresql:/, and a URL after an abbreviated option."""
    argv = ["mwperf", "run", "--db", "mysql://qa:S3cretPW@db/x", "--db=postgresql+psycopg://qa:S3cretPW@db/x",
            "--db", "postgresql:/qa:S3cretPW@db/x", "--d", "postgresql://qa:S3cretPW@db/x?sslmode=x&password=S3cretPW"]
    doc = collect(run_id="r", argv=argv, options={}, agent=None, started="x")
    assert "S3cretPW" not in json.dumps(doc)
    assert doc["command"] == ["mwperf", "run", "--db", "mysql://qa@db/x", "--db=postgresql+psycopg://qa@db/x",
                              "--db", "postgresql:/qa@db/x", "--d", "postgresql://qa@db/x?sslmode=x"]


def test_collect_without_agent():
    doc = collect(run_id="r", argv=[], options={}, agent=None, started="x")
    assert doc["agent"]["error"] == "agent not found"
    assert doc["adapters"] == []


def test_read_sysctl(tmp_path):
    (tmp_path / "net" / "core").mkdir(parents=True)
    (tmp_path / "net" / "core" / "busy_read").write_text("50\n")
    assert read_sysctl("net.core.busy_read", root=tmp_path) == 50
    assert read_sysctl("net.core.busy_poll", root=tmp_path) is None


def test_governor(tmp_path):
    assert governor(tmp_path / "missing") == (None, "not exposed (VM)")
    (tmp_path / "g").write_text("performance\n")
    assert governor(tmp_path / "g") == ("performance", None)


def test_cpu_model(tmp_path):
    (tmp_path / "cpuinfo").write_text("processor\t: 0\nmodel name\t: Test CPU @ 3GHz\n")
    assert provenance.cpu_model(tmp_path / "cpuinfo") == "Test CPU @ 3GHz"


def test_git_info_outside_a_checkout(tmp_path):
    assert provenance.git_info(tmp_path) is None
