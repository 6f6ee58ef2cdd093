"""The starter: runs one job in a fresh sandbox and cleans up after it.

As HTCondor's condor_starter serves both the startd (jobs on an execute point) and the schedd
(``universe = local``), this package is shared by both daemons and imports neither.
"""
