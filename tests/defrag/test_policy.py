"""The defrag policy without a pool: the draining rate and its carry-over, the knobs with
HTCondor's defaults, the refusal of a knob htcd cannot honour, and the state kept across restarts."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcd.classad import ClassAd, parse_old_ad
from htcd.config import ConfigError, load
from htcd.defrag.daemon import machine_of
from htcd.defrag.policy import load as load_policy
from htcd.defrag.rate import DAY, HOUR, Rate, prorate
from htcd.defrag.stats import DefragStats


def policy_of(tmp_path: Path, text: str = "", local_name: str | None = None):
    top = tmp_path / "condor_config"
    top.write_text(f"LOCK = {tmp_path}/lock\n{text}")
    cfg = load("DEFRAG", local_name, env={"CONDOR_CONFIG": str(top), "HOME": str(tmp_path)})
    return load_policy(cfg, local_name, "host.example")


def test_rate_splits_into_per_poll_per_hour_and_per_day() -> None:
    assert Rate.of(3600, 1) == Rate(3600, 1, 0, 0)
    assert Rate.of(1.0, 600) == Rate(1.0, 0, 1, 0), "1/hour every 10 minutes: one at each new hour"
    assert Rate.of(0.5, 600) == Rate(0.5, 0, 0, 12), "half an hour's machine: twelve a day"
    assert Rate.of(2.5, 3600) == Rate(2.5, 2, 0, 12)
    assert Rate.of(10, 7200).per_hour == 0, "HTCondor drains nothing with DEFRAG_INTERVAL above an hour"


def test_the_carry_over_is_added_at_each_new_hour_and_day_prorated() -> None:
    rate = Rate.of(1.0, 600)
    hour = 1000 * HOUR
    assert rate.to_drain(hour + 100, hour + 700, 600)[0] == 0, "same hour: no carry-over"
    assert rate.to_drain(hour - 300, hour + 300, 600)[0] == 1, "a new hour: its machine"
    assert rate.to_drain(0, hour + 300, 600)[0] == 0, "the first poll adds nothing"
    day = 100 * DAY
    daily = Rate.of(0.5, 600)
    assert daily.to_drain(day - 600, day + 1800, 600)[0] == 12
    late = daily.to_drain(day - 600, day + 18 * HOUR, 600)
    assert late[0] == 3 and late[1] == pytest.approx(12 * (6 * HOUR + 600) / DAY), "a quarter of the day left"


def test_prorate_never_exceeds_n_nor_flips_its_sign() -> None:
    assert prorate(4, 0, HOUR, 600) == (4, pytest.approx(4 * (1 + 600 / HOUR)))
    assert prorate(4, HOUR // 2, HOUR, 0)[0] == 2
    assert prorate(-2, 0, HOUR, 600)[0] == -2


def test_knobs_have_htcondors_defaults(tmp_path: Path) -> None:
    p = policy_of(tmp_path)
    assert (p.interval, p.update_interval, p.max_draining, p.max_whole) == (600, 300, -1, -1)
    assert p.rate.per_hour == 0 and p.schedule == "graceful" and p.start_expr == "FALSE"
    assert p.whole_machine == "Cpus == TotalSlotCpus" and p.cancel_requirements == "Cpus == TotalSlotCpus"
    assert p.rank_text == "-ExpectedMachineGracefulDrainingBadput" and p.requirements is None
    assert p.name == "host.example" and p.drain_reason == "Defrag host.example"
    assert p.state_file == f"{tmp_path}/lock/defrag_state"
    assert p.candidate_constraint == "PartitionableSlot && Offline =!= true && Draining =!= true"
    assert p.draining_constraint == ('PartitionableSlot && Offline =!= true && Draining && '
                                     '(DrainReason is undefined || DrainReason == "Defrag host.example")')


def test_knobs_set(tmp_path: Path) -> None:
    p = policy_of(tmp_path, "DEFRAG_NAME = pool2\nDEFRAG_DRAINING_SCHEDULE = fast\nDEFRAG_REQUIREMENTS = Cpus < 2\n"
                  "DEFRAG_CANCEL_REQUIREMENTS =\nDEFRAG_DRAINING_MACHINES_PER_HOUR = 1.5\n"
                  "DEFRAG_STATE_FILE = /s/state\n", local_name="D2")
    assert p.name == "pool2@host.example" and p.schedule == "fast" and p.state_file == "/s/state"
    assert p.candidate_constraint.endswith("&& Draining =!= true && (Cpus < 2)")
    assert p.cancel_constraint is None and p.rate.per_hour == 1.5
    assert policy_of(tmp_path, "DEFRAG_SCHEDULE = Quick\n").schedule == "quick"
    assert policy_of(tmp_path, local_name="D3").state_file == f"{tmp_path}/lock/D3_state"


@pytest.mark.parametrize(("text", "said"), [
    ("DEFRAG_SCHEDULE = slowly\n", "DEFRAG_SCHEDULE = slowly: not a draining schedule (one of graceful, quick, fast)"),
    ("DEFRAG_RANK = 1 +\n", "DEFRAG_RANK = 1 +: not a valid ClassAd expression"),
    ("DEFRAG_DRAINING_MACHINES_PER_HOUR = -1\n", "DEFRAG_DRAINING_MACHINES_PER_HOUR = -1: a rate cannot be negative"),
    ("DEFRAG_INTERVAL = often\n", "DEFRAG_INTERVAL = often: not an integer"),
    ("DEFRAG_UPDATE_INTERVAL = 0\n", "DEFRAG_UPDATE_INTERVAL = 0: must be a positive number of seconds"),
])
def test_a_knob_htcd_cannot_honour_is_refused_with_its_file_and_line(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(ConfigError) as err:
        policy_of(tmp_path, text)
    assert str(err.value).startswith(f"{tmp_path}/condor_config:2: {said}")


def test_machine_of_a_slot() -> None:
    assert machine_of("slot1@host") == machine_of("slot1_2@host") == "host"
    assert machine_of("slot1@name@host") == "host" and machine_of("host") == "host"


def test_stats_count_arrivals_and_survive_the_state_file() -> None:
    s = DefragStats()
    assert s.observe({"a"}, set(), 100) == []
    s.drain_sent("slot1@a", "quick", True, 100)
    s.drain_sent("slot1@b", "quick", False, 101)
    assert s.observe(set(), {"b"}, 110) == ["a", "b"], "a finished draining, b became whole"
    s.cancel_sent("slot1@b", 111)
    ad = ClassAd()
    s.publish(ad, 120)
    values = {name: ad.get_value(name) for name in ("DrainSuccesses", "DrainFailures", "DrainedMachines",
                                                     "RecentDrainSuccesses", "MachinesDrainingPeak", "WholeMachines")}
    assert values == {"DrainSuccesses": 1, "DrainFailures": 1, "DrainedMachines": 2, "RecentDrainSuccesses": 1,
                      "MachinesDrainingPeak": 1, "WholeMachines": 1}
    state = ClassAd()
    s.save(state)
    again = DefragStats()
    again.restore(parse_old_ad(state.to_old()))
    assert again.counters == s.counters and again.prev_whole == {"b"}
    assert [(c.who, c.what) for c in again.drains] == [("slot1@a", "quick"), ("slot1@b", "quick")]
    assert [c.who for c in again.cancels] == ["slot1@b"]
    published = ClassAd()
    again.publish(published, 130)
    assert published.get_value("RecentDrainsList")[0].get_value("when") == 100


def test_the_limits_stop_a_poll_as_htcondors_do(tmp_path: Path) -> None:
    p = policy_of(tmp_path, "DEFRAG_DRAINING_MACHINES_PER_HOUR = 60\nDEFRAG_INTERVAL = 60\n"
                  "DEFRAG_MAX_CONCURRENT_DRAINING = 2\nDEFRAG_MAX_WHOLE_MACHINES = 1\n")
    assert p.rate.per_poll == 1
    assert p.reason_not_to_drain(1, 1.0, {"a"}, set()) is None
    assert p.reason_not_to_drain(0, 0.25, set(), set()) == "number to drain in next 60s is calculated to be 0.250"
    assert p.reason_not_to_drain(1, 1.0, {"a", "b"}, set()) == \
        "DEFRAG_MAX_CONCURRENT_DRAINING=2 and there are 2 draining machines"
    assert p.reason_not_to_drain(1, 1.0, None, set()) == \
        "DEFRAG_MAX_CONCURRENT_DRAINING=2 and the query to count draining machines failed"
    assert p.reason_not_to_drain(1, 1.0, set(), {"c"}) == "DEFRAG_MAX_WHOLE_MACHINES=1 and there are 1 whole machines"
    assert p.reason_not_to_drain(1, 1.0, set(), None) == "the query to find whole machines failed"
    off = policy_of(tmp_path, "DEFRAG_DRAINING_MACHINES_PER_HOUR = 60\nDEFRAG_MAX_CONCURRENT_DRAINING = 0\n")
    assert off.reason_not_to_drain(1, 1.0, set(), set()) == "DEFRAG_MAX_CONCURRENT_DRAINING=0"
    assert policy_of(tmp_path).reason_not_to_drain(1, 1.0, set(), set()) == \
        "DEFRAG_DRAINING_MACHINES_PER_HOUR=0.000000"


def test_the_daemon_refuses_a_bad_knob_at_start_without_a_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    top = tmp_path / "condor_config"
    top.write_text(f"LOCAL_DIR = {tmp_path}\nDEFRAG_WHOLE_MACHINE_EXPR = Cpus ==\n")
    env = {"HTCD_CONFIG": str(top), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-m", "htcd", "defrag", "-f"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"{top}:2: DEFRAG_WHOLE_MACHINE_EXPR = Cpus ==: not a valid ClassAd expression" in proc.stderr
