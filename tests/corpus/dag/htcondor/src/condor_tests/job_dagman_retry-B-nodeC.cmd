executable		= job_dagman_retry-B-nodeC.pl
arguments		=
universe		= scheduler
notification	= NEVER
output			= job_dagman_retry-B-nodeC.out
error			= job_dagman_retry-B-nodeC.err
log				= job_dagman_retry-B-nodeC.log
queue
