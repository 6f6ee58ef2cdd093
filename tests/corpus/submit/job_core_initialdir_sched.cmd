universe = scheduler
executable =  x_sleep.pl
initialdir = initd_sched
log = job_core_initialdir_sched.log
output = job_core_initialdir_sched.out
error = job_core_initialdir_sched.err
arguments = 5
getenv=true
Notification = NEVER
queue


