universe   = vanilla
executable = x_sleep.pl
log = job_core_hold_van.log
output = job_core_hold_van.out
error = job_core_hold_van.err
hold	= True
Notification = NEVER
arguments  = 3
queue

