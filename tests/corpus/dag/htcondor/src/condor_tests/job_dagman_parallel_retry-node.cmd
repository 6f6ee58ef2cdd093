universe = vanilla
executable = job_dagman_parallel_retry-node.pl
arguments = 1
queue
arguments = 1000
queue
