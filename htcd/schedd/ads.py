"""What the schedd publishes: its Scheduler ad (the queue's totals and its limits) and one
Submitter ad per submitter with jobs (per accounting group, too), which the negotiator reads to
know whom to negotiate with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcd.classad import ClassAd
from htcd.schedd.autocluster import group_submitters
from htcd.schedd.jobs import HELD, IDLE, REMOVED, RUNNING

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd


class ScheddAds:
    def __init__(self, schedd: Schedd) -> None:
        self.schedd = schedd
        self._owners_seen: set[str] = set()  # submitters of the last update: a gone one gets a last, empty ad

    def scheduler_ad(self) -> ClassAd:
        schedd = self.schedd
        counts = schedd.counters.total
        ad = schedd.base_ad("Scheduler")
        ad["ScheddIpAddr"] = str(schedd.server.address)
        ad["TotalIdleJobs"], ad["TotalRunningJobs"] = counts[IDLE], counts[RUNNING]
        ad["TotalHeldJobs"], ad["TotalRemovedJobs"] = counts[HELD], counts[REMOVED]
        ad["TotalJobAds"] = len(schedd.jobs)
        for k, v in schedd.local.ad_attributes().items():
            ad[k] = v
        ad["NumUsers"] = len(schedd.counters.by_owner)
        ad["MaxJobsRunning"] = schedd.knob_int("MAX_JOBS_RUNNING")
        ad["MaxJobsSubmitted"] = schedd.knob_int("MAX_JOBS_SUBMITTED", 2**31 - 1)
        ad["MaxJobsPerOwner"] = schedd.knob_int("MAX_JOBS_PER_OWNER", 100000)
        ad["MaxJobsPerSubmission"] = schedd.knob_int("MAX_JOBS_PER_SUBMISSION", 2**31 - 1)
        ad["TotalSubmitters"] = len(schedd.counters.by_owner)
        if (schedd.config.get("SCHEDD_COLLECT_STATS_BY_Owner") or "false").lower() not in ("false", "0"):
            for owner, c in schedd.counters.by_owner.items():
                if owner.isidentifier():
                    ad[f"Owner_{owner}_JobsIdle"], ad[f"Owner_{owner}_JobsRunning"] = c[IDLE], c[RUNNING]
                    ad[f"Owner_{owner}_JobsHeld"] = c[HELD]
        return ad

    def submitter_ads(self) -> list[ClassAd]:
        schedd = self.schedd
        owners = set(schedd.counters.by_owner)
        ads = []
        grouped = group_submitters(schedd.clusters.values(), schedd.jobs.values(),
                                   schedd.uid_domain)  # accounting groups negotiate as group.user@domain
        for gname, (gowner, gidle, grunning) in sorted(grouped.items()):
            ad = schedd.base_ad("Submitter")
            ad["Name"], ad["Owner"], ad["ScheddName"] = gname, gowner, schedd.name
            ad["ScheddIpAddr"] = str(schedd.server.address)
            ad["IdleJobs"], ad["RunningJobs"], ad["HeldJobs"] = gidle, grunning, 0
            ads.append(ad)
        for owner in sorted(owners | self._owners_seen):
            c = schedd.counters.by_owner.get(owner)
            ad = schedd.base_ad("Submitter")
            ad["Name"] = f"{owner}@{schedd.uid_domain}"
            ad["Owner"] = owner
            ad["ScheddName"] = schedd.name
            ad["ScheddIpAddr"] = str(schedd.server.address)
            ap = schedd.local.ad_attributes(owner) if schedd.local.jobs else {}  # AP jobs are not negotiated
            ad["IdleJobs"] = (c[IDLE] if c else 0) - ap.get("LocalJobsIdle", 0) - ap.get("SchedulerJobsIdle", 0) \
                - sum(g[1] for g in grouped.values() if g[0] == owner)
            ad["RunningJobs"] = (c[RUNNING] if c else 0) - ap.get("LocalJobsRunning", 0) \
                - ap.get("SchedulerJobsRunning", 0) - sum(g[2] for g in grouped.values() if g[0] == owner)
            for k, v in ap.items():
                ad[k] = v
            ad["HeldJobs"] = c[HELD] if c else 0
            ads.append(ad)
        self._owners_seen = owners
        return ads
