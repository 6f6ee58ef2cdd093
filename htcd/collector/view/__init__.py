"""The pool view (HTCondor's CondorView): a collector with KEEP_POOL_HISTORY samples its ads every
POOL_HISTORY_SAMPLING_INTERVAL (``sampler``), keeps the samples in one SQLite file with rollups
(``store``), and serves them as JSON on its HTTP endpoint (``api``); ``history`` ties them to the
daemon's loop.  See docs/view.md.
"""
