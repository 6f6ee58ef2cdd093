"""The defrag daemon (HTCondor's condor_defrag): drains fragmented partitionable-slot machines
so that jobs needing a whole machine get one."""
