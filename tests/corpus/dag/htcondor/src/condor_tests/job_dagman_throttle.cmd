Executable           	= ./x_dagman_node-ret.pl
Universe             	= vanilla
log = job_dagman_throttle.log
Notification         	= NEVER
getenv = CONDOR*,PATH
output = job_dagman_throttle.out
error = job_dagman_throttle.err
Queue

