"""The example universe runs a job on a real personal pool whose slots, by the plugin's policy,
run nothing else."""

import os

from htcd.testing import PersonalPool

JOB = "#!/bin/sh\necho \"$EXAMPLE_UNIVERSE\"\n"


def test_example_universe_runs_jobs_and_its_policy_keeps_others_out(personal_pool: PersonalPool) -> None:
    pool = personal_pool
    script = pool.jobs_dir / "job.sh"
    script.write_text(JOB)
    os.chmod(script, 0o755)
    slots = pool.htcd("status", "-af", "StarterAbilityList", "ExampleUniverseVersion").stdout.splitlines()
    assert slots and all(line.split() == ["example,vanilla", "0.1.0"] for line in slots), slots

    vanilla = pool.submit("executable = job.sh\noutput = v.out\nqueue\n", "v.sub")
    example = pool.submit("universe = example\nexecutable = job.sh\noutput = e.out\nqueue\n", "e.sub")
    ad = pool.wait_for_job(example)
    assert ad["ExitCode"] == "0"
    assert (pool.jobs_dir / "e.out").read_text() == "hi from the example universe\n"

    # the policy template's START keeps the vanilla job idle on these slots
    assert pool.htcd("config_val", "START").stdout.strip() == '(TARGET.PluginUniverse =?= "example") && (True)'
    assert pool.job_attrs(f"{vanilla}.0", "JobStatus") == ["1"]
    analysis = pool.htcd("q", "-better-analyze", f"{vanilla}.0").stdout
    assert "2 reject your job because of their own requirements" in analysis, analysis
    assert not (pool.jobs_dir / "v.out").exists()
