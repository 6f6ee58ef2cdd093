"""The starter: runs one job in a fresh sandbox and cleans up after it.

It runs as a task inside the startd, the one daemon that imports it.  What the schedd's local
universe shares with it -- a job ad's argv, environment and kill signal -- is in
:mod:`htcd.jobenv`, in the runtime layer; the starter imports no daemon.
"""
