executable = /bin/echo
output = job_dagman_pre_skip-B_A.out
error = job_dagman_pre_skip-B_A.err
arguments = OK done with A
universe = scheduler
queue
