executable           	= ./x_echostring.pl
arguments		= job_dagman_gt4727-lower-nodeF OK
universe             	= scheduler
notification         	= NEVER
getenv = CONDOR*,PATH
output			= job_dagman_gt4727-lower-nodeF.out
error			= job_dagman_gt4727-lower-nodeF.err
queue

