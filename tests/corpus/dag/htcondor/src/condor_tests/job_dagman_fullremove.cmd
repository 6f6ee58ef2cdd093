Executable           	= ./job_dagman_fullremove.pl
Universe             	= vanilla
log = job_dagman_fullremove.log
Notification         	= NEVER
getenv = CONDOR*,PATH
output = job_dagman_fullremove.out
error = job_dagman_fullremove.err
Queue

