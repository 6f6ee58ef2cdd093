universe = scheduler
executable = ./job_dagman_rm-wait.pl
arguments = "job_dagman_rm-NodeD-job"
log = job_dagman_rm-nodeD.log
output = job_dagman_rm-nodeD.out
error = job_dagman_rm-nodeD.err
notification = NEVER
queue
